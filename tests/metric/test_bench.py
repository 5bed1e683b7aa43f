"""The benchmark command line: --help works and a tiny table prints our ratios next to the paper's."""
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from solvers.datasets import REAL
from solvers.metric import bench


def test_help_lists_the_protocols():
    out = subprocess.run([sys.executable, "-m", "solvers.bench", "metric", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--table" in out and "--backend" in out


def test_tiny_table_runs(capsys):
    if not REAL["iris.scale"].available():
        pytest.skip("iris.scale (the paper's LIBSVM iris) is not in the data directory")
    assert bench.main(["--datasets", "iris", "--max-samples", "18", "--rho", "0.6", "--max-steps", "6", "--clock", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "Naive" in out and "RRPB+PGB" in out and "5.33" in out and "cpu seconds" in out


def test_every_lambda_runs_the_papers_path(monkeypatch):
    """``--every-lambda`` asks the path for PGB after the ranges at every λ (the paper's RRPB+PGB row)."""
    seen = []

    def path(problem, **options):
        seen.append(options)
        return SimpleNamespace(table=pd.DataFrame({"time": [0.0, 1.0], "screen_time": [0.0, 0.5]}), solutions=[])
    monkeypatch.setattr(bench, "regularization_path", path)
    for argv, paid in ((["--every-lambda"], False), ([], True)):
        bench.run_method(None, "RRPB+PGB", bench.parse(argv))
        assert seen[-1]["paid_screening"] is paid

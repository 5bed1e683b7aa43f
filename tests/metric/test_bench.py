"""The benchmark command line: --help works and a tiny table prints our ratios next to the paper's."""
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from solvers.core import InputError
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


def test_rows_take_turns_and_each_row_keeps_its_median_time(monkeypatch):
    args = bench.parse(["--datasets", "wine", "--methods", "RRPB,RRPB+PGB", "--repeats", "3", "--clock", "cpu"])
    order, times = [], {"Naive": [9.0, 3.0, 6.0], "RRPB": [1.0, 2.0, 30.0], "RRPB+PGB": [4.0, 2.0, 3.0]}
    solutions = [np.eye(2), 2 * np.eye(2)]

    def fake_run(problem, label, args):
        order.append(label)
        return {"time": times[label][sum(x == label for x in order) - 1], "screen": 0.5, "lambdas": 2,
                "solutions": solutions}

    monkeypatch.setattr(bench, "trial_problem", lambda ds, name, trial, args: (None, {"n": 1}))
    monkeypatch.setattr(bench, "run_method", fake_run)
    sizes, rows = bench.run_trial(None, "wine", 0, args)
    assert order == ["Naive", "RRPB", "RRPB+PGB", "RRPB", "RRPB+PGB", "Naive", "RRPB+PGB", "Naive", "RRPB"]
    assert rows["Naive"]["time"] == 6.0 and rows["RRPB"]["time"] == 2.0 and rows["RRPB+PGB"]["time"] == 3.0
    assert rows["RRPB"]["speedup"] == 3.0 and rows["RRPB+PGB"]["speedup"] == 2.0
    assert rows["RRPB"]["rel"] == 0.0  # the solutions of the first repeat, compared with the naive path's


def test_repeats_must_be_positive():
    with pytest.raises(InputError, match="--repeats 0"):
        bench.parse(["--repeats", "0"])

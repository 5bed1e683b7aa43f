"""The benchmark command line: --help works and a tiny table prints our ratios next to the paper's."""
import subprocess
import sys

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

"""The command line: flags from Param specs, clear errors with a non-zero exit, the bench listing."""
import subprocess
import sys

import pandas as pd

from solvers.cli import main


def test_run_a_method_and_write_the_history(tmp_path, capsys):
    out = tmp_path / "h.csv"
    assert main(["foundations", "nesterov", "--problem", "quadratic", "--kappa", "100", "--tol", "1e-9",
                 "--max-iter", "2000", "--history", str(out)]) == 0
    assert "converged" in capsys.readouterr().out
    history = pd.read_csv(out)
    assert history["grad_map"].iloc[-1] <= 1e-9


def test_generator_flags(capsys):
    assert main(["foundations", "gd", "--problem", "logistic", "--generator", "blobs-2d", "--gen-n", "40",
                 "--gen-seed", "2"]) == 0
    assert "Gradient descent" in capsys.readouterr().out


def test_bad_input_exits_2_with_a_message(capsys):
    assert main(["foundations", "gd", "--step", "7"]) == 2
    assert "out of range" in capsys.readouterr().err
    assert main(["foundations", "newton"]) == 2
    assert main(["nofamily", "x"]) == 2
    assert main(["foundations", "gd", "--problem", "logistic"]) == 2  # needs data
    assert main(["foundations", "gd", "--dataset", "no-such-set"]) == 2


def test_list_and_bench_help():
    assert main(["list"]) == 0
    done = subprocess.run([sys.executable, "-m", "solvers.bench", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "families with benchmarks" in done.stdout

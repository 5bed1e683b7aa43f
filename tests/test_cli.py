"""The command line: flags from Param specs, clear errors with a non-zero exit, the bench listing."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from solvers.cli import main


def test_run_a_method_and_write_the_history(tmp_path, capsys):
    out = tmp_path / "h.csv"
    assert main(["foundations", "nesterov", "--problem", "quadratic", "--kappa", "100", "--tol", "1e-9",
                 "--max-iter", "2000", "--history", str(out)]) == 0
    assert "converged" in capsys.readouterr().out
    history = pd.read_csv(out)
    assert history["grad_map"].iloc[-1] <= 1e-9


def test_per_iteration_arrays_are_history_columns_not_a_printed_wall_of_numbers(tmp_path, capsys):
    out = tmp_path / "h.csv"
    assert main(["multitask", "apg", "--generator", "multitask-subspace", "--spectra", "true", "--max-iter", "5",
                 "--history", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "per iteration: eig_M (" in printed and "array(" not in printed
    history = pd.read_csv(out)
    eig = history.filter(regex=r"^eig_M_\d+$").to_numpy()
    assert len(history) == 6 and eig.shape[1] > 1 and history.filter(regex=r"^sv_U_\d+$").shape[1] > 1
    assert np.all(np.diff(eig, axis=1) <= 1e-12)  # largest first, one row per iteration


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


@pytest.mark.parametrize("argv", [["sparse", "pg"], ["multitask", "apg"], ["smm", "alm-sncg"], ["metric", "pg"],
                                  ["npsvc", "twsvm"], ["sparse", "pg", "--dataset", ""],
                                  ["sparse", "pg", "--generator", ""], ["foundations", "gd", "--dataset", ""]])
def test_missing_or_empty_data_option_is_a_one_line_error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("--dataset" in err or "--generator" in err)


def test_dataset_and_generator_together_are_refused(capsys):
    assert main(["foundations", "gd", "--problem", "logistic", "--dataset", "wine", "--generator", "blobs-2d"]) == 2
    assert "either --dataset or --generator" in capsys.readouterr().err


def test_unknown_option_with_a_generator_is_reported_like_any_unknown_option(capsys):
    assert main(["foundations", "gd", "--generator", "blobs-2d", "--bogus", "3"]) == 2
    err = capsys.readouterr().err
    assert "unrecognised arguments: --bogus 3" in err and "generator settings" not in err


def test_family_help_lists_its_methods(capsys):
    assert main(["sparse", "--help"]) == 0
    out = capsys.readouterr().out
    assert "apg+" in out and "grasp" in out


@pytest.mark.parametrize("where", ["dir", "missing_dir", "proc"])
def test_unwritable_history_path_is_refused_before_the_solve(where, tmp_path, capsys):
    path = {"dir": str(tmp_path), "missing_dir": str(tmp_path / "no" / "h.csv"), "proc": "/proc/h.csv"}[where]
    assert main(["foundations", "gd", "--history", path]) == 2
    captured = capsys.readouterr()
    assert "--history" in captured.err and captured.err.count("\n") == 1
    assert captured.out == ""  # refused before any work
    assert not (tmp_path / "no").exists()


def test_a_failed_history_write_is_an_error_not_a_crash(tmp_path, capsys, monkeypatch):
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pd.DataFrame, "to_csv", fail)
    assert main(["foundations", "gd", "--history", str(tmp_path / "h.csv")]) == 1
    captured = capsys.readouterr()
    assert "Gradient descent" in captured.out and "No space left" in captured.err
    assert not (tmp_path / "h.csv").exists()  # the path check leaves nothing behind


def test_list_into_a_closed_pipe_exits_quietly():
    proc = subprocess.Popen([sys.executable, "-m", "solvers", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head -0`: the reader is gone before anything is written
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err

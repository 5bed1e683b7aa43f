"""Bad input at the command line: exit status 2 and one line on stderr that says what to change, no traceback."""
import pytest

from solvers.cli import main

CASES = {
    "unknown family": (["chemistry", "gd"], "choose one of"),
    "no method named": (["sparse"], "name a method"),
    "unknown method": (["sparse", "lasso"], "choose one of"),
    "unknown dataset": (["sparse", "apg+", "--dataset", "no-such-set"], "available:"),
    "unknown generator": (["sparse", "apg+", "--generator", "no-such-generator"], "choose one of"),
    "generator of another family": (["sparse", "apg+", "--generator", "blobs-2d"], "choose one of"),
    "value out of range": (["foundations", "gd", "--step", "7"], "out of range"),
    "not a number": (["foundations", "gd", "--max-iter", "lots"], "must be a int"),
    "not a choice": (["foundations", "gd", "--problem", "cubic"], "choose"),
    "negative tolerance": (["foundations", "gd", "--tol", "-1"], "0 < tol"),
    "zero iterations": (["foundations", "gd", "--max-iter", "0"], "1 ≤ max_iter"),
    "stray argument": (["foundations", "gd", "--no-such-flag", "3"], "unrecognised"),
    "data needed": (["foundations", "gd", "--problem", "logistic"], "data"),
    "generator setting out of range": (["sparse", "apg+", "--generator", "sparse-regression", "--gen-m", "1"],
                                       "out of range"),
    "generator beyond memory": (["multitask", "apg", "--generator", "multitask-subspace", "--gen-m", "1000",
                                 "--gen-n-per-task", "100000", "--gen-d", "2000"], "budget"),
    "impossible sparsity": (["sparse", "apg+", "--s", "100", "--generator", "sparse-regression", "--gen-n", "20",
                             "--gen-m", "10", "--gen-k", "2"], "number of features"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_command_line_exits_2_with_advice(case, capsys):
    argv, advice = CASES[case]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and advice in err, err
    assert "Traceback" not in err

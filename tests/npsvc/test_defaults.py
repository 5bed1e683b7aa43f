"""K-NPSVC++ has one default iteration cap everywhere: the official code's 10 outer iterations (the page's is checked
by tests/npsvc/test_page.py, which counts the outer iterations its default run draws)."""
import pytest

from solvers import npsvc as fam
from solvers.cli import build_parser, main
from solvers.npsvc.knpsvc import OFFICIAL_MAX_ITER


def test_the_method_declares_the_official_cap_and_the_estimator_uses_it():
    assert fam.METHODS["knpsvc"].max_iter == OFFICIAL_MAX_ITER
    assert fam.default_max_iter("knpsvc") == OFFICIAL_MAX_ITER
    assert fam.KNPSVC().max_iter == OFFICIAL_MAX_ITER
    # the other methods keep the family's cap, whose meaning differs (TWSVM: QP iterations per class)
    assert fam.default_max_iter("twsvm") == fam.FAMILY_MAX_ITER


def test_solve_without_max_iter_runs_the_official_outer_iterations(blob_problem):
    rows = []

    def watch(row):  # a cap of 1000 (as before) would run on: stop it one row after the official cap
        rows.append(row)
        return len(rows) <= OFFICIAL_MAX_ITER + 1

    res = fam.solve(blob_problem, "knpsvc", tol=1e-300, callback=watch)
    assert res.status == "max_iter" and res.info["n_iter"] == OFFICIAL_MAX_ITER


def test_the_command_line_defaults_to_the_official_cap(capsys):
    help_text = " ".join(build_parser(fam, "npsvc", "knpsvc").format_help().split())
    assert f"iteration cap [1 ≤ max_iter ≤ 10000000; default {OFFICIAL_MAX_ITER}]" in help_text
    assert main(["npsvc", "knpsvc", "--dataset", "iris", "--tol", "1e-300"]) == 0
    assert f"K-NPSVC++: max_iter after {OFFICIAL_MAX_ITER} iterations" in capsys.readouterr().out


@pytest.mark.parametrize("method", ["twsvm", "lstsvm"])
def test_the_other_methods_keep_the_familys_cap_on_the_command_line(method):
    help_text = " ".join(build_parser(fam, "npsvc", method).format_help().split())
    assert f"default {fam.FAMILY_MAX_ITER}]" in help_text

"""The benchmark's command line runs end to end on tiny settings (speed itself is never asserted)."""
import pytest

from solvers import datasets
from solvers.bench.__main__ import main as bench_main
from solvers.sparse.bench import PAPER_GE, main


def test_gradcost_and_rcv1_shapes_run_small(capsys):
    assert main(["gradcost", "--m", "300", "--n", "800", "--density", "0.01", "--k", "5", "--reps", "2"]) == 0
    assert main(["rcv1", "--m", "300", "--n", "800", "--density", "0.01", "--k", "5", "--max-iter", "50"]) == 0
    out = capsys.readouterr().out
    assert "ratio (median)" in out and "time PG / method" in out


def test_tables_print_the_papers_ge_beside_ours(capsys):
    if not datasets.REAL["leukemia"].available():
        pytest.skip("leukemia is not in the data directory")
    assert main(["tables", "--datasets", "leukemia", "--losses", "ls", "--kappas", "0.01",
                 "--methods", "apg", "apg+", "--max-iter", "100"]) == 0
    out = capsys.readouterr().out
    assert "paper GE" in out and f"| {PAPER_GE[('leukemia', 'ls', 0.01)][2]} |" in out


def test_bad_flags_exit_nonzero():
    assert bench_main(["sparse", "rcv1", "--tol", "-1"]) == 2


def test_peers_comparison_prints_objectives_recovery_and_a_summary(capsys):
    assert main(["peers", "--datasets", "--n-random", "2", "--large-ls", "0", "0", "--large-logistic", "0", "0",
                 "--methods", "apg+ paper", "apg+ ours", "omp", "abess", "--max-iter", "300"]) == 0
    out = capsys.readouterr().out
    assert "## summary: recovery" in out and "supports recovered" in out and "gap to best [%]" in out


def test_setup_profile_splits_a_fit_into_parts_that_add_up_to_at_most_the_whole():
    from solvers.sparse.bench_setup import PARTS, run_setup

    class Args:
        large_ls, large_logistic, seed, tol, max_iter = (80, 300), (80, 200), 0, 1e-6, 1000

    table = run_setup(Args())
    assert len(table) == 8 and set(table["L"]) == {"paper", "backtrack"}
    parts = table[list(PARTS)].sum(axis=1)  # disjoint calls (none of the profiled functions calls another)
    assert (parts <= table["whole fit [s]"] + 1e-3).all()
    assert (table.loc[table["L"] == "backtrack", "L bound [s]"] == 0).all()
    assert (table.loc[table["L"] == "paper", "L bound [s]"] > 0).all()

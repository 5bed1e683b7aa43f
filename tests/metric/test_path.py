"""The path's status says how it ended: converged only when every λ met its gap test and the elasticity test ended
the path (Sec. 5)."""
import pytest

from solvers.metric import path
from solvers.metric.path import PaidScreening, regularization_path
from solvers.metric.projected_gradient import initial_step
from tests.metric.conftest import tiny


def test_a_path_whose_lambdas_hit_max_iter_is_not_converged():
    p = tiny("iris", 6)
    capped = regularization_path(p, bounds=("pgb",), rho=0.6, tol=1e-10, max_iter=5, analysis=False)
    assert capped.status == "max_iter"
    assert capped.n_capped == (capped.table["status"] == "max_iter").sum() > 0
    assert capped.table["iters"].max() == 5  # it ran out of iterations, not of λ steps
    assert len(capped.table) - 1 < 200


def test_a_path_whose_lambdas_all_meet_tol_is_converged():
    p = tiny("iris", 6)
    res = regularization_path(p, bounds=("pgb",), rho=0.6, tol=1e-6, max_iter=10_000, analysis=False)
    assert res.status == "converged" and res.n_capped == 0
    assert (res.table["rel_gap"].iloc[1:] <= 1e-6).all()


def test_a_path_out_of_lambda_steps_is_max_iter_with_every_lambda_solved():
    p = tiny("iris", 6)
    res = regularization_path(p, bounds=("pgb",), rho=0.9, tol=1e-6, max_iter=10_000, max_steps=2, analysis=False)
    assert res.status == "max_iter" and res.n_capped == 0


def test_path_screening_after_the_ranges_backs_off_while_it_does_not_pay_and_returns_when_it_does():
    paid = PaidScreening()
    runs = []
    for step in range(40):
        if paid.due():
            runs.append(step)
            paid.record(0.01, 10)  # 0.1 iterations' worth of work saved: below PATH_BOUND_COST
    assert runs == [0, 2, 5, 10, 19, 36]  # 1, 2, 4, 8 steps skipped, then at most MAX_SKIPPED_STEPS = 16
    paid.record(0.5, 10)  # it ran and screened half of the active triplets of a 10-iteration λ
    assert paid.due() and paid.due()


@pytest.mark.parametrize("ranges", [True, False], ids=["ranges", "rrpb-over-T"])
def test_the_papers_path_runs_every_bound_at_every_lambda_and_the_default_the_later_ones_where_they_paid(
        ranges, monkeypatch):
    """Step 1 (RRPB over all of T, or its ranges) at every λ either way; step 2 (PGB) at every λ on the paper's
    path, and only at some on the default one."""
    p = tiny("iris", 6)
    calls = []
    real = path._path_screen
    monkeypatch.setattr(path, "_path_screen", lambda *args: calls.append((args[1], args[5])) or real(*args))
    every = regularization_path(p, bounds=("rrpb", "pgb"), rho=0.6, tol=1e-8, analysis=False, paid_screening=False,
                                range_screening=ranges)
    lams = every.table["lam"].iloc[1:].tolist()
    assert [lam for bounds, lam in calls if bounds == ("pgb",)] == lams
    assert [lam for bounds, lam in calls if bounds == ("rrpb",)] == ([] if ranges else lams)
    calls.clear()
    paid = regularization_path(p, bounds=("rrpb", "pgb"), rho=0.6, tol=1e-8, analysis=False, range_screening=ranges)
    lams = paid.table["lam"].iloc[1:].tolist()
    later = [lam for bounds, lam in calls if bounds == ("pgb",)]
    assert set(later) <= set(lams) and later
    assert [lam for bounds, lam in calls if bounds == ("rrpb",)] == ([] if ranges else lams)
    # the same minimisers either way (strong convexity: ‖M − M*‖ ≤ sqrt(2 gap/λ) for each)
    assert paid.table["lam"].tolist() == every.table["lam"].tolist()
    for s in range(1, len(paid.solutions)):
        lam = paid.table["lam"].iloc[s]
        bound = (2 * paid.table["gap"].iloc[s] / lam) ** 0.5 + (2 * every.table["gap"].iloc[s] / lam) ** 0.5
        assert ((paid.solutions[s] - every.solutions[s]) ** 2).sum() ** 0.5 <= bound + 1e-9


def test_each_lambda_starts_from_the_step_its_predecessor_ended_with():
    p = tiny("iris", 6)
    res = regularization_path(p, bounds=("rrpb", "pgb"), rho=0.8, tol=1e-6, max_iter=10_000, analysis=False)
    # the history keeps the path's λ index ("step") and the projected gradient's step size apart
    sizes = [g["step_size"].to_numpy() for _, g in res.history.groupby("step")]
    assert len(sizes) == len(res.table) - 1 > 3
    assert sizes[0][0] == initial_step(p, res.table["lam"].iloc[1])  # the first λ: the global bound η_0
    for before, after in zip(sizes, sizes[1:]):
        assert after[0] == before[-1]
    assert max(s[0] for s in sizes[1:]) > 10 * sizes[0][0]  # the warm steps are far longer than η_0


@pytest.mark.parametrize("backend, ranges", [("pairs", False), ("triplets", True)])
def test_rrpb_keeps_ranges_by_default_only_where_a_margin_costs_d_squared(backend, ranges, monkeypatch):
    """``range_screening=None``: RRPB's ranges on the triplets backend (a margin costs O(d²) there, and a covered
    triplet's is never recomputed), RRPB over all of T on the pair backend; asked for, ranges on either."""
    p = tiny("iris", 6, backend=backend)
    steps = []
    real = path.RangeLedger.step
    monkeypatch.setattr(path.RangeLedger, "step", lambda self, *a: steps.append(a[0]) or real(self, *a))
    regularization_path(p, bounds=("rrpb",), rho=0.6, tol=1e-6, analysis=False, max_steps=5)
    assert bool(steps) == ranges
    regularization_path(p, bounds=("pgb",), rho=0.6, tol=1e-6, analysis=False, max_steps=5)
    assert bool(steps) == ranges  # no RRPB, no ranges
    regularization_path(p, bounds=("rrpb",), rho=0.6, tol=1e-6, analysis=False, max_steps=5, range_screening=True)
    assert steps

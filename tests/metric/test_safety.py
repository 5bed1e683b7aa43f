"""Safety, the heart of the family: along whole λ-paths, no triplet screened by any bound × rule disagrees with
the solution computed without screening, and screened and naive solutions agree to the gap tolerance."""
import math

import numpy as np
import pytest

from solvers.metric.path import regularization_path
from solvers.metric.ranges import range_lower_ends
from solvers.metric.bounds import relaxed_regularization_path_bound
from solvers.metric.rules import screen
from tests.metric.conftest import tiny

RHO = 0.6
BOUND_SETS = [("gb",), ("pgb",), ("dgb",), ("cdgb",), ("rrpb",), ("rrpb", "pgb")]


@pytest.fixture(scope="module")
def small():
    return tiny("iris", 6)


@pytest.fixture(scope="module")
def small_diag():
    return tiny("iris", 6, diagonal=True)


@pytest.fixture(scope="module")
def naive_paths(small, small_diag):
    return {id(p): regularization_path(p, bounds=(), rho=RHO, tol=1e-12, max_iter=50_000, analysis=False)
            for p in (small, small_diag)}


def assert_safe(problem, screened, naive, tol):
    gamma = problem.gamma
    n_checked = 0
    steps = min(len(screened.masks), len(naive.solutions) - 1)
    assert steps >= 10
    for s in range(steps):
        row, ref_row = screened.table.iloc[s + 1], naive.table.iloc[s + 1]
        lam = row["lam"]
        assert lam == pytest.approx(ref_row["lam"])
        M_ref, M = naive.solutions[s + 1], screened.solutions[s + 1]
        slack = math.sqrt(2 * ref_row["gap"] / lam)
        x_ref = problem.margins(M_ref)
        delta = problem.h_norm * slack + 1e-9
        in_L, in_R = screened.masks[s]
        assert not (in_L & in_R).any()
        assert np.all(x_ref[in_L] < 1 - gamma + delta[in_L]), f"false L at step {s + 1}"
        assert np.all(x_ref[in_R] > 1 - delta[in_R]), f"false R at step {s + 1}"
        n_checked += int(in_L.sum() + in_R.sum())
        bound = slack + math.sqrt(2 * row["gap"] / lam)
        assert math.sqrt(np.sum((M - M_ref) ** 2)) <= bound + 1e-9
        assert row["objective"] == pytest.approx(ref_row["objective"], rel=10 * tol)
    assert n_checked > 0  # the test screened something


@pytest.mark.parametrize("rule", ["sphere", "linear", pytest.param("sdp", marks=pytest.mark.slow)])
@pytest.mark.parametrize("bounds", BOUND_SETS, ids="+".join)
def test_path_screening_is_safe(small, naive_paths, bounds, rule):
    tol = 1e-8
    res = regularization_path(small, bounds=bounds, rule=rule, rho=RHO, tol=tol, max_iter=50_000,
                              keep_masks=True, analysis=False, range_screening="rrpb" in bounds)
    assert_safe(small, res, naive_paths[id(small)], tol)


@pytest.mark.parametrize("rule", ["sphere", "linear"])
@pytest.mark.parametrize("bounds, paid", [(("rrpb",), True), (("rrpb", "pgb"), True), (("rrpb", "pgb"), False)],
                         ids=["rrpb", "rrpb+pgb", "rrpb+pgb-every-lambda"])
def test_rrpb_over_all_triplets_is_safe(small, naive_paths, bounds, paid, rule):
    """Without ranges RRPB screens all of T at every λ from (M_{t−1}, λ_{t−1}, ε_{t−1}) (Table 4's protocol), and
    narrows one unscreened problem each time, its H_L̂ updated by the triplets that changed sides."""
    res = regularization_path(small, bounds=bounds, rule=rule, rho=RHO, tol=1e-8, max_iter=50_000,
                              keep_masks=True, analysis=False, paid_screening=paid)
    assert_safe(small, res, naive_paths[id(small)], 1e-8)


@pytest.mark.parametrize("rule", ["sphere", "linear"])
def test_path_screening_after_the_ranges_at_every_lambda_is_safe(small, naive_paths, rule):
    """PGB after RRPB's ranges runs where it pays by default (``path.PaidScreening``); the paper's path runs it at
    every λ, and so every λ's step 2 is checked here."""
    res = regularization_path(small, bounds=("rrpb", "pgb"), rule=rule, rho=RHO, tol=1e-8, max_iter=50_000,
                              keep_masks=True, analysis=False, range_screening=True, paid_screening=False)
    assert_safe(small, res, naive_paths[id(small)], 1e-8)


@pytest.mark.parametrize("rule", ["sphere", "sdp"])
@pytest.mark.parametrize("bounds", [("gb",), ("pgb",), ("rrpb", "pgb"), ("cdgb",)], ids="+".join)
def test_diagonal_path_screening_is_safe(small_diag, naive_paths, bounds, rule):
    tol = 1e-8
    res = regularization_path(small_diag, bounds=bounds, rule=rule, rho=RHO, tol=tol, max_iter=50_000,
                              keep_masks=True, analysis=False, range_screening=True)
    assert_safe(small_diag, res, naive_paths[id(small_diag)], tol)


def test_active_set_with_range_screening_is_safe(small, naive_paths):
    res = regularization_path(small, bounds=("rrpb", "pgb"), rho=RHO, tol=1e-8, max_iter=50_000, keep_masks=True,
                              analysis=False, active_set=True, range_screening=True)
    assert_safe(small, res, naive_paths[id(small)], 1e-8)


def test_active_set_path_equals_the_plain_path(small, naive_paths):
    """Table 2's baseline (active set, no screening) and its screened rows reach the plain path's solutions: the
    working set changes the iterations, not the minimiser (strong convexity: ‖M − M*‖ ≤ sqrt(2 gap/λ))."""
    naive = naive_paths[id(small)]
    for bounds in ((), ("rrpb",), ("rrpb", "pgb")):
        res = regularization_path(small, bounds=bounds, rho=RHO, tol=1e-8, max_iter=50_000, analysis=False,
                                  active_set=True, range_screening=bool(bounds))
        steps = min(len(res.solutions), len(naive.solutions))
        assert steps >= 10
        for s in range(1, steps):
            row, ref_row = res.table.iloc[s], naive.table.iloc[s]
            lam = row["lam"]
            assert lam == pytest.approx(ref_row["lam"])
            # a computed gap resolves P̃ − D̃ only to a few ulps of P̃ (it reads 0 at the optimum's rounding level)
            unresolved = 16 * np.finfo(float).eps * abs(row["objective"])
            bound = sum(math.sqrt(2 * (gap + unresolved) / lam) for gap in (row["gap"], ref_row["gap"]))
            assert math.sqrt(np.sum((res.solutions[s] - naive.solutions[s]) ** 2)) <= bound
            assert row["objective"] == pytest.approx(ref_row["objective"], rel=1e-7)


def test_hinge_path_screening_is_safe():
    p = tiny("iris", 5, gamma=0.0)
    naive = regularization_path(p, bounds=(), rho=RHO, tol=1e-9, max_iter=200, analysis=False, max_steps=8)
    res = regularization_path(p, bounds=("pgb",), rho=RHO, tol=1e-9, max_iter=200, keep_masks=True,
                              analysis=False, max_steps=8)
    # the hinge solver is a subgradient method: only check the verdicts against the reference margins
    for s, (in_L, in_R) in enumerate(res.masks):
        lam = naive.table["lam"].iloc[s + 1]
        gap = naive.table["gap"].iloc[s + 1]
        x = p.margins(naive.solutions[s + 1])
        delta = p.h_norm * math.sqrt(2 * gap / lam) + 1e-9
        assert np.all(x[in_L] < 1 + delta[in_L]) and np.all(x[in_R] > 1 - delta[in_R])


def test_range_ends_agree_with_the_rrpb_sphere_rule(small, naive_paths):
    """Inside (λ_a, λ0] the RRPB sphere rule screens; just below λ_a it does not (Thm 4.1 and its L side)."""
    naive = naive_paths[id(small)]
    rng = np.random.default_rng(0)
    gamma = small.gamma
    for s in (3, 8, 12):
        lam0, M0 = naive.table["lam"].iloc[s], naive.solutions[s]
        eps = max(math.sqrt(2 * naive.table["gap"].iloc[s] / lam0), 1e-6)
        h, nu = small.margins(M0), small.h_norm
        r_end, l_end = range_lower_ends(h, nu, math.sqrt(np.sum(M0 * M0)), eps, lam0, gamma)
        idx = np.arange(small.n_triplets)
        for side_end, want in ((r_end, "R"), (l_end, "L")):
            has = np.flatnonzero(np.isfinite(side_end))
            assert has.size > 0
            for t in rng.choice(has, min(40, has.size), replace=False):
                inside = side_end[t] + (lam0 - side_end[t]) * rng.uniform(0.01, 1.0)
                outside = side_end[t] * 0.98
                for lam, expect in ((inside, True), (outside, False)):
                    L, R = screen(small, relaxed_regularization_path_bound(M0, lam0, lam, eps), idx[t:t + 1], "sphere")
                    assert bool((R if want == "R" else L)[0]) == expect
        # empty ranges are exactly the triplets the ε-ball does not screen at λ0
        assert np.array_equal(np.isfinite(r_end), h - eps * nu > 1)
        assert np.array_equal(np.isfinite(l_end), h + eps * nu < 1 - gamma)


@pytest.mark.parametrize("bounds", [("rrpb", "pgb"), ("dgb",)], ids="+".join)
def test_triplet_backend_path_screening_is_safe(small, naive_paths, bounds):
    """The paper's per-triplet cost model (backend "triplets": per-subset triplet vectors, the ledger's margins
    through a subset) screens safely against the pair backend's naive path on the same triplets."""
    problem = tiny("iris", 6, backend="triplets")
    tol = 1e-8
    res = regularization_path(problem, bounds=bounds, rho=RHO, tol=tol, max_iter=50_000, keep_masks=True,
                              analysis=False)
    assert_safe(problem, res, naive_paths[id(small)], tol)


@pytest.mark.parametrize("bounds", [("rrpb",), ("rrpb", "pgb"), ("gb",)], ids="+".join)
def test_sample_form_path_screening_is_safe(small, naive_paths, bounds, monkeypatch):
    """With the pair arithmetic through the samples (Xᵀ L X and M's eigenvectors, forced here on every subset)
    the screened path is safe against the pair-table form's naive path on the same triplets."""
    monkeypatch.setattr("solvers.metric.problem._SAMPLE_FORM_GAIN", 0.0)
    problem = tiny("iris", 6)
    assert problem.everything.uses_samples
    tol = 1e-8
    res = regularization_path(problem, bounds=bounds, rho=RHO, tol=tol, max_iter=50_000, keep_masks=True,
                              analysis=False, range_screening="rrpb" in bounds)
    assert_safe(problem, res, naive_paths[id(small)], tol)

"""RRPB kept across λ (ranges.RangeLedger): the bookkeeping that lets each λ look only at its candidates."""
import math

import numpy as np
import pytest

from solvers.metric.bounds import relaxed_regularization_path_bound
from solvers.metric.path import regularization_path
from solvers.metric.ranges import RangeLedger, steps_covered
from solvers.metric.rules import screen
from tests.metric.conftest import explicit_H, tiny

RHO = 0.7


def test_steps_covered_never_overcounts_the_grid():
    """k counts the grid points λρ^k strictly above λ_a; the slack may only undercount, and only at a tie."""
    rng = np.random.default_rng(0)
    lam = 3.7
    grid = lam * RHO ** np.arange(200)
    ends = np.concatenate([lam * RHO ** rng.uniform(0, 60, 500), grid[[0, 5, 17]], [0.0, -1.0, np.inf]])
    got = steps_covered(ends, lam, RHO)
    exact = np.array([np.count_nonzero(grid > e) if np.isfinite(e) and e > 0 else (0 if e == np.inf else 200)
                      for e in ends])
    finite = np.isfinite(ends) & (ends > 0)
    assert np.all(got[finite] <= exact[finite])
    assert np.all(got[finite] >= exact[finite] - 1)
    z = np.log(ends[finite] / lam) / math.log(RHO)
    off_grid = np.abs(z - np.round(z)) > 1e-6
    assert np.array_equal(got[finite][off_grid], exact[finite][off_grid])
    assert got[-3] > 10 ** 6 and got[-2] > 10 ** 6 and got[-1] == 0  # λ_a ≤ 0: to the end of the path


@pytest.fixture(scope="module")
def path():
    problem = tiny("iris", 6)
    return problem, regularization_path(problem, bounds=(), rho=RHO, tol=1e-10, max_iter=50_000, analysis=False)


def test_ledger_keeps_the_sets_and_H_L_of_fresh_rrpb_and_every_older_range(path):
    """At every λ_t the ledger's screened set contains what RRPB from (M_{t−1}, λ_{t−1}, ε_{t−1}) screens by
    itself, its active set is exactly the rest of T, and H_L̂, |L̂|, |R̂| kept incrementally equal their
    definitions recomputed from scratch. (Safety of the sets is tested along whole paths in test_safety.)"""
    problem, naive = path
    ledger = RangeLedger(problem, RHO, keep_masks=True)
    lams, gaps = naive.table["lam"].to_numpy(), naive.table["gap"].to_numpy()
    skipped = 0
    for t in range(1, len(lams)):
        M0, lam0 = naive.solutions[t - 1], lams[t - 1]
        eps = math.sqrt(2 * max(gaps[t - 1], 0.0) / lam0)
        rp = ledger.step(t, lams[t], (M0, lam0, eps))
        in_L, in_R = rp.in_L, rp.in_R
        fresh_L, fresh_R = screen(problem, relaxed_regularization_path_bound(M0, lam0, lams[t], eps), None, "sphere")
        assert not (in_L & in_R).any()
        assert np.all(in_L[fresh_L]) and np.all(in_R[fresh_R]), f"step {t}: a fresh RRPB verdict is missing"
        skipped += ledger.n_range  # covered by an older range: not looked at this step
        assert np.array_equal(np.sort(rp.active.idx), np.flatnonzero(~(in_L | in_R)))
        assert (rp.n_L, rp.n_R) == (int(in_L.sum()), int(in_R.sum()))
        H_L = sum((explicit_H(problem, s) for s in np.flatnonzero(in_L)), np.zeros((problem.dim,) * 2))
        scale = max(1.0, float(np.abs(H_L).max()))
        np.testing.assert_allclose(rp.H_L, H_L, atol=1e-10 * scale * max(rp.n_L, 1))
    assert skipped > 0  # the saving: some steps left triplets alone


def test_range_steps_equal_the_two_formulas_of_theorem_4_1():
    """The fused per-candidate computation gives the same steps and sides as the two range ends of Thm 4.1."""
    from solvers.metric.ranges import range_lower_ends, range_steps

    rng = np.random.default_rng(3)
    h = rng.normal(1.0, 2.0, 20_000)
    nu = np.abs(h) * rng.uniform(1.0, 4.0, h.size) + rng.uniform(0, 0.1, h.size)  # ν‖M0‖ ≥ |h| (Cauchy–Schwarz)
    for m, eps, gamma in ((1.0, 0.0, 0.05), (1.0, 0.01, 0.05), (2.0, 0.3, 0.0)):
        steps, to_L = range_steps(h, nu / m, m, eps, 5.0, 5.0 * RHO, gamma, RHO)
        r_end, l_end = range_lower_ends(h, nu / m, m, eps, 5.0, gamma)
        assert np.array_equal(steps, steps_covered(np.minimum(r_end, l_end), 5.0 * RHO, RHO))
        assert np.array_equal(to_L[steps > 0], np.isfinite(l_end)[steps > 0])
        assert (steps > 0).any() and (steps == 0).any() and to_L[steps > 0].any() and (~to_L[steps > 0]).any()

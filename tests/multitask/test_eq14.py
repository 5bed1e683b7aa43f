"""Eq. (14)/(71): the corrected Algorithm 3, the sort reference and bisection against each other, KKT and cvxpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.core import InputError
from solvers.multitask.eq14 import critical_points, eq14_objective, gamma_of_t, solve_eq14

sigmas = st.lists(st.floats(1e-3, 1e3), min_size=2, max_size=25).map(np.array)
etas = st.sampled_from([0.01, 0.1, 1.0, 5.0])


def check_kkt(sigma, eta, h, gamma, tol=1e-8):
    assert gamma.sum() == pytest.approx(h, abs=1e-9)
    assert np.all(gamma >= -1e-12) and np.all(gamma <= 1 + 1e-12)
    slope = sigma**2 / (eta + gamma) ** 2  # −∂/∂γ_i of the objective; equals t on the middle indices
    mid = (gamma > 1e-9) & (gamma < 1 - 1e-9)
    t = slope[mid].mean() if mid.any() else None
    if t is not None:
        np.testing.assert_allclose(slope[mid], t, rtol=1e-7)
        assert np.all(slope[gamma >= 1 - 1e-9] >= t * (1 - tol))
        assert np.all(slope[gamma <= 1e-9] <= t * (1 + tol))


@settings(max_examples=150, deadline=None)
@given(sigma=sigmas, eta=etas, data=st.data())
def test_linear_sort_and_bisection_agree_and_satisfy_kkt(sigma, eta, data):
    h = data.draw(st.integers(1, sigma.size - 1))
    lin, srt, bis = (solve_eq14(sigma, eta, h, m) for m in ("linear", "sort", "bisect"))
    np.testing.assert_allclose(lin, srt, atol=1e-9)
    np.testing.assert_allclose(lin, bis, atol=1e-7)
    check_kkt(sigma, eta, h, lin)


def test_ties_and_wide_dynamic_range():
    for sigma in (np.array([2.0, 2.0, 2.0, 1.0, 1.0]), np.array([1e-3, 1e-3, 1.0, 1e3, 1e3, 1e3]),
                  np.logspace(-4, 4, 17)):
        for eta in (0.01, 1.0, 5.0):
            for h in range(1, sigma.size):
                lin = solve_eq14(sigma, eta, h, "linear")
                np.testing.assert_allclose(lin, solve_eq14(sigma, eta, h, "sort"), atol=1e-9)
                check_kkt(sigma, eta, h, lin)


def test_edge_cases_h_zero_h_equal_q_and_infeasible():
    sigma = np.array([3.0, 2.0, 1.0])
    assert np.all(solve_eq14(sigma, 0.5, 0) == 0)
    assert np.all(solve_eq14(sigma, 0.5, 3) == 1)
    with pytest.raises(InputError, match="infeasible"):
        solve_eq14(sigma, 0.5, 4)
    with pytest.raises(InputError, match="positive"):
        solve_eq14(np.array([1.0, 0.0]), 0.5, 1)


def test_objective_beats_random_feasible_points(rng):
    sigma, eta, h = rng.uniform(0.1, 5, 8), 0.3, 3
    best = eq14_objective(sigma, eta, solve_eq14(sigma, eta, h))
    from solvers.core import project_capped_simplex
    for _ in range(1000):
        g = project_capped_simplex(rng.uniform(-1, 2, 8), h)
        assert eq14_objective(sigma, eta, g) >= best - 1e-12


def test_gamma_of_t_is_non_increasing_and_hits_critical_points(rng):
    sigma, eta = rng.uniform(0.1, 5, 6), 0.4
    tl, tu = critical_points(sigma, eta)
    ts = np.logspace(np.log10(tl.min()) - 1, np.log10(tu.max()) + 1, 400)
    G = np.array([gamma_of_t(sigma, eta, t).sum() for t in ts])
    assert np.all(np.diff(G) <= 1e-12)
    assert G[0] == pytest.approx(6) and G[-1] == pytest.approx(0)
    np.testing.assert_allclose(gamma_of_t(sigma, eta, tl[0])[0], 1.0)
    np.testing.assert_allclose(gamma_of_t(sigma, eta, tu[0])[0], 0.0, atol=1e-12)


def test_algorithm3_trace_shrinks_the_bracket(rng):
    sigma = rng.uniform(0.01, 10, 200)
    trace = []
    gamma = solve_eq14(sigma, 0.2, 50, "linear", trace=trace)
    check_kkt(sigma, 0.2, 50, gamma)
    inside = [row[3] for row in trace]
    active = [row[2] for row in trace]
    assert all(b < a for a, b in zip(inside, inside[1:]))  # breakpoints inside (t_min, t_max) strictly fewer
    assert all(b <= a for a, b in zip(active, active[1:]))
    assert all(b <= 0.75 * a for a, b in zip(active, active[1:]))  # the paper's "at least ¼|I| per sweep"
    assert len(trace) <= 2 * np.log2(400) + 2  # the bracket loses about half its breakpoints per sweep
    t_min, t_max = zip(*[(r[0], r[1]) for r in trace])
    assert all(b >= a for a, b in zip(t_min, t_min[1:])) and all(b <= a for a, b in zip(t_max, t_max[1:]))


def test_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    for eta in (0.01, 1.0, 5.0):
        sigma = rng.uniform(0.05, 3, 7)
        g = cp.Variable(7)
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(sigma**2, cp.inv_pos(eta + g)))),
                          [cp.sum(g) == 3, g >= 0, g <= 1])
        prob.solve(solver="CLARABEL")
        ours = solve_eq14(sigma, eta, 3)
        assert eq14_objective(sigma, eta, ours) <= prob.value * (1 + 1e-7)
        np.testing.assert_allclose(ours, g.value, atol=1e-4)

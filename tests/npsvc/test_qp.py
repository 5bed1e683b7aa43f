"""The box QP and the simplex QP against cvxpy / SLSQP / closed forms, and Theorem 2's MGDA property."""
import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

import torch

from solvers.core import project_capped_simplex
from solvers.npsvc.qp import BoxQP, project_simplex, simplex_qp
from solvers.npsvc.torch_qp import project_simplex as project_simplex_torch
from solvers.npsvc.torch_qp import simplex_qp_torch


def random_psd(rng, n, rank=None):
    B = rng.standard_normal((n, rank or n))
    return B @ B.T / n


@pytest.mark.parametrize("newton", [False, True])
@pytest.mark.parametrize("rank", [None, 3])
@pytest.mark.parametrize("c", [0.5, 10.0])
def test_box_qp_matches_cvxpy(rank, c, newton):
    rng = np.random.default_rng(1)
    S, q = random_psd(rng, 25, rank), rng.standard_normal(25)
    qp = BoxQP(lambda v: S @ v, q, c).solve(tol=1e-10, max_iter=100_000, S=S if newton else None)
    x = cp.Variable(25)
    ref = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(S)) + q @ x), [x >= 0, x <= c])
    ref.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert qp.kkt_residual() <= 1e-10
    assert qp.objective() == pytest.approx(ref.value, rel=1e-7, abs=1e-9)
    assert np.all(qp.x >= 0) and np.all(qp.x <= c)


def test_box_qp_objective_never_increases():
    rng = np.random.default_rng(2)
    S, q = random_psd(rng, 40), rng.standard_normal(40)
    qp = BoxQP(lambda v: S @ v, q, 1.0)
    values = [qp.objective()]
    for k in range(50):
        qp.newton_step(S) if k % 5 == 4 else qp.step()
        values.append(qp.objective())
    assert np.all(np.diff(values) <= 1e-12)


@pytest.mark.parametrize("lower", [0.0, -0.2])
def test_newton_step_moves_variables_whose_target_leaves_the_box_to_their_bound(lower):
    """S = I + a small coupling and targets −q_i either well inside the box or well outside it: one Newton step
    from the box's centre lands on the optimum, because the variables whose Newton target leaves the box are put
    on that bound and the rest re-solved with them fixed (qp.py). A step that only clipped its target and
    line-searched the clipped direction would stop short of it (t < 1)."""
    rng = np.random.default_rng(6)
    n = 30
    S = np.eye(n) + 0.05 * random_psd(rng, n)
    unconstrained = rng.choice([-2.0, 0.3, 0.5, 0.7, 3.0], n)
    q = -S @ unconstrained
    qp = BoxQP(lambda v: S @ v, q, 1.0, np.full(n, 0.5), lower=lower)
    qp.newton_step(S)
    ref = BoxQP(lambda v: S @ v, q, 1.0, lower=lower).solve(1e-13, 100_000)
    assert np.any(ref.x <= lower) and np.any(ref.x >= 1.0)  # both bounds active at the optimum
    assert qp.n_iter == 1 and qp.kkt_residual() <= 1e-12
    np.testing.assert_allclose(qp.x, ref.x, atol=1e-11)


@pytest.mark.parametrize("lower", [0.0, -0.2])
def test_newton_re_solves_through_the_factor_at_hand_land_on_the_optimum(lower, monkeypatch):
    """A large free set with a few targets outside the box: the re-solves with those variables on their bounds go
    through the free block's factor (a Schur complement, qp.BoxQP._fixed_newton_step) instead of factorizing the
    smaller block; one Newton step still lands on the optimum, as the factorizing route does."""
    rng = np.random.default_rng(7)
    n = 200
    S = np.eye(n) + 0.05 * random_psd(rng, n)
    unconstrained = np.where(rng.random(n) < 0.04, rng.choice([-2.0, 3.0], n), rng.uniform(0.2, 0.8, n))
    q = -S @ unconstrained
    through_factor = []
    original = BoxQP._fixed_newton_step
    monkeypatch.setattr(BoxQP, "_fixed_newton_step",
                        lambda self, *args: through_factor.append(1) or original(self, *args))
    qp = BoxQP(lambda v: S @ v, q, 1.0, np.full(n, 0.5), lower=lower)
    qp.newton_step(S)
    ref = BoxQP(lambda v: S @ v, q, 1.0, lower=lower).solve(1e-13, 100_000)
    assert through_factor and np.any(ref.x <= lower) and np.any(ref.x >= 1.0)
    assert qp.n_iter == 1 and qp.kkt_residual() <= 1e-12
    np.testing.assert_allclose(qp.x, ref.x, atol=1e-11)


def test_box_qp_warm_start_at_optimum_stops_at_once():
    rng = np.random.default_rng(3)
    S, q = random_psd(rng, 20), rng.standard_normal(20)
    x = BoxQP(lambda v: S @ v, q, 1.0).solve(1e-11).x
    assert BoxQP(lambda v: S @ v, q, 1.0, x).solve(1e-10).n_iter <= 2


def test_box_qp_warm_start_with_a_known_product():
    """A warm start that passes S x0 (K-NPSVC++'s u-step) reaches the solution of one that recomputes it;
    a start outside the box is clipped and its stale product ignored."""
    rng = np.random.default_rng(5)
    S, q = random_psd(rng, 30), rng.standard_normal(30)
    x0 = BoxQP(lambda v: S @ v, q, 1.0).solve(1e-3, S=S).x
    q2 = q + 0.1 * rng.standard_normal(30)
    plain = BoxQP(lambda v: S @ v, q2, 1.0, x0).solve(1e-11, S=S)
    known = BoxQP(lambda v: S @ v, q2, 1.0, x0, Sx0=S @ x0).solve(1e-11, S=S)
    np.testing.assert_allclose(known.x, plain.x, atol=1e-9)
    outside = x0 + 2.0
    clipped = BoxQP(lambda v: S @ v, q2, 1.0, outside, Sx0=S @ outside)
    np.testing.assert_allclose(clipped.Sx, S @ np.clip(outside, 0.0, 1.0), atol=1e-12)


def test_simplex_qp_two_classes_closed_form():
    """K = 2: τ₁ = clip((A22 − A12 + b2 − b1)/(A11 − 2A12 + A22), 0, 1) (digest §8.2)."""
    rng = np.random.default_rng(4)
    for _ in range(20):
        A, b = random_psd(rng, 2), rng.standard_normal(2)
        t1 = np.clip((A[1, 1] - A[0, 1] + b[1] - b[0]) / (A[0, 0] - 2 * A[0, 1] + A[1, 1]), 0, 1)
        np.testing.assert_allclose(simplex_qp(A, b), [t1, 1 - t1], atol=1e-8)


@pytest.mark.parametrize("K", [3, 7])
def test_simplex_qp_matches_slsqp(K):
    rng = np.random.default_rng(K)
    A, b = random_psd(rng, K), rng.standard_normal(K)
    tau = simplex_qp(A, b)
    ref = minimize(lambda t: 0.5 * t @ A @ t + b @ t, np.full(K, 1 / K), jac=lambda t: A @ t + b,
                   bounds=[(0, 1)] * K, constraints=[{"type": "eq", "fun": lambda t: t.sum() - 1}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    f = lambda t: 0.5 * t @ A @ t + b @ t  # noqa: E731
    assert f(tau) <= f(ref.x) + 1e-9


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 12), st.integers(0, 10_000), st.floats(0, 100))
def test_simplex_qp_stays_on_the_simplex(K, seed, gamma):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((K, 5))
    tau = simplex_qp(G @ G.T, -gamma * rng.random(K))
    assert np.all(tau >= -1e-12) and abs(tau.sum() - 1) <= 1e-9


def test_mgda_direction_decreases_every_objective():
    """Theorem 2 with γ = 0: d = Σ τ*_l g_l has g_lᵀd ≥ ‖d‖² for all l."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        g = rng.standard_normal((4, 6))
        tau = simplex_qp(g @ g.T, np.zeros(4), tol=1e-14, max_iter=200_000)
        d = tau @ g
        assert np.all(g @ d >= d @ d - 1e-6)


def test_mgda_zero_when_origin_in_hull():
    g = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    tau = simplex_qp(g @ g.T, np.zeros(4), tol=1e-14)
    assert np.linalg.norm(tau @ g) <= 1e-6


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 10_000), st.floats(0.01, 100))
def test_torch_simplex_projection_matches_core(K, seed, scale):
    """The device projection (sort and threshold) equals core's breakpoint projection (h = 1)."""
    v = scale * np.random.default_rng(seed).standard_normal(K)
    np.testing.assert_allclose(project_simplex_torch(torch.tensor(v)).numpy(), project_capped_simplex(v, 1.0),
                               atol=1e-12 * (1 + scale))


@pytest.mark.parametrize("K", [2, 5, 10, 36])
@pytest.mark.parametrize("rank", [1, 3, None])
def test_torch_simplex_qp_meets_the_fista_bound(K, rank):
    """f(τ_k) − f* ≤ 4‖A‖_F/(k+1)² (Beck & Teboulle, Thm. 4.4 with ‖τ₀ − τ*‖² ≤ 2), f* from the exact
    active-set solver; warm starts stay on the simplex."""
    rng = np.random.default_rng(10 * K + (rank or 0))
    A, b = random_psd(rng, K, rank), -0.1 * rng.random(K)
    f = lambda t: 0.5 * t @ A @ t + b @ t  # noqa: E731
    best = f(simplex_qp(A, b))
    for iterations in (10, 100):
        tau = simplex_qp_torch(torch.tensor(A), torch.tensor(b), iterations=iterations).numpy()
        assert np.all(tau >= 0) and abs(tau.sum() - 1) <= 1e-12
        assert f(tau) - best <= 4 * np.linalg.norm(A) / (iterations + 1) ** 2 + 1e-12
    warm = simplex_qp_torch(torch.tensor(A), torch.tensor(b), torch.tensor(rng.standard_normal(K)), iterations=5)
    assert np.all(warm.numpy() >= 0) and abs(float(warm.sum()) - 1) <= 1e-12


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 40), st.integers(0, 10_000), st.floats(0.01, 100))
def test_numpy_simplex_projection_matches_core(K, seed, scale):
    v = scale * np.random.default_rng(seed).standard_normal(K)
    np.testing.assert_allclose(project_simplex(v), project_capped_simplex(v, 1.0), atol=1e-12 * (1 + scale))

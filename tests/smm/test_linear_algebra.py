"""Sec. 4 linear algebra against independent references: finite differences, dense assembly."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.core import project_box, singular_value_threshold
from solvers.smm import newton
from solvers.smm.newton import Subproblem, evaluate, newton_direction, NewtonStats
from solvers.smm.problem import project_spectral_ball
from solvers.smm.spectral import SpectralPoint, svt_jacobian_dense, svt_jacobian_lowrank


def _matrix_and_tau(seed, p, q, k):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((p, q))
    nu = np.linalg.svd(Z, compute_uv=False)
    tau = 0.5 * (nu[k - 1] + nu[k]) if k < p else 0.5 * nu[-1]
    return Z, tau, rng


@pytest.mark.parametrize("p,q,k", [(3, 5, 1), (4, 4, 2), (5, 7, 4), (2, 9, 1), (6, 6, 5)])
def test_svt_jacobian_matches_finite_differences(p, q, k):
    Z, tau, rng = _matrix_and_tau(p * 10 + q, p, q, k)
    sp = SpectralPoint.of(Z, tau)
    assert sp.rank_alpha == k
    for _ in range(3):
        d = rng.standard_normal((p, q))
        h = 1e-6
        fd = (singular_value_threshold(Z + h * d, tau)[0] - singular_value_threshold(Z - h * d, tau)[0]) / (2 * h)
        np.testing.assert_allclose(svt_jacobian_dense(sp, d), fd, atol=1e-7)
        np.testing.assert_allclose(svt_jacobian_lowrank(sp, d), svt_jacobian_dense(sp, d), atol=1e-10)


def _assemble(op, p, q):
    basis = np.eye(p * q)
    return np.column_stack([op(e.reshape(p, q)).ravel() for e in basis])


def test_ball_jacobian_self_adjoint_with_eigenvalues_in_unit_interval():
    p, q = 3, 5
    Z, tau, _ = _matrix_and_tau(7, p, q, 2)
    sp = SpectralPoint.of(Z, tau)
    G = np.eye(p * q) - _assemble(lambda d: svt_jacobian_dense(sp, d), p, q)
    np.testing.assert_allclose(G, G.T, atol=1e-12)
    eig = np.linalg.eigvalsh(0.5 * (G + G.T))
    assert eig.min() > -1e-10 and eig.max() < 1 + 1e-10


def test_ball_jacobian_is_identity_inside_the_ball():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((3, 4))
    sp = SpectralPoint.of(Z, tau=np.linalg.norm(Z, 2) * 1.5)
    d = rng.standard_normal((3, 4))
    assert sp.rank_alpha == 0
    np.testing.assert_array_equal(svt_jacobian_lowrank(sp, d), 0.0)
    np.testing.assert_allclose(svt_jacobian_dense(sp, d), 0.0, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), p=st.integers(1, 5), extra=st.integers(0, 4), tau=st.floats(0.01, 3.0))
def test_svt_and_ball_projection_properties(seed, p, extra, tau):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((p, p + extra))
    P, _ = singular_value_threshold(Z, tau)
    B = project_spectral_ball(Z, tau)
    np.testing.assert_allclose(P + B, Z, atol=1e-12)  # Moreau
    assert np.linalg.norm(B, 2) <= tau * (1 + 1e-10)
    assert np.vdot(B, P) == pytest.approx(tau * np.linalg.svd(P, compute_uv=False).sum(), abs=1e-9)
    sp = SpectralPoint.of(Z, tau)
    np.testing.assert_allclose(sp.ball_projection(), B, atol=1e-12)
    np.testing.assert_allclose(sp.nuclear_prox(), P, atol=1e-12)
    # transpose-equivariance (the p > q convention)
    np.testing.assert_allclose(singular_value_threshold(Z.T, tau)[0], P.T, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), C=st.floats(0.01, 10.0))
def test_box_projection_moreau_and_support_function(seed, C):
    rng = np.random.default_rng(seed)
    w = 3 * rng.standard_normal(20)
    proj = project_box(w, 0.0, C)
    assert np.all((proj >= 0) & (proj <= C))
    prox_conj = w - proj  # Prox_{δ*_S}
    np.testing.assert_allclose(prox_conj + proj, w)
    # δ*_S(v) = C Σ max(v, 0) = max over the box vertices, checked on the maximiser
    assert C * np.maximum(w, 0).sum() == pytest.approx(np.where(w > 0, C, 0.0) @ w)


def _subproblem(problem, sigma=3.0, seed=0, nuclear=True):
    rng = np.random.default_rng(seed)
    n, (p, q) = problem.n, problem.shape
    lam = -np.clip(rng.uniform(-0.5, 1.5, n), 0, problem.C)
    Lam = project_spectral_ball(rng.standard_normal((p, q)), problem.tau) if nuclear else None
    return Subproblem(problem.X, problem.y, (p, q), problem.C, problem.tau if nuclear else 0.0, sigma, lam, Lam,
                      center=None if nuclear else rng.standard_normal((p, q)), b_center=0.3,
                      b_weight=0.0 if nuclear else 0.2)


@pytest.mark.parametrize("nuclear", [True, False])
def test_phi_gradient_matches_finite_differences(problem, nuclear):
    sub = _subproblem(problem, nuclear=nuclear)
    rng = np.random.default_rng(1)
    W, b = 0.3 * rng.standard_normal(problem.shape), 0.2

    def phi(W, b):
        return evaluate(sub, W, b, problem.X @ W.ravel(), gradient=False).phi

    pt = evaluate(sub, W, b, problem.X @ W.ravel())
    for _ in range(3):
        dW, db = rng.standard_normal(problem.shape), rng.standard_normal()
        h = 1e-6
        fd = (phi(W + h * dW, b + h * db) - phi(W - h * dW, b - h * db)) / (2 * h)
        assert np.vdot(pt.gW, dW) + pt.gb * db == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_phi_equals_augmented_lagrangian_at_closed_form_v_and_U(problem):
    """φ_k(W, b) = min over (v, U) of L_σ (6), attained at (9); constants restored."""
    sub = _subproblem(problem)
    rng = np.random.default_rng(2)
    W, b = 0.3 * rng.standard_normal(problem.shape), -0.1
    pt = evaluate(sub, W, b, problem.X @ W.ravel())
    sigma, lam, Lam, C, tau = sub.sigma, sub.lam, sub.Lam, problem.C, problem.tau
    v = (pt.omega - pt.p_omega) / sigma
    Xs = Lam + sigma * W
    U = singular_value_threshold(Xs, tau)[0] / sigma
    r = problem.A(W) + b * problem.y + v - 1.0
    L = (0.5 * np.vdot(W, W) + tau * np.linalg.svd(U, compute_uv=False).sum() + C * np.maximum(v, 0).sum()
         + lam @ r + np.vdot(Lam, W - U) + 0.5 * sigma * (r @ r + np.vdot(W - U, W - U)))
    const = (lam @ lam + np.vdot(Lam, Lam)) / (2 * sigma)
    assert pt.phi - const == pytest.approx(L, rel=1e-10)


def _assembled_newton(sub, pt, rho):
    """Solve (19) with the full (pq+1)×(pq+1) matrix (18) built column by column."""
    p, q = sub.shape
    X, y, sigma = sub.X, sub.y, sub.sigma
    A = y[:, None] * X  # rows y_i vec(X_i)
    m = ((pt.omega > 0) & (pt.omega < sub.C)).astype(float)
    if sub.nuclear and pt.spec.rank_alpha > 0:
        G = np.eye(p * q) - _assemble(lambda d: svt_jacobian_dense(pt.spec, d), p, q)
    else:
        G = np.eye(p * q)
    B = np.column_stack([A, y])  # [A y]
    V = sigma * B.T @ (m[:, None] * B)
    V[:-1, :-1] += np.eye(p * q) + (sigma * G if sub.nuclear else 0.0)
    V[-1, -1] += rho + sub.b_weight
    sol = np.linalg.solve(V, -np.r_[pt.gW.ravel(), pt.gb])
    return sol[:-1], sol[-1]


@pytest.mark.parametrize("rho", [0.05, 1e-8])
@pytest.mark.parametrize("path", ["cg", "direct"])
@pytest.mark.parametrize("tau", [0.3, 50.0, 0.0])
def test_schur_reduced_newton_step_equals_full_system(problem, monkeypatch, path, tau, rho):
    """(40)-(41) (CG or the direct solves: Woodbury when G = I, the spectral-basis Woodbury when G ≠ I)
    reproduce the assembled system (18)-(19); p < q here, so V_2 is in play."""
    from dataclasses import replace

    sub = _subproblem(problem.with_C(1.0), sigma=2.0, nuclear=tau > 0)
    if tau > 0:
        sub = replace(sub, tau=tau, Lam=project_spectral_ball(sub.Lam, tau))
    monkeypatch.setattr(newton, "CG_ITER_GUESS", 0 if path == "cg" else 10**9)
    rng = np.random.default_rng(4)
    W = 0.2 * rng.standard_normal(problem.shape)
    pt = evaluate(sub, W, 0.1, problem.X @ W.ravel())
    stats = NewtonStats()
    dW, db = newton_direction(sub, pt, rho, 1e-13, 1000, np.zeros(W.size), stats, newton.GramCache())
    ref_dW, ref_db = _assembled_newton(sub, pt, rho)
    assert stats.j1 > 0
    if tau == 0.3:
        assert pt.spec.rank_alpha > 0  # G ≠ I: the spectral-basis Woodbury solve
    assert stats.direct == (1 if path == "direct" else 0)
    np.testing.assert_allclose(dW, ref_dW, rtol=1e-7, atol=1e-9)
    assert db == pytest.approx(ref_db, rel=1e-7, abs=1e-9)


def _exact_half_squares_difference(a, b) -> Fraction:
    """½(Σa² − Σb²) in exact rational arithmetic on the given doubles."""
    return sum((Fraction(x) ** 2 - Fraction(z) ** 2 for x, z in zip(a.tolist(), b.tolist())), Fraction(0)) / 2


def test_phi_keeps_its_accuracy_at_a_large_penalty():
    """At σ = 1e5 most |ω_j| ≈ σ·|margin residual| ≈ 1e5: φ's box envelope (‖ω‖² − ‖ω − Π_S ω‖²)/(2σ) must not
    lose eps·‖ω‖²/σ to cancellation (a measured stall: Armijo's decreases fell below that error and SNCG gave
    up, docs/benchmarks/smm.md, disagreement 4). Reference: the definition in exact rational arithmetic on the same ω."""
    rng = np.random.default_rng(7)
    n, p, q, C, sigma = 2000, 4, 4, 10.0, 1e5
    X = rng.standard_normal((n, p * q))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lam = -rng.uniform(0.0, C, n)
    sub = Subproblem(X, y, (p, q), C, 0.0, sigma, lam, None)
    W, b = rng.standard_normal((p, q)), 0.1
    pt = evaluate(sub, W, b, X @ W.ravel(), gradient=False)
    omega = pt.omega
    exact = (_exact_half_squares_difference(omega, omega - np.clip(omega, 0.0, C)) / Fraction(sigma)
             + _exact_half_squares_difference(W.ravel(), np.zeros(W.size)))
    # a sum of n terms of size |t_j| carries at most ~ n·eps·Σ|t_j| of rounding (far less in practice);
    # the cancelling form's error is eps·‖ω‖²/σ ≈ 2e-16·2e13/1e5 ≈ 4e-8 here, 1e3 × this bound
    terms = np.abs(np.clip(omega, 0.0, C) * (2.0 * omega - np.clip(omega, 0.0, C))) / (2.0 * sigma)
    bound = 8 * np.log2(n) * np.finfo(float).eps * (terms.sum() + 0.5 * np.vdot(W, W))
    assert abs(pt.phi - float(exact)) <= bound


def test_spectral_envelope_keeps_its_accuracy_far_outside_the_ball():
    """E_{τ‖·‖_*}(Z) = ½Σν² − ½Σ(ν − τ)₊² with ν ≈ 1e6 ≫ τ = 1: against exact rational arithmetic."""
    rng = np.random.default_rng(8)
    Z = 1e6 * rng.standard_normal((5, 7))
    sp = SpectralPoint.of(Z, 1.0)
    exact = _exact_half_squares_difference(sp.nu, np.maximum(sp.nu - sp.tau, 0.0))
    m = np.minimum(sp.nu, sp.tau)
    bound = 8 * np.finfo(float).eps * float(np.sum(m * (2 * sp.nu - m)))
    assert abs(sp.envelope() - float(exact)) <= bound


@pytest.mark.parametrize("nuclear", [True, False])
def test_epoch_stale_rows_give_the_exact_phi_gradient_and_slope(problem, nuclear):
    """Inside an epoch the certified rows keep X vec(W) from W_ref; φ (with the −C⟨S, W − W_ref⟩ shift), ∇φ
    (17) and φ'(t) must equal their values from an exact X vec(W) at every point of the certified ball."""
    from dataclasses import replace

    base = _subproblem(problem, sigma=3.0, nuclear=nuclear)
    sub = replace(base, row_norms=np.linalg.norm(problem.X, axis=1))
    rng = np.random.default_rng(5)
    W, b = 0.5 * rng.standard_normal(problem.shape), 0.1
    pt = evaluate(sub, W, b, problem.X @ W.ravel())
    DW = 1e-3 * rng.standard_normal(problem.shape)
    db = 0.01
    epoch = newton.start_epoch(sub, pt, DW)
    assert epoch is not None and 0 < epoch.rows.size < problem.n  # some rows certified, J1 among the others
    assert set(pt.J) <= set(epoch.rows)
    certified_capped = np.setdiff1d(np.flatnonzero(pt.capped), epoch.rows)
    assert certified_capped.size > 0  # the shift term is exercised
    Xd = np.zeros(problem.n)
    Xd[epoch.rows] = problem.X[epoch.rows] @ DW.ravel()
    for t in (1.0, 0.5, 0.1):
        W_t = W + t * DW
        assert epoch.contains(W_t)
        stale = newton.with_gradient(sub, evaluate(sub, W_t, b + t * db, pt.Xw + t * Xd, gradient=False, epoch=epoch))
        exact = evaluate(sub, W_t, b + t * db, problem.X @ W_t.ravel())
        assert stale.phi == pytest.approx(exact.phi, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(stale.gW, exact.gW, rtol=1e-10, atol=1e-12)
        assert stale.gb == pytest.approx(exact.gb, rel=1e-10, abs=1e-12)
        np.testing.assert_array_equal(stale.J, exact.J)
        slope = newton.directional_derivative(sub, stale, DW, db, Xd, epoch)
        slope_exact = newton.directional_derivative(sub, exact, DW, db, problem.X @ DW.ravel())
        assert slope == pytest.approx(slope_exact, rel=1e-10, abs=1e-12)
    # the certificate itself: no certified row changes its region anywhere on the ball's boundary
    for _ in range(20):
        E = rng.standard_normal(problem.shape)
        W_e = epoch.W_ref + epoch.radius * E / np.linalg.norm(E)
        omega = -sub.lam - sub.sigma * (problem.y * (problem.X @ W_e.ravel() + b) - 1.0)
        certified = np.setdiff1d(np.arange(problem.n), epoch.rows)
        np.testing.assert_array_equal(omega[certified] >= sub.C, pt.omega[certified] >= sub.C)
        np.testing.assert_array_equal(omega[certified] <= 0, pt.omega[certified] <= 0)


def test_sncg_with_epochs_reaches_the_point_without_them(problem, monkeypatch):
    """Epochs change the cost of a Newton step, not the subproblem's solution (same ∇φ = 0 point)."""
    from dataclasses import replace

    started = []
    start = newton.start_epoch
    monkeypatch.setattr(newton, "EPOCH_MAX_SHARE", 1.0)  # a cost rule; on 60 rows it would never open one
    monkeypatch.setattr(newton, "start_epoch", lambda *a: started.append(start(*a)) or started[-1])

    base = _subproblem(problem, sigma=3.0)
    with_epochs = replace(base, row_norms=np.linalg.norm(problem.X, axis=1))
    W0 = np.zeros(problem.shape)
    stop = lambda pt: pt.grad_norm <= 1e-10  # noqa: E731
    a, _ = newton.sncg(with_epochs, W0, 0.0, np.zeros(problem.n), stop)
    b, _ = newton.sncg(base, W0, 0.0, np.zeros(problem.n), stop)
    assert a.grad_norm <= 1e-10 and b.grad_norm <= 1e-10
    np.testing.assert_allclose(a.W, b.W, atol=1e-8)
    np.testing.assert_allclose(a.Xw, problem.X @ a.W.ravel(), atol=1e-12)  # exact on every row at exit
    assert any(e is not None for e in started)  # the epochs were used


@pytest.mark.parametrize("p, q, tau", [(4, 6, 0.5), (5, 5, 3.5), (4, 6, 4.0), (6, 6, 0.1), (3, 7, 2.0)])
def test_shifted_inverse_and_its_omega_form_match_the_assembled_matrix(p, q, tau):
    """(I + σG)⁻¹ = ((1+σ)I − σ𝒥)⁻¹ in the singular-vector basis, and X(M⁻¹ − I/κ)Xᵀ from the |α|(p+q−|α|)
    entries, against the inverse of 𝒥 assembled column by column from (35); |α| from 1 to p."""
    from solvers.smm.spectral import ShiftedInverse, apply_svt_jacobian

    rng = np.random.default_rng(p * 100 + q)
    sp = SpectralPoint.of(2.0 * rng.standard_normal((p, q)), tau)
    sigma = 3.0
    J = np.column_stack([apply_svt_jacobian(sp, e.reshape(p, q)).ravel() for e in np.eye(p * q)])
    M_inv = np.linalg.inv((1.0 + sigma) * np.eye(p * q) - sigma * J)
    inv = ShiftedInverse.of(sp, sigma)
    D = rng.standard_normal((p, q))
    np.testing.assert_allclose(inv.solve(D).ravel(), M_inv @ D.ravel(), atol=1e-12)
    X = rng.standard_normal((7, p, q))
    coords, E = inv.omega_coordinates(X)
    assert coords.shape[1] == sp.rank_alpha * (p + q - sp.rank_alpha)
    ref = X.reshape(7, -1) @ (M_inv - np.eye(p * q) / (1.0 + sigma)) @ X.reshape(7, -1).T
    np.testing.assert_allclose(coords @ E.T, ref, atol=1e-11)


def test_gram_cache_follows_j1():
    """X_JX_Jᵀ updated by the rows that entered J1 equals the product recomputed."""
    X = np.random.default_rng(0).standard_normal((50, 20))
    cache = newton.GramCache()
    for J in (np.arange(10), np.r_[0:10, 12], np.r_[1:10, 12, 30, 31], np.r_[40:50]):
        np.testing.assert_allclose(cache.of(J, X[J]), X[J] @ X[J].T, atol=1e-12)


def test_capped_rows_follow_the_bound_set():
    """Σ_{capped} y_jX_j updated by the rows that entered or left the set equals the sum recomputed, through small
    moves (updated) and large ones (recomputed), as the set moves between Newton, ALM and isPADMM steps."""
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((200, 12)), rng.choice([-1.0, 1.0], 200)
    rows = newton.CappedRows()
    capped = rng.random(200) < 0.3
    for move in (3, 0, 12, 150, 5, 1):  # 150 rows moved is over ROW_SLICE_SHARE: a new sum
        flip = rng.choice(200, move, replace=False)
        capped = capped.copy()
        capped[flip] = ~capped[flip]
        np.testing.assert_allclose(rows.sum(X, y, capped), (y * capped) @ X, rtol=1e-12, atol=1e-12)

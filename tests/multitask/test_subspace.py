"""Projection onto M_c (Eq. (75)) and the exact M-step (Eq. (71) + fill-in), against cvxpy and certificates."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from solvers.core import project_capped_simplex
from solvers.multitask.subspace import m_step, project_trace_box_psd, shared_subspace


def random_feasible(rng, d, h):
    P = np.linalg.qr(rng.standard_normal((d, d)))[0]
    return (P * project_capped_simplex(rng.uniform(-1, 2, d), h)) @ P.T


def coupling(U, M, eta):
    return float(np.trace(U.T @ np.linalg.solve(eta * np.eye(len(M)) + M, U)))


@settings(max_examples=60, deadline=None)
@given(A=arrays(float, (6, 6), elements=st.floats(-3, 3)), h=st.integers(0, 6))
def test_projection_is_feasible_and_satisfies_the_variational_inequality(A, h):
    M, s, _ = project_trace_box_psd(A, h)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.trace(M) == pytest.approx(h, abs=1e-9)
    eig = np.linalg.eigvalsh(M)
    assert eig.min() >= -1e-9 and eig.max() <= 1 + 1e-9
    rng = np.random.default_rng(0)
    S = 0.5 * (A + A.T)
    for _ in range(20):  # ⟨Â − M⁺, M' − M⁺⟩ ≤ 0 for every feasible M'
        assert np.sum((S - M) * (random_feasible(rng, 6, h) - M)) <= 1e-8
    np.testing.assert_allclose(project_trace_box_psd(M, h)[0], M, atol=1e-9)  # idempotent


def test_projection_matches_cvxpy(rng):
    cp = pytest.importorskip("cvxpy")
    A = rng.standard_normal((5, 5))
    X = cp.Variable((5, 5), symmetric=True)
    cp.Problem(cp.Minimize(cp.sum_squares(X - 0.5 * (A + A.T))), [X >> 0, np.eye(5) - X >> 0, cp.trace(X) == 2]).solve(solver="CLARABEL")
    np.testing.assert_allclose(project_trace_box_psd(A, 2)[0], X.value, atol=1e-5)


@pytest.mark.parametrize("eta", [0.05, 1.0])
def test_m_step_matches_cvxpy_matrix_frac(rng, eta):
    cp = pytest.importorskip("cvxpy")
    d, m, h = 5, 4, 2
    U = rng.standard_normal((d, m))
    M = cp.Variable((d, d), symmetric=True)
    prob = cp.Problem(cp.Minimize(cp.matrix_frac(U, eta * np.eye(d) + M)), [M >> 0, np.eye(d) - M >> 0, cp.trace(M) == h])
    prob.solve(solver="CLARABEL")
    ours = m_step(U, eta, h)
    assert coupling(U, ours, eta) <= prob.value * (1 + 1e-6)
    np.testing.assert_allclose(ours, M.value, atol=2e-4)


def test_m_step_frank_wolfe_gap_is_zero(rng):
    d, eta, h = 7, 0.3, 3
    U = rng.standard_normal((d, 5))
    M = m_step(U, eta, h)
    K = np.linalg.solve(eta * np.eye(d) + M, U)
    G = -K @ K.T  # ∇_M tr(Uᵀ(ηI+M)⁻¹U)
    gap = np.sum(G * M) + np.sort(np.linalg.eigvalsh(-G))[::-1][:h].sum()
    assert abs(gap) <= 1e-9 * max(1.0, np.abs(G).max())
    for _ in range(200):
        assert coupling(U, random_feasible(rng, d, h), eta) >= coupling(U, M, eta) - 1e-10


def test_fill_in_when_rank_is_below_h(rng):
    d, eta, h = 6, 0.5, 4
    U = rng.standard_normal((d, 2)) @ rng.standard_normal((2, 5))  # rank 2 < h
    M = m_step(U, eta, h)
    assert np.trace(M) == pytest.approx(h)
    eig = np.linalg.eigvalsh(M)
    assert eig.min() >= -1e-12 and eig.max() <= 1 + 1e-12
    for _ in range(200):
        assert coupling(U, random_feasible(rng, d, h), eta) >= coupling(U, M, eta) - 1e-10
    np.testing.assert_allclose(m_step(np.zeros((d, 3)), eta, h), h / d * np.eye(d))


def test_tightness_threshold_of_the_relaxation(rng):
    """σ_h/σ_{h+1} ≥ 1 + 1/η ⇒ M* has eigenvalues in {0, 1} (M* ∈ M_e); just below, one is fractional."""
    d, eta, h = 6, 0.5, 2
    P = np.linalg.qr(rng.standard_normal((d, d)))[0][:, :4]
    Q = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    ratio = 1 + 1 / eta
    for factor, tight in ((1.001, True), (0.9, False)):
        sigma = np.array([4.0, 3.0, 3.0 / (ratio * factor), 0.5])
        M = m_step((P * sigma) @ Q, eta, h)
        eig = np.linalg.eigvalsh(M)
        integral = np.all(np.minimum(np.abs(eig), np.abs(eig - 1)) < 1e-9)
        assert integral == tight


def test_shared_subspace_orthonormal(rng):
    M = m_step(rng.standard_normal((6, 4)), 0.2, 2)
    Theta, eigs = shared_subspace(M, 2)
    np.testing.assert_allclose(Theta @ Theta.T, np.eye(2), atol=1e-12)
    assert np.all(np.diff(eigs) <= 1e-12)

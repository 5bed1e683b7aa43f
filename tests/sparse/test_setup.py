"""Set-up that costs less than the solve: implicit column scaling and a backtracked L."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.sparse import SparseLinearRegression, SparseLogisticRegression, SparseProblem, solve
from solvers.sparse.design import Design, ScaledDense, column_norms

from .conftest import random_problem


def explicit(X, scale, value):
    """The scaled design written out: [X D⁻¹, c·1]."""
    cols = [X / scale] + ([np.full((X.shape[0], 1), value)] if value is not None else [])
    return np.hstack(cols)


@pytest.mark.parametrize("value", [None, 0.25])
def test_scaled_dense_applies_the_same_matrix_as_the_explicit_copy(value):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((15, 8)) * rng.uniform(0.1, 10.0, 8)
    X[:, 3] = 0.0  # an all-zero column keeps scale 1
    norms = column_norms(X)
    scale = np.where(norms > 0, norms, 1.0)
    op, E = ScaledDense(X, scale, value), explicit(X, scale, value)
    n = E.shape[1]
    v, V, r, R = rng.standard_normal(n), rng.standard_normal((n, 3)), rng.standard_normal(15), rng.standard_normal((15, 3))
    assert op.shape == E.shape
    np.testing.assert_allclose(op @ v, E @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op @ V, E @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.T @ r, E.T @ r, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.T @ R, E.T @ R, rtol=1e-12, atol=1e-12)
    J = np.array([0, 3, n - 1])
    np.testing.assert_allclose(op[:, J], E[:, J], rtol=1e-12)
    np.testing.assert_allclose(op.column_norms(), np.linalg.norm(E, axis=0), rtol=1e-12)
    np.testing.assert_allclose(op.toarray(), E, rtol=1e-12, atol=1e-15)


def test_the_dense_design_wraps_x_without_copying_it():
    X = np.random.default_rng(1).standard_normal((30, 12))
    design = Design.build(X, normalize=True, fit_intercept=True)
    assert isinstance(design.X, ScaledDense) and np.shares_memory(design.X.raw, X)
    assert design.max_column_norm_sq() == pytest.approx(1.0)  # unit-norm columns and c·1 with c = 1/√m


def test_dense_and_sparse_x_give_the_same_default_fit():
    # dense X goes through ScaledDense, sparse X through an explicit scaled CSR copy: the same mathematics
    pb = random_problem("ls", m=60, n=40, s=4, seed=3)
    dense = SparseLinearRegression(s=4).fit(pb.X, pb.y + 3.0)
    sparse = SparseLinearRegression(s=4).fit(sp.csr_matrix(pb.X), pb.y + 3.0)
    assert dense.support_.tolist() == sparse.support_.tolist()
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-8, atol=1e-10)
    assert dense.intercept_ == pytest.approx(sparse.intercept_, rel=1e-8)


def sigma_max_sq(pb):
    X = pb.X.toarray() if sp.issparse(pb.X) else pb.X
    return np.linalg.norm(X, 2) ** 2


problems = st.builds(random_problem, loss=st.sampled_from(["ls", "logistic"]), m=st.integers(5, 30),
                     n=st.integers(3, 25), s=st.integers(1, 3), seed=st.integers(0, 10_000),
                     sparse=st.booleans(), mu=st.sampled_from([1e-10, 1e-2]))


def backtracking(pb):
    return SparseProblem(pb.X, pb.y, loss=pb.loss, s=pb.s, mu=pb.mu, lipschitz="backtrack", classes=pb.classes)


@settings(max_examples=40, deadline=None)
@given(pb=problems, seed=st.integers(0, 10_000))
def test_a_backtracked_step_satisfies_the_descent_inequality_with_the_l_it_ends_at(pb, seed):
    """f(w⁺) ≤ f(w) − (1 − λL)/(2λ)‖w⁺ − w‖², L from max_j ‖x_j‖² (/4 for logistic), never above 2 L_f."""
    pb = backtracking(pb)
    quarter = 0.25 if pb.loss == "logistic" else 1.0
    assert pb.L == pytest.approx(quarter * np.max(column_norms(pb.X)) ** 2 + pb.ridge, rel=1e-12)
    rng = np.random.default_rng(seed)
    w, J = pb.project(rng.standard_normal(pb.n) * rng.choice([0.1, 1.0, 10.0]))
    p = pb.point(w, J)
    nxt, _ = pb.pg_step(p, pb.full_gradient(p.u, p.w))
    lam, L = pb.lam, pb.L_now
    drop = (1 - lam * L) / (2 * lam) * np.sum((nxt.w - w) ** 2)
    assert nxt.f <= p.f - drop + 1e-9 * max(1.0, abs(p.f))
    assert pb.L <= L <= 2 * (quarter * sigma_max_sq(pb) + pb.ridge) * (1 + 1e-12)


@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_pg_with_a_backtracked_l_decreases_f_and_reaches_a_stationary_point(loss):
    pb = backtracking(random_problem(loss, m=50, n=30, s=3, seed=11, mu=1e-2))
    r = solve(pb, "pg", tol=1e-8, max_iter=20_000)
    f = r.history["objective"].to_numpy()
    assert r.status == "converged" and np.all(np.diff(f) <= 1e-12 * np.maximum(1.0, np.abs(f[:-1])))
    # a fixed point of T_PG at step λ is one at every shorter step: when the backtracked L stayed below the
    # paper's L = σ_max², the point is L-stationary for the paper's step too
    paper = SparseProblem(pb.X, pb.y, loss=loss, s=3, mu=1e-2, classes=pb.classes)
    assert pb.L_now <= paper.L and paper.residual(r.solution["w"]) < 1e-6


@pytest.mark.parametrize("cls", [SparseLinearRegression, SparseLogisticRegression])
def test_backtracked_and_paper_l_find_the_same_subset_on_a_planted_problem(cls):
    loss = "ls" if cls is SparseLinearRegression else "logistic"
    pb = random_problem(loss, m=200, n=60, s=3, seed=5)
    fits = [cls(s=3, lipschitz=mode).fit(pb.X, pb.y) for mode in ("paper", "backtrack")]
    assert fits[0].support_.tolist() == fits[1].support_.tolist()
    assert fits[1].objective_ == pytest.approx(fits[0].objective_, rel=1e-6)
    assert fits[1].lipschitz_ <= 2 * fits[0].lipschitz_  # doubling stops within 2× of the curvature it met


@pytest.mark.parametrize("shape", [(40, 30), (150, 400)])  # the exact small-side eigenvalue, and Lanczos
def test_the_paper_l_of_a_scaled_design_bounds_the_explicit_matrix(shape):
    from solvers.sparse.lipschitz import RTOL, sigma_max_sq_bound

    X = np.random.default_rng(2).standard_normal(shape) * np.linspace(0.5, 5.0, shape[1])
    design = Design.build(X, normalize=True, fit_intercept=True)
    E = explicit(X, design.scale, design.intercept_value)
    exact = np.linalg.norm(E, 2) ** 2
    assert exact * (1 - 1e-12) <= sigma_max_sq_bound(design.X) <= exact * (1 + RTOL) ** 2

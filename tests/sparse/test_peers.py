"""The optional peers (abess, skscope) and the in-house references (OMP, best single feature) of the peers bench."""
import numpy as np
import pytest

from solvers.sparse import SparseLinearRegression, SparseProblem
from solvers.sparse.bench_peers import best_single, objective
from solvers.sparse.peers import abess_fit, available, omp, skscope_fit

from .test_quality import correlated_design
from .test_solvers import brute_force


def test_best_single_feature_is_the_brute_force_optimum_at_s_1():
    X, y = correlated_design(1, m=30, n=12)
    f_star, J = brute_force(SparseProblem(X, y, loss="ls", s=1))
    w = best_single(X, y)
    assert np.flatnonzero(w).tolist() == list(J) and objective(X, y, "ls", w) == pytest.approx(f_star, rel=1e-10)


def test_omp_on_unit_norm_columns_returns_coefficients_in_the_original_units():
    X, y = correlated_design(2, m=30, n=12)
    w = omp(X, y, "ls", 3, normalize=True)
    J = np.flatnonzero(w)
    np.testing.assert_allclose(w[J], np.linalg.lstsq(X[:, J], y, rcond=None)[0], rtol=1e-8)


@pytest.mark.skipif(not available()["abess"], reason="abess is an optional peer: pip install -e '.[peers]'")
@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_abess_and_our_default_agree_with_brute_force_on_a_small_problem(loss):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 10))
    u = X[:, [1, 4, 7]] @ np.array([2.0, -1.5, 1.0])
    y = u + 0.3 * rng.standard_normal(60) if loss == "ls" else np.where(u + rng.standard_normal(60) > 0, 1.0, -1.0)
    pb = SparseProblem(X, y, loss=loss, s=3, mu=0.0 if loss == "ls" else 1e-10)
    f_star, J = brute_force(pb)
    peer = abess_fit(X, y, loss, 3)
    assert np.count_nonzero(peer) <= 3 and objective(X, y, loss, peer) == pytest.approx(f_star, rel=1e-4)
    if loss == "ls":
        ours = SparseLinearRegression(s=3, fit_intercept=False).fit(X, y).coef_
        assert objective(X, y, loss, ours) == pytest.approx(f_star, rel=1e-8)


@pytest.mark.skipif(not available()["skscope"], reason="skscope is an optional peer: pip install -e '.[peers]'")
@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_skscope_returns_an_s_sparse_vector_at_the_brute_force_optimum_on_a_small_problem(loss):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 10))
    u = X[:, [0, 5, 8]] @ np.array([1.5, -2.0, 1.0])
    y = u + 0.3 * rng.standard_normal(60) if loss == "ls" else np.where(u + rng.standard_normal(60) > 0, 1.0, -1.0)
    f_star, _ = brute_force(SparseProblem(X, y, loss=loss, s=3, mu=0.0 if loss == "ls" else 1e-10))
    peer = skscope_fit(X, y, loss, 3)
    assert np.count_nonzero(peer) <= 3 and objective(X, y, loss, peer) == pytest.approx(f_star, rel=1e-4)

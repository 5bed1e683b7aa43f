"""The cheap Lipschitz bound: an upper bound of σ_max(X)² within its tolerance, on every kind of X."""
import numpy as np
import pytest
import scipy.sparse as sp

from solvers.sparse.lipschitz import EXACT_SIDE, RTOL, sigma_max_sq_bound


def exact(X):
    return np.linalg.norm(X.toarray() if sp.issparse(X) else X, 2) ** 2


def below(X, sigma2):
    """sigma2 less the rounding of computing it: the SVD here and the bound's eigvalsh of XXᵀ (or Lanczos) are
    two floating-point routes to σ_max², each off by about (inner dimension)·eps relatively, so where the bound
    is exact (min side ≤ EXACT_SIDE) the two can differ in the last digits either way."""
    return sigma2 * (1 - max(X.shape) * np.finfo(float).eps)


@pytest.mark.parametrize("density", [2e-4, 1e-3, 0.05])
def test_very_sparse_x_gets_a_safe_bound(density):
    # at low density the old fixed all-ones ARPACK start could lie in the null space ("Starting vector is zero")
    X = sp.random(400, 900, density=density, format="csr", random_state=1)
    sigma2 = exact(X)
    assert below(X, sigma2) <= sigma_max_sq_bound(X) <= sigma2 * (1 + RTOL) ** 2


def test_all_ones_start_in_the_null_space():
    # Xᵀ1 = 0: rows in ± pairs, the start vector ARPACK was given is annihilated
    rng = np.random.default_rng(0)
    half = rng.standard_normal((100, 150))
    X = np.vstack([half, -half])
    sigma2 = exact(X)
    assert np.allclose(X.T @ np.ones(200), 0)
    assert below(X, sigma2) <= sigma_max_sq_bound(X) <= sigma2 * (1 + RTOL) ** 2


@pytest.mark.parametrize("shape", [(300, 120), (120, 300), (EXACT_SIDE, 500), (2000, 3)])
def test_dense_tall_wide_and_small_sides(shape):
    X = np.random.default_rng(2).standard_normal(shape)
    sigma2 = exact(X)
    assert below(X, sigma2) <= sigma_max_sq_bound(X) <= sigma2 * (1 + RTOL) ** 2


def test_rank_one_breakdown_is_exact_and_zero_x_is_zero():
    rng = np.random.default_rng(3)
    X = np.outer(rng.standard_normal(200), rng.standard_normal(300))  # Krylov space of dimension 1
    assert sigma_max_sq_bound(X) == pytest.approx(exact(X), rel=1e-10)
    assert sigma_max_sq_bound(sp.csr_matrix((500, 800))) == 0.0
    assert sigma_max_sq_bound(np.zeros((100, 100))) == 0.0


def test_tighter_tolerance_gives_a_tighter_bound():
    X = sp.random(500, 700, density=0.02, format="csr", random_state=4)
    sigma2 = exact(X)
    assert below(X, sigma2) <= sigma_max_sq_bound(X, rtol=1e-6) <= sigma2 * (1 + 1e-6) ** 2


def test_low_density_generator_data_build_a_problem():
    # the sparse generator at low density made ARPACK's fixed all-ones start fail before any work
    from solvers import datasets
    from solvers.sparse import make_problem

    ds = datasets.generate("sparse-regression", m=600, n=900, k=3, density=2e-3, m_test=0, seed=0)
    sigma2 = exact(ds.X)
    assert sigma2 <= make_problem(ds, s=3).L <= sigma2 * (1 + RTOL) ** 2

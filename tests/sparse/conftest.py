import numpy as np
import pytest
import scipy.sparse as sp

from solvers.sparse import SparseProblem


def random_problem(loss="ls", m=20, n=10, s=3, seed=0, sparse=False, mu=1e-10):
    """A small well-posed instance: Gaussian X, k-sparse truth plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    if sparse:
        X[rng.random((m, n)) < 0.5] = 0.0
        X[0, 0] = 1.0  # never all zeros
        X = sp.csr_matrix(X)
    w = np.zeros(n)
    w[rng.choice(n, s, replace=False)] = rng.choice([-2.0, 2.0], s)
    u = np.asarray(X @ w).ravel()
    if loss == "ls":
        y = u + 0.3 * rng.standard_normal(m)
    else:
        y = np.where(u + rng.standard_normal(m) >= 0, 1.0, -1.0)
        y[:2] = (1.0, -1.0)  # both classes, whatever the draw
    return SparseProblem(X, y, loss=loss, s=s, mu=mu)


@pytest.fixture
def make():
    return random_problem

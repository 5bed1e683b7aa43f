"""Small problems shared by the npsvc tests."""
import numpy as np
import pytest

from solvers.npsvc.problem import problem_from_arrays


@pytest.fixture
def blob_problem():
    """Three well separated Gaussian blobs in 3-D, 60 training and 30 test points."""
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0, 0], [4, 0, 0], [0, 4, 0]])
    y = np.arange(90) % 3
    X = centers[y] + rng.standard_normal((90, 3))
    return problem_from_arrays(X[:60], y[:60], kernel="rbf", X_test=X[60:], y_test=y[60:])

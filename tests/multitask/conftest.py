import numpy as np
import pytest

from solvers import multitask as mt
from solvers.datasets import generate


def tiny_problem(loss="least_squares", d=6, m=4, n=8, alpha=1.0, beta=0.5, h=2, intercept=True, seed=0):
    kind = "regression" if loss == "least_squares" else "classification"
    ds = generate("multitask-subspace", d=d, m=m, n_per_task=n, n_test=0, h_true=2, kind=kind, seed=seed)
    return mt.make_problem(ds, loss=loss, alpha=alpha, beta=beta, h=h, intercept=intercept)


@pytest.fixture
def rng():
    return np.random.default_rng(0)

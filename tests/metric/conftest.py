"""Tiny class-balanced problems shared by the metric tests (seconds per whole path)."""
from __future__ import annotations

import numpy as np
import pytest

from solvers import datasets
from solvers.metric import make_problem
from solvers.metric.problem import TripletProblem, lambda_max
from solvers.metric.projected_gradient import minimize


def tiny(name: str = "iris", per_class: int = 8, **params) -> TripletProblem:
    ds = datasets.load(name)
    n_classes = len(ds.classes)
    return make_problem(ds, max_samples=per_class * n_classes, **{"k": 0, **params})


def reference(problem: TripletProblem, lam: float, tol: float = 1e-13):
    """(M*, absolute gap) of a naive solve to a very small relative gap."""
    lam_L, K = lambda_max(problem)
    res = minimize(problem, lam, K / max(lam, lam_L), tol=tol, max_iter=20_000)
    return res.solution["M"], res.info["abs_gap"]


@pytest.fixture(scope="session")
def iris_tiny() -> TripletProblem:
    return tiny("iris", 8)


@pytest.fixture(scope="session")
def wine_tiny() -> TripletProblem:
    return tiny("wine", 6)


@pytest.fixture(scope="session")
def iris_diag() -> TripletProblem:
    return tiny("iris", 8, diagonal=True)


def explicit_H(problem: TripletProblem, t: int) -> np.ndarray:
    """H_t = (x_i − x_l)(x_i − x_l)ᵀ − (x_i − x_j)(x_i − x_j)ᵀ, formed explicitly (tests only)."""
    T, X = problem.triplets, problem.X
    a, b = X[T.i[t]] - X[T.l[t]], X[T.i[t]] - X[T.j[t]]
    return np.outer(a, a) - np.outer(b, b)


def random_psd(d: int, rng) -> np.ndarray:
    A = rng.standard_normal((d, d))
    return A @ A.T / d

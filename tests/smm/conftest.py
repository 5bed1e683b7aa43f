"""Shared tiny SMM instances."""
from __future__ import annotations

import numpy as np
import pytest

from solvers.smm.problem import build_problem


def make_instance(n=60, p=4, q=6, seed=0, flip=0.1):
    """Rank-one signal, Gaussian samples, a few flipped labels (so the hinge is active)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p, q))
    W = np.outer(rng.standard_normal(p), rng.standard_normal(q))
    y = np.sign(np.einsum("ipq,pq->i", X, W) + 1e-12)
    flip_idx = rng.choice(n, int(flip * n), replace=False)
    y[flip_idx] *= -1
    return X, y


@pytest.fixture
def instance():
    return make_instance()


def cvxpy_objective(X, y, C, tau):
    """Model (1) by cvxpy (normNuc + hinge), Clarabel; returns (objective, W)."""
    import cvxpy as cp

    n, p, q = X.shape
    W = cp.Variable((p, q))
    b = cp.Variable()
    scores = X.reshape(n, -1) @ cp.vec(W, order="C") + b
    obj = 0.5 * cp.sum_squares(W) + tau * cp.normNuc(W) + C * cp.sum(cp.pos(1 - cp.multiply(y, scores)))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return prob.value, W.value


@pytest.fixture
def problem(instance):
    X, y = instance
    return build_problem(X, y, C=1.0, tau=1.0)

"""Objective, gradients and the identities of the formulation (digest §1.4)."""
import numpy as np
import pytest
from sklearn.linear_model import Ridge

from solvers import multitask as mt
from solvers.multitask.problem import Point

from .conftest import tiny_problem


def random_point(problem, rng):
    P = np.linalg.qr(rng.standard_normal((problem.d, problem.d)))[0]
    from solvers.core import project_capped_simplex
    M = (P * project_capped_simplex(rng.uniform(-0.5, 1.5, problem.d), problem.h)) @ P.T
    return Point(rng.standard_normal((problem.d, problem.m)), rng.standard_normal(problem.m), M)


@pytest.mark.parametrize("loss", ["least_squares", "logistic", "hinge"])
def test_gradient_matches_finite_differences(loss, rng):
    problem = tiny_problem(loss)
    Z = random_point(problem, rng)
    _, grad = problem.smooth_value_grad(Z)
    D = random_point(problem, rng)
    D.M = 0.5 * (D.M + D.M.T) - np.trace(D.M) / problem.d * np.eye(problem.d)  # a symmetric direction
    eps = 1e-6
    plus = Point(Z.U + eps * D.U, Z.b + eps * D.b, Z.M + eps * D.M)
    minus = Point(Z.U - eps * D.U, Z.b - eps * D.b, Z.M - eps * D.M)
    numeric = (problem.smooth_value(plus) - problem.smooth_value(minus)) / (2 * eps)
    assert grad.dot(D) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_eliminating_v_identity(rng):
    """(1+η)I − ΘᵀΘ = η(1+η)(ηI + ΘᵀΘ)⁻¹, so iASO with v = Θu equals rASO at M = ΘᵀΘ."""
    d, h, eta = 7, 3, 0.4
    Theta = np.linalg.qr(rng.standard_normal((d, h)))[0].T
    lhs = (1 + eta) * np.eye(d) - Theta.T @ Theta
    np.testing.assert_allclose(lhs, eta * (1 + eta) * np.linalg.inv(eta * np.eye(d) + Theta.T @ Theta), atol=1e-12)
    problem = tiny_problem(d=d, h=h, alpha=2.0, beta=0.8)
    U = rng.standard_normal((d, problem.m))
    alpha, beta = problem.alpha, problem.beta
    iaso = sum(alpha * np.sum((U[:, l] - Theta.T @ (Theta @ U[:, l])) ** 2) + beta * U[:, l] @ U[:, l]
               for l in range(problem.m))
    assert problem.coupling(U, Theta.T @ Theta) == pytest.approx(iaso, rel=1e-12)


@pytest.mark.parametrize("h, weight", [("d", "beta"), (0, "alpha+beta")])
def test_h_equal_d_and_h_zero_are_single_task_ridge(h, weight):
    problem = tiny_problem(d=5, m=3, n=12, alpha=0.7, beta=0.3, h=0)
    h = problem.d if h == "d" else 0
    problem = problem.with_params(h=h)
    lam = problem.beta if weight == "beta" else problem.alpha + problem.beta
    for method in ("bcd", "apg"):
        res = mt.solve(problem, method, tol=1e-10, max_iter=5000)
        for ell in range(problem.m):
            X, y = problem.data.task(ell)
            ridge = Ridge(alpha=lam * len(y)).fit(X, y)  # sklearn: ‖y − Xw − b‖² + α‖w‖², ours divided by n
            np.testing.assert_allclose(res.solution["U"][:, ell], ridge.coef_, atol=1e-7)
            assert res.solution["b"][ell] == pytest.approx(ridge.intercept_, abs=1e-7)


def test_eta_and_c():
    p = tiny_problem(alpha=2.0, beta=0.5)
    assert p.eta == pytest.approx(0.25)
    assert p.c == pytest.approx(2.0 * 0.25 * 1.25) and p.c == pytest.approx(p.beta * (1 + p.eta))

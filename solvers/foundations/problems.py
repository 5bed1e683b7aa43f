"""Two-dimensional teaching problems and the constraint sets the seeds' projected methods use.

Objectives: a quadratic with adjustable condition number, Rosenbrock's banana, and ℓ2-regularised
logistic regression on 2-D data. Constraints: none, a box, the ℓ0 ball {‖x‖₀ ≤ 1} (the union of the
two axes, seed 001), and the capped simplex {x₁ + x₂ = 1, 0 ≤ x ≤ 1} (seed 000's eigenvalue set).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit

from ..core import InputError, check_array, check_labels, check_same_length
from ..core.prox import hard_threshold, project_box, project_capped_simplex

WINDOW = ((-2.0, 2.0), (-1.0, 3.0))  # plot window (x-range, y-range) shared by all problems
BOX = ((-1.5, 0.5), (-0.5, 2.5))


@dataclass
class Problem2D:
    name: str
    f: Callable[[np.ndarray], float]
    grad: Callable[[np.ndarray], np.ndarray]
    L: float  # Lipschitz constant of the gradient (over the plot window for Rosenbrock)
    constraint: str
    x0: np.ndarray
    convex: bool
    f_star: float = field(init=False)
    x_star: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.x_star, self.f_star = reference_minimum(self)

    def project(self, x: np.ndarray) -> np.ndarray:
        return project(self.constraint, x)


def project(constraint: str, x: np.ndarray) -> np.ndarray:
    if constraint == "none":
        return x
    if constraint == "box":
        return project_box(x, np.array([BOX[0][0], BOX[1][0]]), np.array([BOX[0][1], BOX[1][1]]))
    if constraint == "l0":
        return hard_threshold(x, 1)[0]
    if constraint == "capped-simplex":
        return project_capped_simplex(x, 1.0)
    raise InputError(f"unknown constraint {constraint!r}")


def quadratic(kappa: float, center=(1.0, 0.5), angle: float = np.pi / 6):
    """f(x) = ½ (x − c)ᵀ A (x − c), A = R diag(1/κ, 1) Rᵀ so that L = 1 and μ = 1/κ."""
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    A = R @ np.diag([1.0 / kappa, 1.0]) @ R.T
    c = np.asarray(center)
    return (lambda x: 0.5 * (x - c) @ A @ (x - c)), (lambda x: A @ (x - c)), 1.0


def rosenbrock(a: float = 1.0, b: float = 100.0):
    """f(x, y) = (a − x)² + b (y − x²)²; L is the largest Hessian norm over the plot window."""
    f = lambda z: (a - z[0]) ** 2 + b * (z[1] - z[0] ** 2) ** 2
    grad = lambda z: np.array([-2 * (a - z[0]) - 4 * b * z[0] * (z[1] - z[0] ** 2), 2 * b * (z[1] - z[0] ** 2)])
    xs, ys = np.meshgrid(np.linspace(*WINDOW[0], 41), np.linspace(*WINDOW[1], 41))
    h11 = 2 - 4 * b * (ys - 3 * xs**2)
    h12 = -4 * b * xs
    h22 = np.full_like(xs, 2 * b)
    # largest eigenvalue magnitude of [[h11, h12], [h12, h22]] at every grid point
    mean, dev = (h11 + h22) / 2, np.sqrt(((h11 - h22) / 2) ** 2 + h12**2)
    return f, grad, float(np.max(np.abs(mean) + dev))


def logistic(X: np.ndarray, y: np.ndarray, mu: float):
    """f(w) = (1/m) Σ log(1 + exp(−yᵢ xᵢᵀw)) + μ/2 ‖w‖², labels ±1, L = σ_max(X)²/(4m) + μ."""
    m = len(y)
    f = lambda w: float(np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.5 * mu * w @ w)
    grad = lambda w: X.T @ (-y * expit(-y * (X @ w))) / m + mu * w
    return f, grad, float(np.linalg.norm(X, 2) ** 2 / (4 * m) + mu)


def reference_minimum(p: Problem2D) -> tuple[np.ndarray, float]:
    """The constrained minimum, computed independently of the methods on the page.

    ℓ0: brute force over the two axes (each a 1-D problem). Box: L-BFGS-B. Capped simplex: a 1-D
    search on the segment. None: BFGS from several starts (Rosenbrock is nonconvex).
    """
    if p.constraint == "l0":
        best = None
        for axis in (0, 1):
            e = np.eye(2)[axis]
            r = minimize_scalar(lambda t: p.f(t * e), bounds=(-50, 50), method="bounded", options={"xatol": 1e-12})
            cand = (r.fun, r.x * e)
            best = cand if best is None or cand[0] < best[0] else best
        return best[1], float(best[0])
    if p.constraint == "capped-simplex":
        r = minimize_scalar(lambda t: p.f(np.array([t, 1 - t])), bounds=(0, 1), method="bounded",
                            options={"xatol": 1e-12})
        x = np.array([r.x, 1 - r.x])
        return x, float(p.f(x))
    bounds = None if p.constraint == "none" else [BOX[0], BOX[1]]
    starts = [p.x0, np.array([1.0, 1.0]), np.zeros(2)]
    runs = [minimize(p.f, s, jac=p.grad, method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-15, "gtol": 1e-12,
                                                                                     "maxiter": 10_000})
            for s in starts]
    best = min(runs, key=lambda r: r.fun)
    return best.x, float(best.fun)


def make_problem2d(name: str, constraint: str, x0: tuple[float, float], kappa: float = 10.0, mu: float = 1e-2,
                   data: tuple[np.ndarray, np.ndarray] | None = None) -> Problem2D:
    start = np.asarray(x0, dtype=float)
    if name == "quadratic":
        f, grad, L = quadratic(kappa)
        convex = True
    elif name == "rosenbrock":
        f, grad, L = rosenbrock()
        convex = False
    elif name == "logistic":
        if data is None:
            raise InputError("the logistic problem needs 2-D data (generate or upload a dataset)")
        X = check_array(data[0], "X")
        if X.shape[1] != 2:
            raise InputError(f"the 2-D logistic problem needs exactly 2 features, the data have {X.shape[1]}")
        check_same_length(X, data[1])
        classes, codes = check_labels(data[1], n_classes=2, what="logistic regression on the plane")
        f, grad, L = logistic(X, np.where(codes == 1, 1.0, -1.0), mu)
        convex = True
    else:
        raise InputError(f"unknown problem {name!r}; choose quadratic, rosenbrock or logistic")
    return Problem2D(name, f, grad, L, constraint, start, convex and constraint != "l0")

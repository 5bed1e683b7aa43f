"""Foundations: gradient descent, heavy ball and Nesterov/FISTA (the t-sequence the seeds' APG
methods use), projected onto a box, the ℓ0 ball or the capped simplex, on 2-D problems.

    from solvers import foundations as fd
    p = fd.make_problem(None, problem="quadratic", kappa=50, constraint="box")
    r = fd.solve(p, "nesterov", tol=1e-8, max_iter=500)
"""
from __future__ import annotations

import numpy as np
from sklearn.datasets import make_blobs

from ..core import Method, Param, Result, solve_with, validate_params
from ..datasets import SEED, Dataset, Generator, register_generator
from .methods import gradient_mapping, run_gd, run_heavy_ball, run_nesterov
from .problems import BOX, WINDOW, Problem2D, make_problem2d

TITLE = "Foundations: gradient, momentum and projection in 2-D"
PAPER = "Textbook methods (Polyak 1964; Nesterov 1983; Beck & Teboulle 2009) behind the seeds' APG algorithms"

STEP = Param("step", 1.0, float, low=0, high=3.0, low_strict=True, symbol=r"\alpha L",
             help="step size as a multiple of 1/L (above 2/L gradient descent diverges on quadratics)",
             ui_range=(0.05, 2.5))
BETA = Param("beta", 0.5, float, low=0, high=1.0, high_strict=True, symbol=r"\beta",
             help="heavy-ball momentum weight", ui_range=(0.0, 0.99))

METHODS = {m.name: m for m in (
    Method("gd", "Gradient descent", run_gd, (STEP,), "x⁺ = P(x − α∇f(x))", "projected gradient"),
    Method("heavy-ball", "Heavy ball", run_heavy_ball, (STEP, BETA), "x⁺ = P(x − α∇f(x) + β(x − x⁻))", "Polyak 1964"),
    Method("nesterov", "Nesterov / FISTA", run_nesterov, (STEP,),
           "y = x + (t_k − 1)/t_{k+1} (x − x⁻), x⁺ = P(y − α∇f(y))", "Beck & Teboulle 2009"),
)}

PROBLEM_PARAMS = [
    Param("problem", "quadratic", str, choices=("quadratic", "rosenbrock", "logistic"), help="objective f"),
    Param("constraint", "none", str, choices=("none", "box", "l0", "capped-simplex"),
          help="feasible set: none, a box, {‖x‖₀ ≤ 1} (the two axes) or {x₁ + x₂ = 1, 0 ≤ x ≤ 1}"),
    Param("kappa", 20.0, float, low=1.0, high=1e4, log=True, symbol=r"\kappa",
          help="condition number of the quadratic", ui_range=(1.0, 1e4)),
    Param("mu", 1e-2, float, low=0, low_strict=True, log=True, symbol=r"\mu",
          help="ridge weight of the logistic problem", ui_range=(1e-4, 1.0)),
    Param("x0", -1.5, float, low=WINDOW[0][0], high=WINDOW[0][1], help="start, first coordinate"),
    Param("y0", 2.0, float, low=WINDOW[1][0], high=WINDOW[1][1], help="start, second coordinate"),
]


def make_problem(dataset: Dataset | None, *, problem: str = "quadratic", constraint: str = "none",
                 kappa: float = 20.0, mu: float = 1e-2, x0: float = -1.5, y0: float = 2.0) -> Problem2D:
    p = validate_params(PROBLEM_PARAMS, dict(problem=problem, constraint=constraint, kappa=kappa, mu=mu, x0=x0, y0=y0))
    data = None if dataset is None else (dataset.dense(), dataset.y)
    return make_problem2d(p["problem"], p["constraint"], (p["x0"], p["y0"]), kappa=p["kappa"], mu=p["mu"], data=data)


def solve(problem: Problem2D, method: str, *, tol: float = 1e-8, max_iter: int = 200, time_limit=None,
          callback=None, **params) -> Result:
    return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit,
                      callback=callback, **params)


def make_blobs_2d(*, n: int, separation: float, seed: int) -> Dataset:
    """Two Gaussian blobs in the plane, labels ±1, centred at ±separation/2 along the diagonal."""
    c = separation / (2 * np.sqrt(2))
    X, y = make_blobs(n_samples=n, centers=[[-c, -c], [c, c]], cluster_std=1.0, random_state=seed)
    return Dataset("blobs-2d", X, np.where(y == 1, 1.0, -1.0), "classification",
                   f"{n} points in two Gaussian blobs, separation {separation}", "synthetic")


register_generator(Generator(
    "blobs-2d", "foundations", make_blobs_2d,
    params=[Param("n", 200, int, low=4, high=5000, help="number of points"),
            Param("separation", 2.0, float, low=0, high=10, help="distance between the blob centres"), SEED],
    description="two Gaussian blobs in the plane (for logistic regression in 2-D)"))

__all__ = ["TITLE", "PAPER", "METHODS", "PROBLEM_PARAMS", "make_problem", "solve", "gradient_mapping", "BOX",
           "WINDOW", "Problem2D"]

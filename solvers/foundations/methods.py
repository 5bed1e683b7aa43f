"""First-order methods on the plane: projected gradient, heavy ball, Nesterov/FISTA.

All three take the step α = step·(1/L) and project onto the constraint set after the step,
so with constraint "none" they are the textbook unconstrained methods. The optimality measure is
the gradient mapping ‖x − P(x − ∇f(x)/L)‖·L, zero exactly at stationary points of the constrained problem.
"""
from __future__ import annotations

import numpy as np

from ..core import HistoryRecorder, Result
from ..core.prox import fista_momentum
from .problems import Problem2D


def gradient_mapping(p: Problem2D, x: np.ndarray) -> float:
    return float(np.linalg.norm(x - p.project(x - p.grad(x) / p.L)) * p.L)


def _record(rec: HistoryRecorder, p: Problem2D, k: int, x: np.ndarray, grad_evals: int) -> str | None:
    fx = p.f(x)
    return rec.record(k, objective=fx, gap=fx - p.f_star, grad_map=gradient_mapping(p, x), x=float(x[0]),
                      y=float(x[1]), grad_evals=grad_evals)


def run_momentum(p: Problem2D, *, tol: float, max_iter: int, time_limit, callback, step: float,
                 momentum: str, beta: float = 0.0) -> Result:
    """x_{k+1} = P(y_k − α ∇f(y_k)) with y_k = x_k + β_k (x_k − x_{k−1}) (Nesterov) or
    x_{k+1} = P(x_k − α ∇f(x_k) + β (x_k − x_{k−1})) (heavy ball); β_k = 0 gives projected gradient."""
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="grad_map")
    alpha = step / p.L
    x = p.project(p.x0.copy())
    x_prev = x.copy()
    t = 1.0
    k = 0
    while not _record(rec, p, k, x, k):
        if momentum == "nesterov":
            beta_k, t = fista_momentum(t)  # β_k = (t_k − 1)/t_{k+1}
            y = x + beta_k * (x - x_prev)
            x_next = p.project(y - alpha * p.grad(y))
        elif momentum == "heavy-ball":
            x_next = p.project(x - alpha * p.grad(x) + beta * (x - x_prev))
        else:
            x_next = p.project(x - alpha * p.grad(x))
        x_prev, x = x, x_next
        k += 1
    return rec.result({"x": x}, grad_evals=k)


def run_gd(p, **kw):
    return run_momentum(p, momentum="none", **kw)


def run_heavy_ball(p, **kw):
    return run_momentum(p, momentum="heavy-ball", **kw)


def run_nesterov(p, **kw):
    return run_momentum(p, momentum="nesterov", **kw)

"""A warm-started path over s = 1 … s_max with one L (see polish.py for the swap step)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .polish import column_norms, swap_polish
from .problem import SparseProblem


@dataclass
class Fit:
    """One solve at one s: the solver's point, then (optionally) the swap polish."""

    w: np.ndarray
    objective: float
    status: str
    n_iter: int
    grad_evals: int
    swaps: int = 0
    history: object = None
    info: dict = field(default_factory=dict)


def fit_one(problem: SparseProblem, method: str, *, polish: bool, tol: float, max_iter: int,
            time_limit: float | None = None, params: dict | None = None, norms: np.ndarray | None = None) -> Fit:
    from . import solve  # the package's solve (late import: the package imports this module)

    r = solve(problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit, **(params or {}))
    w, f, swaps, ge = r.solution["w"], problem.objective(r.solution["w"]), 0, r.info["grad_evals"]
    if polish:
        point, pinfo = swap_polish(problem, w, norms)
        if point.f <= f:  # the refit on the same support alone never increases f; guard round-off
            w, f, swaps, ge = point.w, point.f, pinfo.swaps, ge + pinfo.grad_evals
    return Fit(w, f, r.status, r.info["n_iter"], ge, swaps, r.history, r.info)


def fit_path(problem: SparseProblem, s_max: int, method: str, *, polish: bool, tol: float, max_iter: int,
             time_limit: float | None = None, params: dict | None = None) -> list[Fit]:
    """Fits at s = 1 … s_max, each started from the previous one; ``problem``'s own s is ignored."""
    norms = column_norms(problem.X) if polish else None
    fits: list[Fit] = []
    w = None
    for s in range(1, s_max + 1):
        fit = fit_one(problem.with_start(s, w), method, polish=polish, tol=tol, max_iter=max_iter,
                      time_limit=time_limit, params=params, norms=norms)
        fits.append(fit)
        w = fit.w
    return fits

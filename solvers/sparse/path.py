"""Starts beyond w⁰ = 0: a warm-started path over s = 1 … s_max with one L, and a greedy forward start
(see polish.py for the swap step that follows each)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .polish import swap_polish
from .problem import SparseProblem
from .restricted import refit


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
    fit = Fit(r.solution["w"], problem.objective(r.solution["w"]), r.status, r.info["n_iter"], r.info["grad_evals"],
              0, r.history, r.info)
    return polished(problem, fit, norms) if polish else fit


def polished(problem: SparseProblem, fit: Fit, norms: np.ndarray | None = None) -> Fit:
    """``fit`` after the swap polish. The polish depends only on the support it starts from (it refits there
    first), so fits that end on the same support need it once."""
    point, pinfo = swap_polish(problem, fit.w, norms)
    if point.f > fit.objective:  # the refit on the same support alone never increases f; guard round-off
        return fit
    return replace(fit, w=point.w, objective=point.f, swaps=pinfo.swaps, grad_evals=fit.grad_evals + pinfo.grad_evals)


def fit_path(problem: SparseProblem, s_max: int, method: str, *, polish: bool, tol: float, max_iter: int,
             time_limit: float | None = None, params: dict | None = None) -> list[Fit]:
    """Fits at s = 1 … s_max, each started from the previous one; ``problem``'s own s is ignored."""
    norms = problem.column_norms() if polish else None
    fits: list[Fit] = []
    w = None
    for s in range(1, s_max + 1):
        fit = fit_one(problem.with_start(s, w), method, polish=polish, tol=tol, max_iter=max_iter,
                      time_limit=time_limit, params=params, norms=norms)
        fits.append(fit)
        w = fit.w
    return fits


def greedy_support(problem: SparseProblem, s: int, norms: np.ndarray) -> np.ndarray:
    """Forward selection: s times add the column with the largest |∇_j f| / ‖x_j‖ at the refit on the
    current support (for LS this is orthogonal matching pursuit on unit-norm columns; s GE, s refits)."""
    head = problem.n - problem.n_free
    free = np.arange(head, problem.n)
    safe = np.where(norms > 0, norms, np.inf)
    S = np.empty(0, dtype=np.intp)
    x, _ = refit(problem, free) if free.size else (problem.start(), 0)
    for _ in range(s):
        score = np.abs(problem.full_gradient(x.u, x.w)[:head]) / safe[:head]
        score[S] = -np.inf
        S = np.sort(np.r_[S, int(np.argmax(score))])
        x, _ = refit(problem, np.r_[S, free], x.w)
    return x.w


def fit_greedy(problem: SparseProblem, method: str, *, polish: bool, tol: float, max_iter: int,
               time_limit: float | None = None, params: dict | None = None, norms: np.ndarray | None = None) -> Fit:
    """The solver started at the greedy support's refit, then (optionally) the swap polish."""
    norms = problem.column_norms() if norms is None else norms
    start = greedy_support(problem, problem.s, norms)
    return fit_one(problem.with_start(problem.s, start), method, polish=polish, tol=tol, max_iter=max_iter,
                   time_limit=time_limit, params=params, norms=norms)

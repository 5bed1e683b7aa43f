"""GraSP (Bahmani, Raj & Boufounos, JMLR 2013): the greedy baseline of Appendix C.4 / Fig. 6.

From x⁰ = 0, repeat
  1. g = ∇f(x)                                  (one GE; it also gives Residual(x) of (24))
  2. Z = the 2s largest |g_i|;  T = Z ∪ supp(x)  (|T| ≤ 3s)
  3. b = argmin f(u) s.t. supp(u) ⊆ T           (LS: least squares on X_T; logistic: damped Newton)
  4. x = H_s(b)
Reimplemented from that paper's description (the authors of seed 001 ran the original MATLAB
code). GraSP is not a descent method and need not reach a point with residual (24) below tol,
so a second rule ends the run (``info["stalled"] = True``): the pruned support is the one of the
previous iteration and f changed by at most tol (relative), or the support has not changed for
SUPPORT_PATIENCE iterations (an inexact inner solve makes f jitter at its own tolerance, which kept
the old rule, x unchanged bit for bit, from firing). The run then returns the refit of f on the
kept support (step 4 alone leaves a pruned vector that is not optimal on its own support) and
records it as a last row, residual (24) included (one more GE): the status is ``converged`` only
when that residual meets tol, else ``stopped``. Unpenalised columns (an intercept) are always in T.
"""
from __future__ import annotations

import numpy as np

from ..core import HistoryRecorder, Param, Result, relative_change
from .accelerated import check_problem
from .problem import Point, SparseProblem, residual_value
from .restricted import refit, restricted_minimiser

SUPPORT_PATIENCE = 3

GRASP_PARAMS: tuple[Param, ...] = (
    Param("inner_max_iter", 200, int, low=1, high=10_000,
          help="iteration cap of the restricted solve (Newton or L-BFGS for logistic, LSQR for sparse LS)"),
)


def run_grasp(problem: SparseProblem, *, tol: float, max_iter: int, time_limit: float | None, callback,
              inner_max_iter: int) -> Result:
    problem = check_problem(problem)
    s = problem.s
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="residual")
    x = problem.start()
    free = np.arange(problem.n - problem.n_free, problem.n)
    ge = inner = same_support = 0
    stalled = False
    for k in range(1, max_iter + 1):
        g = problem.full_gradient(x.u, x.w)
        ge += 1
        Z = np.argpartition(-np.abs(g), min(2 * s, problem.n) - 1)[: min(2 * s, problem.n)]
        T = np.union1d(np.union1d(Z, np.flatnonzero(x.w)), free)
        bT, evals = restricted_minimiser(problem, T, x.w[T], inner_max_iter)
        inner += evals
        b = np.zeros(problem.n)
        b[T] = bT
        w_new, J = problem.project(b, prefer=x.J)
        if rec.record(k, objective=x.f, residual=_residual(problem, x, g), grad_evals=ge, inner_evals=inner,
                      support_size=int(np.count_nonzero(x.w)),
                      support_changes=int(np.setxor1d(x.J, J, assume_unique=True).size)):
            break
        new = problem.point(w_new, J)
        same_support = same_support + 1 if np.array_equal(J, x.J) else 0
        if same_support and (relative_change(new.f, x.f) <= tol or same_support >= SUPPORT_PATIENCE):
            stalled = True
            break
        x = new
    if stalled:
        if np.count_nonzero(x.w):
            x, evals = refit(problem, np.union1d(np.flatnonzero(x.w), free), x.w, inner_max_iter)
            inner += evals
        g = problem.full_gradient(x.u, x.w)
        ge += 1
        if not rec.record(k + 1, objective=x.f, residual=_residual(problem, x, g), grad_evals=ge, inner_evals=inner,
                          support_size=int(np.count_nonzero(x.w)), support_changes=0):
            rec.stop("stopped")  # stalled short of the tolerance
    return rec.result({"w": x.w, "support": np.flatnonzero(x.w)}, grad_evals=ge, hess_vec=0, inner_evals=inner,
                      stalled=stalled, L=problem.L_now, lam=problem.lam, s=s)


def _residual(problem: SparseProblem, x: Point, g: np.ndarray) -> float:
    """Residual (24) at the point x, given g = ∇f(x)."""
    pg_w, _ = problem.project(x.w - problem.lam * g, prefer=x.J)
    return residual_value(x.w, pg_w, g, problem.lam)

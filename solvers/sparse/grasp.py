"""GraSP (Bahmani, Raj & Boufounos, JMLR 2013): the greedy baseline of Appendix C.4 / Fig. 6.

From x⁰ = 0, repeat
  1. g = ∇f(x)                                  (one GE; it also gives Residual(x) of (24))
  2. Z = the 2s largest |g_i|;  T = Z ∪ supp(x)  (|T| ≤ 3s)
  3. b = argmin f(u) s.t. supp(u) ⊆ T           (LS: least squares on X_T; logistic: L-BFGS)
  4. x = H_s(b)
Reimplemented from that paper's description (the authors of seed 001 ran the original MATLAB
code). GraSP is not a descent method and need not reach a point with residual (24) below tol:
when x stops changing the run ends with status ``stopped`` and ``info["stalled"] = True``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.linalg import lsqr

from ..core import HistoryRecorder, Param, Result
from .accelerated import check_problem
from .problem import SparseProblem, residual_value

DENSE_SUBMATRIX_LIMIT = 2_000_000

GRASP_PARAMS: tuple[Param, ...] = (
    Param("inner_max_iter", 200, int, low=1, high=10_000,
          help="iteration cap of the restricted solve (L-BFGS for logistic, LSQR for sparse LS)"),
)


def _restricted_minimiser(problem: SparseProblem, T: np.ndarray, x0: np.ndarray, inner_max_iter: int) -> tuple[np.ndarray, int]:
    """argmin f over supp ⊆ T, warm-started at x0[T]; returns (b_T, restricted evaluations)."""
    XT = problem.columns(T)
    if sp.issparse(XT) and XT.shape[0] * XT.shape[1] <= DENSE_SUBMATRIX_LIMIT:
        XT = XT.toarray()  # m × 3s columns only: small enough to solve directly
    if problem.loss == "ls":
        if sp.issparse(XT):
            out = lsqr(XT, problem.y, atol=1e-12, btol=1e-12, iter_lim=inner_max_iter, x0=x0)
            return out[0], int(out[2])
        return np.linalg.lstsq(XT, problem.y, rcond=None)[0], 1
    mu = problem.ridge

    def fun(v: np.ndarray):
        u = np.asarray(XT @ v).ravel()
        return problem.value(u, float(v @ v)), np.asarray(XT.T @ problem.dloss(u)).ravel() + mu * v

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": inner_max_iter, "gtol": 1e-12})
    return res.x, int(res.nfev)


def run_grasp(problem: SparseProblem, *, tol: float, max_iter: int, time_limit: float | None, callback,
              inner_max_iter: int) -> Result:
    problem = check_problem(problem)
    s = problem.s
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="residual")
    x = problem.start()
    ge = inner = 0
    stalled = False
    for k in range(1, max_iter + 1):
        g = problem.full_gradient(x.u, x.w)
        ge += 1
        pg_w, _ = problem.project(x.w - problem.lam * g, prefer=x.J)
        res = residual_value(x.w, pg_w, g, problem.lam)
        Z = np.argpartition(-np.abs(g), min(2 * s, problem.n) - 1)[: min(2 * s, problem.n)]
        T = np.union1d(Z, np.flatnonzero(x.w))
        bT, evals = _restricted_minimiser(problem, T, x.w[T], inner_max_iter)
        inner += evals
        b = np.zeros(problem.n)
        b[T] = bT
        w_new, J = problem.project(b, prefer=x.J)
        status = rec.record(k, objective=x.f, residual=res, grad_evals=ge, inner_evals=inner,
                            support_size=int(np.count_nonzero(x.w)),
                            support_changes=int(np.setxor1d(x.J, J, assume_unique=True).size))
        if status:
            break
        if np.array_equal(w_new, x.w):
            stalled = True
            rec.stop("stopped")
            break
        x = problem.point(w_new, J)
    return rec.result({"w": x.w, "support": np.flatnonzero(x.w)}, grad_evals=ge, hess_vec=0, inner_evals=inner,
                      stalled=stalled, L=problem.L, lam=problem.lam, s=s)

"""Minimising f over a fixed support T (the "refit" that GraSP, the swap polish and the path use).

LS: least squares on the |T| columns X_T (dense lstsq; LSQR when X_T is sparse and large).
Logistic: damped Newton on the |T| coordinates (|T| × |T| Hessian; L-BFGS when X_T stays sparse),
through the margin u = X_T v.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.sparse.linalg import lsqr

from .problem import Point, SparseProblem

DENSE_SUBMATRIX_LIMIT = 2_000_000


def restricted_minimiser(problem: SparseProblem, T: np.ndarray, x0: np.ndarray, max_iter: int) -> tuple[np.ndarray, int]:
    """argmin f over supp ⊆ T, warm-started at x0 (the coefficients on T); returns (b_T, restricted evaluations)."""
    XT = problem.columns(T)
    if sp.issparse(XT) and XT.shape[0] * XT.shape[1] <= DENSE_SUBMATRIX_LIMIT:
        XT = XT.toarray()  # m × |T| columns only: small enough to solve directly
    if problem.loss == "ls":
        if sp.issparse(XT):
            out = lsqr(XT, problem.y, atol=1e-12, btol=1e-12, iter_lim=max_iter, x0=x0)
            return out[0], int(out[2])
        return np.linalg.lstsq(XT, problem.y, rcond=None)[0], 1
    if sp.issparse(XT):  # too many columns to densify: L-BFGS through sparse products
        return _lbfgs(problem, XT, x0, max_iter)
    return _newton(problem, XT, x0, max_iter)


def _newton(problem: SparseProblem, XT: np.ndarray, x0: np.ndarray, max_iter: int) -> tuple[np.ndarray, int]:
    """Damped Newton on the |T| coordinates (H = X_TᵀDX_T + μI is |T| × |T|, small), Armijo backtracking;
    stops at ‖∇‖ ≤ 1e-10 (1 + |f|) or after max_iter steps (separable data have no minimiser)."""
    mu = problem.ridge
    v = np.array(x0, dtype=float)
    u = XT @ v
    f = problem.value(u, float(v @ v))
    evals = 1
    for _ in range(max_iter):
        g = XT.T @ problem.dloss(u) + mu * v
        if np.linalg.norm(g) <= 1e-10 * (1.0 + abs(f)):
            break
        H = XT.T @ (problem.curvature(u)[:, None] * XT) + mu * np.eye(v.size)
        H[np.diag_indices_from(H)] += 1e-12 * max(float(np.trace(H)) / v.size, 1e-300)  # PSD → PD
        p = -np.linalg.solve(H, g)
        slope, t = float(g @ p), 1.0
        if slope >= 0:
            break
        Xp = XT @ p
        while True:
            v_new = v + t * p
            f_new = problem.value(u + t * Xp, float(v_new @ v_new))
            evals += 1
            if f_new <= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        if f_new > f:
            break
        v, u, f = v_new, u + t * Xp, f_new
    return v, evals


def _lbfgs(problem: SparseProblem, XT, x0: np.ndarray, max_iter: int) -> tuple[np.ndarray, int]:
    mu = problem.ridge

    def fun(v: np.ndarray):
        u = np.asarray(XT @ v).ravel()
        return problem.value(u, float(v @ v)), np.asarray(XT.T @ problem.dloss(u)).ravel() + mu * v

    res = minimize(fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "gtol": 1e-12})
    return res.x, int(res.nfev)


def refit(problem: SparseProblem, T: np.ndarray, x0: np.ndarray | None = None, max_iter: int = 500) -> tuple[Point, int]:
    """The point of support ⊆ T minimising f (T sorted, |T| ≤ s plus the unpenalised columns)."""
    T = np.sort(np.asarray(T, dtype=np.intp))
    bT, evals = restricted_minimiser(problem, T, np.zeros(T.size) if x0 is None else x0[T], max_iter)
    w = np.zeros(problem.n)
    w[T] = bT
    return problem.point(w, T), evals

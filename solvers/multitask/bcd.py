"""BCD, Algorithm 2 (Appendix B.1): alternate an exact U-step and the exact M-step of Eq. (71).

U-step for fixed M (A = ηI + M), per task, with c_ℓ = c·n_ℓ once (64)'s 1/n_ℓ is multiplied out (E6):
* least squares (digest §2.4): u_ℓ = (X̄ᵀX̄/n + cA⁻¹)⁻¹ X̄ᵀȳ/n, or the kernel form
  u_ℓ = A X̄ᵀ(X̄AX̄ᵀ + c n I)⁻¹ ȳ when n_ℓ < d; with a bias, X̄ and ȳ are centred and b = mean(y) − mean(x)ᵀu;
* logistic: Newton's method with backtracking on the (d+1)-dimensional smooth problem;
* hinge: the dual (70) as a standard SVM with the precomputed kernel XAXᵀ and C = 1/(2c_ℓ), then
  u = A X diag(y) β / (2c_ℓ) (the recovery missing from the file, E8), i.e. A Xᵀ_sv · dual_coef.
M-step: ``subspace.m_step`` (thin SVD of U, Eq. (71), fill-in when q < h). Eq. (71) is solved by
sort-and-interpolate by default: in numpy it beats the corrected linear-time Algorithm 3 (also available)
for q up to a few thousand (see docs/benchmarks/multitask.md), and q ≤ min(d, m) here.
Each block is minimised exactly, so F decreases monotonically.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit
from sklearn.svm import SVC

from ..core import HistoryRecorder, Param, Result, relative_change
from .eq14 import EQ14_METHODS
from .problem import MEASURE, MultiTaskProblem, Point, SpectraLog
from .proximal_gradient import SPECTRA_PARAM
from .subspace import m_step

BCD_PARAMS = (
    Param("eq14_method", "sort", str, choices=EQ14_METHODS,
          help="solver of Eq. (71) in the M-step: sort-and-interpolate (fastest for q up to a few thousand, see the benchmark), corrected Algorithm 3 (linear time) or bisection"),
    Param("svm_tol", 1e-8, float, low=0, low_strict=True, log=True, ui_range=(1e-12, 1e-3),
          help="LIBSVM tolerance of the hinge U-step (an inexact U-step breaks monotone descent)"),
    Param("svm_max_iter", 1_000_000, int, low=1, high=10**9, log=True,
          help="LIBSVM iteration cap per task in the hinge U-step (C = 1/(2cn) is huge when c is tiny, and "
               "LIBSVM would run for minutes); capped solves are counted in the history column svm_capped"),
    SPECTRA_PARAM,
)


BATCH_LIMIT = 2 * 10**7  # m·d² entries: above this the per-task Gram matrices are not stored


def use_batched_moments(problem: MultiTaskProblem) -> bool:
    """The stacked d × d solves pay off when tasks have more rows than features (School); with n_ℓ < d the
    per-task kernel form (an n_ℓ × n_ℓ system) is cheaper, and above BATCH_LIMIT the moments do not fit."""
    return problem.m * problem.d**2 <= BATCH_LIMIT and problem.d <= np.median(problem.data.sizes)


def _ls_moments(problem: MultiTaskProblem):
    """Per task: (X̄ᵀX̄/n, X̄ᵀȳ/n, mean x, mean y) with X̄, ȳ centred when there is a bias. Computed once per
    data set and reused by every U-step (they do not depend on α, β, h or M)."""
    key = ("ls_moments", problem.intercept)
    if key not in problem.cache:
        data, d, m = problem.data, problem.d, problem.m
        G, r = np.empty((m, d, d)), np.empty((m, d))
        x_mean, y_mean = np.zeros((m, d)), np.zeros(m)
        for ell in range(m):
            X, y = data.task(ell)
            if problem.intercept:
                x_mean[ell], y_mean[ell] = X.mean(0), y.mean()
            Xc, yc = X - x_mean[ell], y - y_mean[ell]
            G[ell], r[ell] = Xc.T @ Xc / len(y), Xc.T @ yc / len(y)
        problem.cache[key] = (G, r, x_mean, y_mean)
    return problem.cache[key]


def _u_least_squares_batched(problem: MultiTaskProblem, A_inv: np.ndarray):
    """All tasks at once: u_ℓ = (X̄ᵀX̄/n + cA⁻¹)⁻¹ X̄ᵀȳ/n as one stacked solve."""
    G, r, x_mean, y_mean = _ls_moments(problem)
    U = np.linalg.solve(G + problem.c * A_inv, r[:, :, None])[:, :, 0]  # (m, d)
    return U.T, y_mean - np.einsum("ld,ld->l", x_mean, U)


def _u_least_squares(X, y, A, A_inv, c, intercept):
    n, d = X.shape
    x_mean, y_mean = (X.mean(0), y.mean()) if intercept else (np.zeros(d), 0.0)
    Xc, yc = X - x_mean, y - y_mean
    if n < d:  # kernel form: an n × n system
        XA = Xc @ A
        u = XA.T @ np.linalg.solve(XA @ Xc.T + c * n * np.eye(n), yc)
    else:
        u = np.linalg.solve(Xc.T @ Xc / n + c * A_inv, Xc.T @ yc / n)
    return u, y_mean - x_mean @ u


def _u_logistic(X, y, A_inv, c, intercept, u0, b0, max_newton=100):
    n, d = X.shape
    Xt = np.hstack([X, np.ones((n, 1))]) if intercept else X
    w = np.append(u0, b0) if intercept else u0.copy()
    R = np.zeros((Xt.shape[1], Xt.shape[1]))
    R[:d, :d] = 2.0 * c * A_inv  # Hessian of c uᵀA⁻¹u, zero on b

    def value(w):
        return np.logaddexp(0.0, -y * (Xt @ w)).mean() + 0.5 * w @ R @ w

    f = value(w)
    for _ in range(max_newton):
        p = expit(-y * (Xt @ w))
        grad = Xt.T @ (-y * p) / n + R @ w
        H = (Xt.T * (p * (1 - p) / n)) @ Xt + R
        step = np.linalg.solve(H, grad)
        decrement = grad @ step
        if decrement <= 1e-20 * max(1.0, f):
            break
        s = 1.0
        while (f_new := value(w - s * step)) > f - 0.25 * s * decrement:
            s *= 0.5
            if s < 1e-10:  # no progress left at this precision
                return (w[:d], w[d]) if intercept else (w, 0.0)
        w, f = w - s * step, f_new
    return (w[:d], w[d]) if intercept else (w, 0.0)


def _u_hinge(X, y, A, c, svm_tol, svm_max_iter):
    """(u, b, whether LIBSVM stopped at its iteration cap)."""
    n = X.shape[0]
    XA = X @ A
    svm = SVC(C=1.0 / (2.0 * c * n), kernel="precomputed", tol=svm_tol, max_iter=svm_max_iter)
    with warnings.catch_warnings():  # the cap is reported in the history (svm_capped); solvers never print
        warnings.simplefilter("ignore")
        svm.fit(XA @ X.T, y)
    u = XA[svm.support_].T @ svm.dual_coef_[0]
    return u, float(svm.intercept_[0]), int(svm.n_iter_[0]) >= svm_max_iter


def u_step(problem: MultiTaskProblem, Z: Point, svm_tol: float = 1e-8, svm_max_iter: int = 1_000_000,
           out_of_time=None) -> tuple[np.ndarray, np.ndarray, int] | None:
    """argmin over (U, b) of F(U, b, M) for the fixed M of Z (task by task), and the number of tasks whose
    LIBSVM solve hit ``svm_max_iter``. None when ``out_of_time()`` turns true between two hinge tasks."""
    A = problem.eta * np.eye(problem.d) + Z.M
    A_inv = cho_solve(cho_factor(A), np.eye(problem.d))
    if problem.loss == "least_squares" and use_batched_moments(problem):
        return *_u_least_squares_batched(problem, A_inv), 0
    U, b, capped = np.empty_like(Z.U), np.zeros(problem.m), 0
    for ell in range(problem.m):
        X, y = problem.data.task(ell)
        if problem.loss == "least_squares":
            U[:, ell], b[ell] = _u_least_squares(X, y, A, A_inv, problem.c, problem.intercept)
        elif problem.loss == "logistic":
            U[:, ell], b[ell] = _u_logistic(X, y, A_inv, problem.c, problem.intercept, Z.U[:, ell], Z.b[ell])
        else:
            if out_of_time is not None and out_of_time():
                return None
            U[:, ell], b[ell], hit_cap = _u_hinge(X, y, A, problem.c, svm_tol, svm_max_iter)
            capped += hit_cap
    return U, b, capped


def run_bcd(problem: MultiTaskProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
            eq14_method: str = "sort", svm_tol: float = 1e-8, svm_max_iter: int = 1_000_000,
            spectra: bool = False) -> Result:
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure=MEASURE)
    Z = problem.initial_point()  # line 4: any feasible M
    F = problem.objective(Z)
    log = SpectraLog(problem, spectra)
    with rec.excluded():
        log.record(Z)
        row0 = {MEASURE: problem.grad_map(Z), "rel_change": np.nan}
        if problem.loss == "hinge":
            row0["svm_capped"] = 0
    status = rec.record(0, objective=F, **row0)

    def out_of_time() -> bool:
        return time_limit is not None and rec.elapsed >= time_limit

    k = capped_total = 0
    while status is None:
        step = u_step(problem, Z, svm_tol, svm_max_iter, out_of_time)  # line 6
        if step is None:  # the time ran out inside the U-step: keep the last complete iterate
            rec.stop("time_limit")
            break
        U, b, capped = step
        if not (np.isfinite(U).all() and np.isfinite(b).all()):  # the U-step overflowed: keep the last iterate
            rec.stop("diverged")
            break
        k += 1
        capped_total += capped
        Z = Point(U, b, m_step(U, problem.eta, problem.h, eq14_method))  # lines 7–9
        F_new = problem.objective(Z)
        change, F = relative_change(F_new, F), F_new
        with rec.excluded():
            log.record(Z)
            row = {MEASURE: problem.grad_map(Z), "rel_change": change}
            if problem.loss == "hinge":
                row["svm_capped"] = capped  # tasks whose LIBSVM stopped at svm_max_iter: an inexact U-step
        status = rec.record(k, objective=F, **row)
    return rec.result(problem.solution(Z), u_steps=k, m_steps=k, svm_capped=capped_total, **log.info())

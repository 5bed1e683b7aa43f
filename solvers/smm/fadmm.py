"""F-ADMM: the SMM solver of Luo, Xie, Zhang & Li (ICML 2015) — ADMM on S − W = 0 with
H(W, b) = ½‖W‖² + C·hinge and G(S) = τ‖S‖_*, accelerated with restart (Goldstein et al. 2014).
The seed paper only cites it; the steps follow the digest (§5.3):

    f = e − y∘X(λ̂ + ρŝ)/(ρ + 1),   α = argmin ½αᵀKα − fᵀα  s.t. yᵀα = 0, 0 ≤ α ≤ C,
    K_ij = y_i y_j ⟨X_i, X_j⟩/(ρ + 1)                                   (an n×n dual box-QP)
    W = (λ̂ + ρŝ + Σ α_i y_i X_i)/(ρ + 1),  b from the margin samples 0 < α_i < C
    S = Prox_{τ‖·‖_*}(ρW − λ̂)/ρ,  λ = λ̂ − ρ(W − S),  c_k = ‖λ − λ̂‖²/ρ + ρ‖S − ŝ‖²
    c_k < η c_{k−1}: Nesterov extrapolation of (S, λ); else restart from the previous iterate.

The box-QP (LIBQP's GSMO in the original) is solved by OSQP with its factorisation of K kept
across iterations (only f changes) and warm starts; K is dense n×n, which is F-ADMM's memory
bottleneck (the paper's "-" entries for n ≥ 1e5). SMM multipliers: λ_SMM = −α, Λ_SMM = −λ.
"""
from __future__ import annotations

import numpy as np
import osqp
import scipy.sparse as sp

from ..core import HistoryRecorder, Param, check_memory, fista_momentum, singular_value_threshold
from .alm import measures
from .problem import SMMProblem, kkt_residuals, project_spectral_ball

FADMM_PARAMS = (
    Param("rho", 10.0, float, low=0, low_strict=True, log=True, help="ADMM penalty ρ", symbol=r"\rho",
          ui_range=(0.1, 1000.0)),
    Param("eta", 0.999, float, low=0, low_strict=True, high=1, high_strict=True,
          help="restart threshold η (restart when c_k ≥ η c_{k−1})", symbol=r"\eta"),
    Param("obj_opt", None, float, help="reference optimum: when given, stop at Relobj (47) ≤ tol (Tables 3–5)"),
)


def margin_intercept(alpha: np.ndarray, y: np.ndarray, f: np.ndarray, C: float) -> float:
    """b from the margin samples, or the midpoint of the interval the complementarity allows."""
    edge = 1e-8 * C
    free = (alpha > edge) & (alpha < C - edge)
    if free.any():
        return float(np.mean(y[free] - f[free]))
    at_zero, at_C = alpha <= edge, alpha >= C - edge
    lower = np.r_[1 - f[at_zero & (y > 0)], -1 - f[at_C & (y < 0)]]  # y(f + b) ≥ 1 or ≤ 1 bounds on b
    upper = np.r_[1 - f[at_C & (y > 0)], -1 - f[at_zero & (y < 0)]]
    lo = lower.max() if lower.size else None
    hi = upper.min() if upper.size else None
    if lo is None and hi is None:
        return 0.0
    if lo is None or hi is None:
        return float(hi if lo is None else lo)
    return 0.5 * float(lo + hi)


def dual_qp_solver(problem: SMMProblem, rho: float, eps: float) -> osqp.OSQP:
    n = problem.n
    check_memory(3.0 * 8 * n * n, f"F-ADMM's dense {n}×{n} dual kernel")
    Z = np.asarray(problem.X, float) * problem.y[:, None]
    K = (Z @ Z.T) / (rho + 1.0)
    cons = sp.vstack([sp.csr_matrix(problem.y[None, :]), sp.identity(n, format="csr")]).tocsc()
    lower = np.zeros(n + 1)
    upper = np.r_[0.0, np.full(n, problem.C)]
    solver = osqp.OSQP()
    solver.setup(sp.triu(sp.csc_matrix(K), format="csc"), -np.ones(n), cons, lower, upper, verbose=False,
                 eps_abs=eps, eps_rel=eps, polishing=True, max_iter=10_000, warm_starting=True)
    return solver


def run_fadmm(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              rho: float = 10.0, eta: float = 0.999, obj_opt: float | None = None):
    n, (p, q), C, tau = problem.n, problem.shape, problem.C, problem.tau
    X, y = problem.X, problem.y
    qp = dual_qp_solver(problem, rho, max(tol / 100.0, 1e-10))
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    S = S_prev = S_hat = np.zeros((p, q))
    lam = lam_prev = lam_hat = np.zeros((p, q))
    t, c_prev, restarts = 1.0, np.inf, 0
    for k in range(1, max_iter + 1):
        center = (lam_hat + rho * S_hat).ravel()
        f = 1.0 - y * np.asarray(X @ center.astype(X.dtype), float) / (rho + 1.0)
        qp.update(q=-f)
        alpha = np.clip(qp.solve().x, 0.0, C)
        W = ((center + np.asarray(X.T @ (alpha * y).astype(X.dtype), float)) / (rho + 1.0)).reshape(p, q)
        fw = np.asarray(X @ W.ravel().astype(X.dtype), float)
        b = margin_intercept(alpha, y, fw, C)
        S, rank = singular_value_threshold(rho * W - lam_hat, tau)
        S /= rho
        lam = lam_hat - rho * (W - S)
        c = float(np.vdot(lam - lam_hat, lam - lam_hat)) / rho + rho * float(np.vdot(S - S_hat, S - S_hat))
        if c < eta * c_prev:
            beta, t_next = fista_momentum(t)
            S_hat, lam_hat = S + beta * (S - S_prev), lam + beta * (lam - lam_prev)
            c_prev = c
        else:  # restart
            t_next, restarts = 1.0, restarts + 1
            S_hat, lam_hat = S_prev, lam_prev
            c_prev = c_prev / eta
        t, S_prev, lam_prev = t_next, S, lam
        with rec.excluded():
            v = 1.0 - y * (fw + b)
            row = measures(problem, W, b, -alpha, project_spectral_ball(-lam, tau), obj_opt)
            row.update(kkt_residuals(problem, W, b, v, S, -alpha, -lam), rank=rank, restarts=restarts)
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(W), "b": b, "lam": -alpha, "Lam": problem.to_user(-lam), "v": v,
                "U": problem.to_user(S)}
    return rec.result(solution, restarts=restarts)

"""F-ADMM: the SMM solver of Luo, Xie, Zhang & Li (ICML 2015) — ADMM on S − W = 0 with
H(W, b) = ½‖W‖² + C·hinge and G(S) = τ‖S‖_*, accelerated with restart (Goldstein et al. 2014).
The seed paper only cites it; the steps follow the digest (§5.3):

    f = e − y∘X(λ̂ + ρŝ)/(ρ + 1),   α = argmin ½αᵀKα − fᵀα  s.t. yᵀα = 0, 0 ≤ α ≤ C,
    K_ij = y_i y_j ⟨X_i, X_j⟩/(ρ + 1)                                   (an n×n dual box-QP)
    W = (λ̂ + ρŝ + Σ α_i y_i X_i)/(ρ + 1),  b from the margin samples 0 < α_i < C
    S = Prox_{τ‖·‖_*}(ρW − λ̂)/ρ,  λ = λ̂ − ρ(W − S),  c_k = ‖λ − λ̂‖²/ρ + ρ‖S − ŝ‖²
    c_k < η c_{k−1}: Nesterov extrapolation of (S, λ); else restart from the previous iterate.

The box-QP (LIBQP's GSMO on the dense n×n K in the original, F-ADMM's memory bottleneck and the
paper's "-" entries for n ≥ 1e5) is solved here by OSQP on an equivalent form with u = Zᵀα that
never builds K (O(n·pq) memory), keeping OSQP's factorisation across steps (only f changes) and
warm-starting it. This makes our F-ADMM cheaper per step than the paper's. SMM multipliers:
λ_SMM = −α, Λ_SMM = −λ.
"""
from __future__ import annotations

import numpy as np
import osqp
import scipy.sparse as sp

from ..core import HistoryRecorder, Param, check_memory, fista_momentum, singular_value_threshold
from .alm import measures
from .problem import SMMProblem, kkt_residuals, project_spectral_ball

QP_EPS_FLOOR = 1e-6  # OSQP stalls below this; its polishing step then recovers the exact active set

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
    """OSQP on the dual box-QP written with u = Zᵀα (Z = y∘X, n×pq) so K = ZZᵀ/(ρ+1) is never formed:
    min ½‖u‖²/(ρ+1) − fᵀα  s.t.  Zᵀα − u = 0, yᵀα = 0, 0 ≤ α ≤ C.  (Only f changes between steps.)"""
    n, pq = problem.n, problem.pq
    check_memory(3.0 * 12 * n * pq, f"F-ADMM's dual QP on {n} samples × {pq} entries")
    Zt = sp.csc_matrix((np.asarray(problem.X, float) * problem.y[:, None]).T)
    P = sp.block_diag([sp.csc_matrix((n, n)), sp.identity(pq) / (rho + 1.0)], format="csc")
    cons = sp.vstack([
        sp.hstack([Zt, -sp.identity(pq)]),
        sp.hstack([sp.csr_matrix(problem.y[None, :]), sp.csr_matrix((1, pq))]),
        sp.hstack([sp.identity(n), sp.csr_matrix((n, pq))]),
    ], format="csc")
    lower = np.zeros(pq + 1 + n)
    upper = np.r_[np.zeros(pq + 1), np.full(n, problem.C)]
    solver = osqp.OSQP()
    solver.setup(P, np.zeros(n + pq), cons, lower, upper, verbose=False, eps_abs=eps, eps_rel=eps,
                 polishing=True, max_iter=10_000, warm_starting=True)
    return solver


def run_fadmm(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              rho: float = 10.0, eta: float = 0.999, obj_opt: float | None = None):
    n, (p, q), C, tau = problem.n, problem.shape, problem.C, problem.tau
    X, y = problem.X, problem.y
    qp = dual_qp_solver(problem, rho, min(max(tol / 100.0, QP_EPS_FLOOR), 1e-4))
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    S = S_prev = S_hat = np.zeros((p, q))
    lam = lam_prev = lam_hat = np.zeros((p, q))
    t, c_prev, restarts = 1.0, np.inf, 0
    for k in range(1, max_iter + 1):
        center = (lam_hat + rho * S_hat).ravel()
        f = 1.0 - y * np.asarray(X @ center.astype(X.dtype), float) / (rho + 1.0)
        qp.update(q=np.r_[-f, np.zeros(p * q)])
        alpha = np.clip(qp.solve(raise_error=False).x[:n], 0.0, C)
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

"""sGS-isPADMM (Appendix E, Algorithm 5): symmetric Gauss–Seidel ADMM on (P), blocks (b, W, b) then (v, U).

Each iteration, with L_γ the augmented Lagrangian (6):
    b̄ = −(1/n) yᵀ(AW^k + v^k − e + λ^k/γ)                            (backward b sweep)
    (I + γ𝓜) W = γU − Λ − A*λ − γA*(b̄y + v − e) + S₁W^k             (W block, S₁ = γ(𝓜 − A*A − I))
    b = −(1/n) yᵀ(AW + v − e + λ/γ)                                  (forward b sweep)
    v = Prox_{δ*_S}(ω)/γ,  ω = −λ − γ(AW + by − e);   U = Prox_{τ‖·‖_*}(Λ + γW)/γ
    λ += ζγ(AW + by + v − e);   Λ += ζγ(W − U).
𝓜 = V_k D_k V_kᵀ + d_{k+1}(I − V_kV_kᵀ) ⪰ A*A + I is the spectral majorisation built from the
top k = 25 eigenpairs of A*A + I = XᵀX + I, so the W step is closed form (the authors' choice,
[code] in the digest): (I + γ𝓜)⁻¹r = r/(1 + γd_{k+1}) + V_k Diag(1/(1 + γD_k) − 1/(1 + γd_{k+1}))V_kᵀr.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from ..core import HistoryRecorder, Param, singular_value_threshold
from .ispadmm import adapt_penalty
from .alm import measures
from .problem import SMMProblem, kkt_residuals, project_spectral_ball

DENSE_EIG_MAX = 600  # pq up to this: full eigendecomposition of XᵀX

SGS_PARAMS = (
    Param("gamma0", 1.0, float, low=0, low_strict=True, log=True, help="initial ADMM penalty γ",
          symbol=r"\gamma_0", ui_range=(1e-2, 1e2)),
    Param("zeta", 1.618, float, low=0, low_strict=True, high=(1 + 5**0.5) / 2, high_strict=True,
          help="dual step length ζ ∈ (0, (1+√5)/2)", symbol=r"\zeta"),
    Param("n_eig", 25, int, low=1, high=500, help="eigenpairs of A*A + I kept in the majorisation 𝓜"),
    Param("gamma_every", 100, int, low=1, high=10_000, help="adapt γ every this many iterations"),
    Param("obj_opt", None, float, help="reference optimum: when given, stop at Relobj (47) ≤ tol (Tables 3–5)"),
)


def spectral_majorizer(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Top-k eigenpairs (V_k, D_k) of XᵀX + I and the next eigenvalue d_{k+1}."""
    pq = X.shape[1]
    k = min(k, pq - 1)
    if pq <= DENSE_EIG_MAX:
        vals, vecs = np.linalg.eigh(np.asarray(X.T @ X, float))
        vals, vecs = vals[::-1], vecs[:, ::-1]
        return vecs[:, :k], vals[:k] + 1.0, float(vals[k]) + 1.0
    op = spla.LinearOperator((pq, pq), matvec=lambda v: np.asarray(X.T @ (X @ v.astype(X.dtype)), float),
                             dtype=float)
    vals, vecs = spla.eigsh(op, k=k + 1, which="LA")
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    return vecs[:, :k], vals[:k] + 1.0, float(vals[k]) + 1.0


def run_sgs_padmm(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
                  gamma0: float = 1.0, zeta: float = 1.618, n_eig: int = 25, gamma_every: int = 100,
                  obj_opt: float | None = None):
    n, (p, q), C, tau = problem.n, problem.shape, problem.C, problem.tau
    X, y = problem.X, problem.y
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    Vk, Dk, d_next = spectral_majorizer(X, n_eig)
    gamma = gamma0
    w = np.zeros(p * q)
    b = 0.0
    v = np.ones(n)
    U, Lam, lam = np.zeros((p, q)), np.zeros((p, q)), np.zeros(n)
    Xw = np.zeros(n)

    def A_adj(z: np.ndarray) -> np.ndarray:
        return np.asarray(X.T @ (y * z).astype(X.dtype), float)

    for k in range(1, max_iter + 1):
        base = v - 1.0 + lam / gamma
        b_bar = -float(y @ (y * Xw + base)) / n
        MW = d_next * w + Vk @ ((Dk - d_next) * (Vk.T @ w))  # 𝓜 W^k
        S1w = gamma * (MW - np.asarray(X.T @ Xw.astype(X.dtype), float) - w)
        rhs = gamma * U.ravel() - Lam.ravel() - A_adj(lam + gamma * (b_bar * y + v - 1.0)) + S1w
        coef = 1.0 / (1.0 + gamma * Dk) - 1.0 / (1.0 + gamma * d_next)
        w = rhs / (1.0 + gamma * d_next) + Vk @ (coef * (Vk.T @ rhs))
        Xw = np.asarray(X @ w.astype(X.dtype), float)
        Aw = y * Xw
        b = -float(y @ (Aw + base)) / n
        omega = -lam - gamma * (Aw + b * y - 1.0)
        v = (omega - np.clip(omega, 0.0, C)) / gamma
        W = w.reshape(p, q)
        U, rank = singular_value_threshold(Lam + gamma * W, tau)
        U /= gamma
        lam = lam + zeta * gamma * (Aw + b * y + v - 1.0)
        Lam = Lam + zeta * gamma * (W - U)
        with rec.excluded():
            row = measures(problem, W, b, np.clip(lam, -C, 0.0), project_spectral_ball(Lam, tau), obj_opt)
            eta = kkt_residuals(problem, W, b, v, U, lam, Lam)
            row.update(eta, gamma=gamma, rank=rank)
        if k % gamma_every == 0:
            gamma = adapt_penalty(gamma, max(eta["eta_lambda"], eta["eta_Lambda"]), max(eta["eta_W"], eta["eta_b"]))
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(W), "b": b, "lam": lam, "Lam": problem.to_user(Lam), "v": v,
                "U": problem.to_user(U)}
    return rec.result(solution, n_eig=len(Dk))

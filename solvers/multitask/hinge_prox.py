"""The U-part of the hinge prox, Eq. (72)–(74), with the bias kept in Z (digest §2.3, "simpler option").

Per task ℓ:  min_{u,b} ‖u − û‖² + (b − b̂)² + γ̂_ℓ Σ_i max(0, 1 − y_i(uᵀx_i + b)),  γ̂_ℓ = 2/(L n_ℓ)
(the file's γ̂ = 2/L drops the 1/n_ℓ of Eq. (64): erratum E6). Its dual is a box-constrained QP

    max_{0 ≤ β ≤ γ̂}  Σ β_i (1 − y_i(ûᵀx_i + b̂)) − ¼‖Σ β_i y_i x_i‖² − ¼(Σ β_i y_i)²,

with u = û + ½ Σ β_i y_i x_i and b = b̂ + ½ Σ β_i y_i. Its gradient is 1 − y_i(uᵀx_i + b): the margin
violation at the recovered primal point. We solve all tasks at once (the Hessian is block diagonal, so each
task takes its own step 1/L_ℓ) by projected accelerated gradient ascent with adaptive restart, warm-started,
until the primal–dual gap is below ``gap_tol``. Because the primal is 1-strongly convex, gap ≤ ε gives ‖(u, b) − (u*, b*)‖² ≤ ε.
"""
from __future__ import annotations

import numpy as np

from .data import TaskData


def dual_lipschitz(data: TaskData) -> np.ndarray:
    """Per row, the Lipschitz constant of its task's block of the dual gradient: ½ λ_max([X_ℓ, 1]ᵀ[X_ℓ, 1]).
    The dual Hessian is block diagonal, so each task takes its own step 1/L_ℓ."""
    per_task = np.empty(data.n_tasks)
    for ell in range(data.n_tasks):
        X, _ = data.task(ell)
        Xt = np.hstack([X, np.ones((X.shape[0], 1))])
        gram = Xt.T @ Xt if Xt.shape[0] > Xt.shape[1] else Xt @ Xt.T
        per_task[ell] = 0.5 * float(np.linalg.eigvalsh(gram)[-1])
    return per_task[data.task_of_row]


def hinge_prox(data: TaskData, U_hat: np.ndarray, b_hat: np.ndarray, box: np.ndarray, lipschitz: np.ndarray,
               beta0: np.ndarray | None = None, gap_tol: float = 1e-13, max_iter: int = 20000):
    """Solve (74) for every task. ``box`` holds γ̂_ℓ for every row. Returns (U, b, β, gap, iterations)."""
    y = data.y
    margin_hat = 1.0 - y * data.scores(U_hat, b_hat)
    beta = np.zeros_like(y) if beta0 is None else np.clip(beta0, 0.0, box)

    def evaluate(beta):  # everything is linear in β, so a momentum point is a combination of two of these
        yb = y * beta
        V, c = data.back(yb), data.bias_back(yb)
        return V, c, margin_hat - 0.5 * y * data.scores(V, c)  # gradient = 1 − y s at the recovered (u, b)

    def gap(beta, V, c, grad):  # primal (74) at the recovered point minus the dual value
        quad = 0.25 * (np.sum(V * V) + c @ c)
        return float(quad + box @ np.maximum(grad, 0.0) - (beta @ margin_hat - quad))

    step = 1.0 / lipschitz
    cur = evaluate(beta)
    z, z_eval, t = beta, cur, 1.0
    it = 0
    for it in range(1, max_iter + 1):
        if gap(beta, *cur) <= gap_tol * max(1.0, float(box.sum())):
            break
        beta_new = np.clip(z + step * z_eval[2], 0.0, box)
        new = evaluate(beta_new)
        if (beta_new - beta) @ z_eval[2] < 0:  # momentum points against the ascent direction: restart
            z, z_eval, t = beta, cur, 1.0
            continue
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        z = beta_new + mom * (beta_new - beta)
        z_eval = tuple(a + mom * (a - b) for a, b in zip(new, cur))
        beta, cur, t = beta_new, new, t_new
    return U_hat + 0.5 * cur[0], b_hat + 0.5 * cur[1], beta, gap(beta, *cur), it

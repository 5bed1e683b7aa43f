"""Semismooth Newton step on an identified subspace (Algorithm 2 line 8; Appendix A).

On f_J(w_J) := f(w) with the coordinates outside J fixed at 0:
  g = X_Jᵀ∇g(u) + μw_J,   H v = X_Jᵀ D X_J v + μv  (D = I for LS, p(1 − p) for logistic),
  optionally damped by c‖g‖^ρ I (App. A; off by default, as the paper gives no values).
The direction p ≈ argmin Q_J(p) = ⟨g, p⟩ + ½⟨p, Hp⟩ (25) comes from PCG started at 0 with
the diagonal preconditioner M = diag(H), stopped after s iterations or by (27):
  i ≥ 1 and (Q_i − Q_{i−1}) / (Q_i / i) ≤ min{0.5, √⟨g, M⁻¹g⟩}.
The step length is β^i for the SMALLEST i ≥ 0 meeting the Armijo rule (26) (the paper's
"largest" is a typo), each trial O(m) through u + β^i X_J p. The step fails when ⟨g, p⟩ ≥ 0
or no i ≤ ``max_line_search`` passes (the paper leaves the threshold open).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import Param
from .problem import Point, SparseProblem

NEWTON_PARAMS: tuple[Param, ...] = (
    Param("S", 5, int, low=1, high=10**9,
          help="switch to Newton steps once the support has been unchanged for S iterations", symbol="S"),
    Param("t_newton", 1, int, low=1, high=100, help="Newton (SSN) steps between two PG steps", symbol="t"),
    Param("beta", 0.5, float, low=0, high=1, low_strict=True, high_strict=True,
          help="Armijo backtracking factor of (26)", symbol=r"\beta", ui_range=(0.05, 0.95)),
    Param("sigma2", 1e-3, float, low=0, high=1, low_strict=True, high_strict=True, log=True,
          help="Armijo constant of (26)", symbol=r"\sigma_2", ui_range=(1e-5, 0.5)),
    Param("max_line_search", 30, int, low=0, high=200,
          help="Newton step fails if (26) needs more than this many halvings"),
    Param("damping_c", 0.0, float, low=0.0, help="damping c of c‖g‖^ρ I (0 = off)", symbol="c", ui_range=(0.0, 1.0)),
    Param("damping_rho", 1.0, float, low=0.0, high=1.0, low_strict=True, help="damping exponent ρ",
          symbol=r"\rho", ui_range=(0.05, 1.0)),
)


@dataclass
class NewtonStep:
    failed: bool
    cg_iters: int = 0
    alpha: float = 0.0


def pcg(hess_vec, g: np.ndarray, M: np.ndarray, max_iter: int) -> tuple[np.ndarray, int]:
    """Preconditioned CG on H p = −g from p = 0 with the stopping rule (27). Returns (p, #Hv)."""
    p = np.zeros_like(g)
    r = -g.copy()  # residual −g − Hp
    z = r / M
    direction = z.copy()
    rz = float(r @ z)
    forcing = min(0.5, float(np.sqrt(g @ (g / M))))
    q_prev = 0.0
    n_hv = 0
    for i in range(1, max_iter + 1):
        Hd = hess_vec(direction)
        n_hv += 1
        dHd = float(direction @ Hd)
        if dHd <= 1e-300:  # H is only PSD: stop on a direction of no curvature
            break
        a = rz / dHd
        p += a * direction
        r -= a * Hd
        q = 0.5 * float(g @ p - r @ p)  # Q_i = ½(⟨g, p⟩ − ⟨r, p⟩), since Hp = −g − r
        if q < 0 and (q - q_prev) / (q / i) <= forcing:  # (27)
            break
        q_prev = q
        z = r / M
        rz_new = float(r @ z)
        if rz_new == 0.0:
            break
        direction = z + (rz_new / rz) * direction
        rz = rz_new
    return p, n_hv


def newton_step(problem: SparseProblem, cur: Point, *, beta: float, sigma2: float, max_line_search: int,
                damping_c: float, damping_rho: float) -> tuple[Point, NewtonStep]:
    """One SSN step on f restricted to A_J (J = cur.J), from w^k = ``cur``."""
    J = cur.J
    XJ = problem.columns(J)
    wJ = cur.w[J]
    mu = problem.ridge
    r = problem.dloss(cur.u)
    g = np.asarray(XJ.T @ r).ravel() + mu * wJ
    g_norm = float(np.linalg.norm(g))
    if g_norm == 0.0:  # already optimal on A_J
        return cur, NewtonStep(False)
    D = problem.curvature(cur.u)
    shift = mu + damping_c * g_norm**damping_rho
    sq = XJ.multiply(XJ) if hasattr(XJ, "multiply") else XJ * XJ
    diag = np.asarray(sq.sum(axis=0) if D is None else sq.T @ D).ravel() + shift  # M = diag(H)
    diag[diag <= 0] = 1.0  # an all-zero column has no curvature; leave it unscaled

    def hess_vec(v: np.ndarray) -> np.ndarray:
        Xv = np.asarray(XJ @ v).ravel()
        return np.asarray(XJ.T @ (Xv if D is None else D * Xv)).ravel() + shift * v

    p, n_hv = pcg(hess_vec, g, diag, max_iter=J.size)
    slope = float(g @ p)
    if not slope < 0:
        return cur, NewtonStep(True, n_hv)
    Xp = np.asarray(XJ @ p).ravel()
    alpha = 1.0
    for _ in range(max_line_search + 1):
        w_a = wJ + alpha * p
        u_a = cur.u + alpha * Xp
        f_a = problem.value(u_a, float(w_a @ w_a))
        if f_a <= cur.f + sigma2 * alpha * slope:  # (26)
            w = np.zeros_like(cur.w)
            w[J] = w_a
            return Point(w, u_a, J, f_a), NewtonStep(False, n_hv, alpha)
        alpha *= beta
    return cur, NewtonStep(True, n_hv)

"""Same-subspace extrapolation of Algorithm 1 (APG), lines 3–7.

When w^{k−1} and w^k lie in one subspace A_J, move along d = w^k − w^{k−1} ∈ A_J:
  * ζ_k and c_k of (20) from the restricted gradient (∇f(w^k))_J (cheap: s columns);
  * the initial step t̂ from the curvature rule (18) or the BB-type rule (15), both
    computed in O(m) through (17) from the cached margins u^k = Xw^k, u^{k−1}:
    Xd = u^k − u^{k−1};
  * the safeguard (19) t̂ ← clip(t̂, c_k α_min, c_k α_max);
  * backtracking t = η^i t̂ until the sufficient decrease (12)
    f(w^k + t d) ≤ f(w^k) − σ t²‖d‖², each trial O(m) through u^k + t·Xd.
The paper puts no cap on the backtracking; we stop after ``max_backtracks`` halvings
and then skip the extrapolation (z^k = w^k). App. B gives α_min = 1, α_max = 100 without a scale;
``alpha_scale="lambda"`` reads them as multiples of PG's step λ instead (neither reading
reproduces every GE count of Tables 7–10; docs/benchmarks/sparse.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import Param
from .problem import Point, SparseProblem

EXTRAPOLATION_PARAMS: tuple[Param, ...] = (
    Param("sigma", 0.05, float, low=0, high=1, low_strict=True, high_strict=True, log=True,
          help="sufficient-decrease constant of (12)", symbol=r"\sigma", ui_range=(1e-4, 0.5)),
    Param("eta", 0.5, float, low=0, high=1, low_strict=True, high_strict=True,
          help="backtracking factor of (12)", symbol=r"\eta", ui_range=(0.05, 0.95)),
    Param("eps", 1e-20, float, low=0, high=1, low_strict=True, high_strict=True, log=True,
          help="extrapolate only if the direction quality ζ of (20) is at least ε", symbol=r"\epsilon",
          ui_range=(1e-20, 0.9)),
    Param("alpha_min", 1.0, float, low=0, low_strict=True, log=True,
          help="lower safeguard of (19) (absolute, not scaled by L)", symbol=r"\alpha_{\min}", ui_range=(1e-3, 10.0)),
    Param("alpha_max", 100.0, float, low=0, low_strict=True, log=True,
          help="upper safeguard of (19); must be ≥ α_min", symbol=r"\alpha_{\max}", ui_range=(1e-2, 1e4)),
    Param("alpha_scale", "absolute", str, choices=("absolute", "lambda"),
          help="α_min, α_max as given (App. B) or multiplied by λ (an alternative reading; see docs/benchmarks/sparse.md)"),
    Param("step_rule", "curvature", str, choices=("curvature", "bb"),
          help="initial step t̂: exact curvature along d (18, used in the paper) or BB-type (15)"),
    Param("max_backtracks", 60, int, low=0, high=1000,
          help="cap on the halvings of t in (12) (the paper has none)"),
)


@dataclass
class Extrapolation:
    accepted: bool
    t_hat: float = float("nan")
    t: float = 0.0
    backtracks: int = 0
    zeta: float = float("nan")


def extrapolate(problem: SparseProblem, prev: Point, cur: Point, *, sigma: float, eta: float, eps: float,
                alpha_min: float, alpha_max: float, alpha_scale: str, step_rule: str,
                max_backtracks: int) -> tuple[Point, Extrapolation]:
    """z^k of Algorithm 1 from w^{k−1} = ``prev`` and w^k = ``cur`` (same subspace A_J, J = cur.J)."""
    if alpha_scale == "lambda":
        alpha_min, alpha_max = alpha_min * problem.lam, alpha_max * problem.lam
    J = cur.J
    mu = problem.ridge
    dJ = cur.w[J] - prev.w[J]  # d ∈ A_J since supp(w^{k−1}) ⊆ J
    Xd = cur.u - prev.u
    r = problem.dloss(cur.u)
    wJ = cur.w[J]
    slope = float(r @ Xd) + mu * float(wJ @ dJ)  # ⟨∇f(w^k), d⟩ by (17)
    d_norm = float(np.linalg.norm(dJ))
    if d_norm == 0.0 or slope >= 0.0:
        return cur, Extrapolation(False)
    XJ = problem.columns(J)
    gJ = np.asarray(XJ.T @ r).ravel() + mu * wJ  # (∇f(w^k))_J
    gJ_norm = float(np.linalg.norm(gJ))
    if gJ_norm == 0.0:
        return cur, Extrapolation(False)
    zeta = -slope / (d_norm * gJ_norm)  # (20)
    if zeta < eps:
        return cur, Extrapolation(False, zeta=zeta)
    c = gJ_norm**2 / -slope  # c_k of (20)
    if step_rule == "curvature":
        D = problem.curvature(cur.u)
        curv = float(Xd @ (Xd if D is None else D * Xd)) + mu * d_norm**2  # ⟨∇²f d, d⟩ by (17)
        t_hat = -slope / curv if curv > 0 else np.inf  # (18)
    else:
        # (13) with s = d and r = ∇f(w^k) − ∇f(w^{k−1}); ⟨s, r⟩ costs O(m) since s ∈ A_J.
        sr = float(Xd @ (r - problem.dloss(prev.u))) + mu * d_norm**2
        alpha = d_norm**2 / sr if sr > 0 else alpha_max
        t_hat = -alpha * slope / d_norm**2  # (15)
    t_hat = float(np.clip(t_hat, c * alpha_min, c * alpha_max))  # (19)
    t = t_hat
    for i in range(max_backtracks + 1):
        u_t = cur.u + t * Xd
        w_t = wJ + t * dJ
        f_t = problem.value(u_t, float(w_t @ w_t))
        if f_t <= cur.f - sigma * t * t * d_norm**2:  # (12)
            w = cur.w.copy()
            w[J] = w_t
            return Point(w, u_t, J, f_t), Extrapolation(True, t_hat, t, i, zeta)
        t *= eta
    return cur, Extrapolation(False, t_hat, 0.0, max_backtracks + 1, zeta)

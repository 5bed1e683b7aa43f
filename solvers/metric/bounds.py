"""Step 1 of screening: Frobenius balls ‖M* − Q‖ ≤ r that provably contain the optimum (Sec. 3.2).

Dynamic bounds use the current iterate M at the current λ (GB Thm 3.2, PGB Thm 3.3, DGB Thm 3.5, CDGB Thm 3.6);
path bounds use the solution at the previous λ0 (RPB Thm 3.7 with the exact optimum, RRPB Thm 3.10 with an
approximate one). With screening, P, D and ∇P are the reduced P̃, D̃, ∇P̃, which share the minimiser (§1.5).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .problem import Evaluation, ReducedProblem, inner

DYNAMIC_BOUNDS = ("gb", "pgb", "dgb", "cdgb")
PATH_BOUNDS = ("gb", "pgb", "dgb", "cdgb", "rrpb")
BOUND_LABELS = {"gb": "GB", "pgb": "PGB", "dgb": "DGB", "cdgb": "CDGB", "rpb": "RPB", "rrpb": "RRPB"}


@dataclass(frozen=True)
class Sphere:
    """A ball containing M*; ``normal`` is a PSD P with ⟨P, M*⟩ ≥ 0 for the linear rule (or None)."""

    name: str
    center: np.ndarray
    radius: float
    center_is_psd: bool
    normal: np.ndarray | None = None


def _gradient_ball(ev: Evaluation, lam: float) -> tuple[np.ndarray, float]:
    """GB's centre and radius (Thm 3.2): Q = M − ∇P(M)/(2λ), r = ‖∇P(M)‖/(2λ)."""
    return ev.M - ev.grad / (2.0 * lam), math.sqrt(inner(ev.grad, ev.grad)) / (2.0 * lam)


def gradient_bound(rp: ReducedProblem, ev: Evaluation, lam: float) -> Sphere:
    """GB (Thm 3.2). The linear rule uses P = −Q_- (App. E)."""
    Q, radius = _gradient_ball(ev, lam)
    return Sphere("gb", Q, radius, False, rp.problem.supporting_normal(Q))


def projected_gradient_bound(rp: ReducedProblem, ev: Evaluation, lam: float) -> Sphere:
    """PGB (Thm 3.3): Q = [Q_GB]_+, r² = r_GB² − ‖[Q_GB]_-‖² (clipped at 0 against rounding)."""
    Q, radius = _gradient_ball(ev, lam)
    Q_plus, Q_minus = rp.problem.psd_split(Q)
    r2 = radius ** 2 - inner(Q_minus, Q_minus)
    return Sphere("pgb", Q_plus, math.sqrt(max(r2, 0.0)), True, None)


def duality_gap_bound(rp: ReducedProblem, ev: Evaluation, lam: float, gap: float) -> Sphere:
    """DGB (Thm 3.5): Q = M, r = sqrt(2 (P(M) − D(α))/λ)."""
    return Sphere("dgb", ev.M, math.sqrt(2.0 * max(gap, 0.0) / lam), True, None)


def constrained_duality_gap_bound(rp: ReducedProblem, ev: Evaluation, lam: float) -> Sphere:
    """CDGB (Thm 3.6): Q = M_λ(α) = [Σ αH]_+/λ (eq. (9) with Γ = −[ΣαH]_-), r = sqrt((P(Q) − D(α))/λ).

    Costs one extra pass over the active triplets to evaluate the primal at the dual-built centre.
    """
    S_plus, _ = rp.problem.psd_split(ev.S)
    Q = S_plus / lam
    gap = rp.evaluate(Q, lam).primal - rp.dual(ev, lam)
    return Sphere("cdgb", Q, math.sqrt(max(gap, 0.0) / lam), True, None)


def relaxed_regularization_path_bound(M0: np.ndarray, lam0: float, lam1: float, eps: float) -> Sphere:
    """RRPB (Thm 3.10): Q = ((λ0+λ1)/(2λ1)) M0, r = (|λ0−λ1|/(2λ1))‖M0‖ + ((|λ0−λ1| + λ0 + λ1)/(2λ1)) ε,
    valid whenever ‖M0* − M0‖ ≤ ε. With ε = 0 and M0 = M0* it is RPB (Thm 3.7; |λ0 − λ1| as in ambiguity 6)."""
    d = abs(lam0 - lam1)
    radius = d / (2 * lam1) * math.sqrt(inner(M0, M0)) + (d + lam0 + lam1) / (2 * lam1) * eps
    return Sphere("rrpb" if eps > 0 else "rpb", (lam0 + lam1) / (2 * lam1) * M0, radius, True, None)


def regularization_path_bound(M0_opt: np.ndarray, lam0: float, lam1: float) -> Sphere:
    """RPB (Thm 3.7): needs the exact optimum at λ0; used for checks and the idealised comparison."""
    return relaxed_regularization_path_bound(M0_opt, lam0, lam1, 0.0)


def dynamic_sphere(name: str, rp: ReducedProblem, ev: Evaluation, lam: float, gap: float) -> Sphere:
    """The named bound at the current iterate (RRPB at λ0 = λ1 is DGB, Thm 3.10)."""
    if name == "gb":
        return gradient_bound(rp, ev, lam)
    if name == "pgb":
        return projected_gradient_bound(rp, ev, lam)
    if name in ("dgb", "rrpb"):
        return duality_gap_bound(rp, ev, lam, gap)
    if name == "cdgb":
        return constrained_duality_gap_bound(rp, ev, lam)
    raise ValueError(f"unknown bound {name!r}")

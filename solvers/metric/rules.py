"""Step 2 of screening: decide, per triplet, whether every X in the ball has ⟨X, H⟩ > 1 (→ R*) or < 1 − γ (→ L*).

Rules (Sec. 3.1), from the cheapest and weakest to the strongest:
- ``sphere``  eq. (4): ⟨H, Q⟩ − r‖H‖ > 1 ⇒ R*, and ⟨H, Q⟩ + r‖H‖ < 1 − γ ⇒ L*;
- ``linear``  Thm 3.1: the ball cut by a half-space ⟨P, X⟩ ≥ 0 that contains the PSD cone (closed form);
- ``sdp``     the ball intersected with the PSD cone, decided through the dual of the distance problem
              min ‖X − Q‖² s.t. ⟨X, H⟩ = C, X ⪰ O ("SDLS", Sec. 3.1.2): screen as soon as a dual value exceeds r².
              For diagonal M with a non-negative centre the exact minimum of App. B (eq. (13)) is used instead.
Each stronger rule is applied only to triplets the weaker ones left, and can only add to them (tested).
"""
from __future__ import annotations

import numpy as np

from . import kernels
from .bounds import Sphere
from .problem import TripletProblem, TripletSubset, inner

RULES = ("sphere", "linear", "sdp")
RULE_LABELS = {"sphere": "sphere", "linear": "sphere + linear", "sdp": "sphere + semidefinite"}
_BATCH_ENTRIES = 400_000  # d×d entries per batch of SDLS evaluations
_SDLS_BISECTIONS = 40
_NONE, _NO_PAIRS = np.empty(0), np.empty(0, np.int32)  # the compiled rule's unused inputs


def screen(problem: TripletProblem, sphere: Sphere, idx: np.ndarray | None, rule: str, *,
           hQ: np.ndarray | None = None, pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
           h_norm: np.ndarray | None = None, into: tuple[np.ndarray, np.ndarray] | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (to L*, to R*) over the triplets ``idx`` (None: all) under ``sphere`` with ``rule``.

    ``hQ`` = ⟨H_t, Q⟩ and ``h_norm`` = ‖H_t‖ for those triplets, when the caller already has them (the solver's
    margins when Q is its iterate, a subset's cached norms): the sphere rule is then O(1) per triplet.
    ``pairs`` = (q, diff, same) in place of ``hQ``: ⟨H_t, Q⟩ = q_diff − q_same from Q's pair values, formed in the
    compiled rule's pass (no array of margins).
    ``into``: masks over ``idx`` that earlier bounds filled; only the triplets neither marks are decided, and
    their verdicts are added to these masks in place (returned).
    """
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    compiled = kernels.USE_NUMBA and rule != "sdp"
    if hQ is None and pairs is not None and not compiled:
        q, diff, same = pairs
        hQ, pairs = q[diff] - q[same], None
    if into is not None and not compiled:
        return _screen_undecided(problem, sphere, idx, rule, hQ, h_norm, into)
    if hQ is None and pairs is None:
        hQ = problem.margins(sphere.center, idx)
    if h_norm is None:
        h_norm = problem.h_norm if idx is None else problem.h_norm[idx]
    if kernels.USE_NUMBA:
        to_L, to_R = _compiled_verdicts(problem, sphere, idx, rule, hQ, pairs, h_norm, into)
    else:
        to_L, to_R = _verdicts(problem, sphere, idx, rule, hQ, h_norm)
    if rule == "sdp":
        rest = np.flatnonzero(~(to_L | to_R))
        sdp_L, sdp_R = semidefinite_rule(problem, sphere, rest if idx is None else idx[rest], hQ[rest])
        to_L[rest] |= sdp_L
        to_R[rest] |= sdp_R
    return to_L, to_R


def screen_subset(subset: TripletSubset, sphere: Sphere, rule: str, *,
                  known: tuple[np.ndarray, np.ndarray] | None = None,
                  into: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``screen`` over the triplets of ``subset``: ⟨H_t, Q⟩ from ``known`` = (M, margins at M) when the sphere is
    centred at M (DGB at the iterate), else from the subset's pair values at Q (``TripletSubset.margin_pairs``)
    or its margins."""
    hQ = known[1] if known is not None and sphere.center is known[0] else None
    pairs = subset.margin_pairs(sphere.center) if hQ is None else None
    if hQ is None and pairs is None:
        hQ = subset.margins(sphere.center)
    return screen(subset.problem, sphere, subset.idx, rule, hQ=hQ, pairs=pairs, h_norm=subset.h_norm, into=into)


def _screen_undecided(problem: TripletProblem, sphere: Sphere, idx: np.ndarray | None, rule: str,
                      hQ: np.ndarray | None, h_norm: np.ndarray | None, into: tuple[np.ndarray, np.ndarray]
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``screen(..., into=into)`` by gathering the triplets neither mask marks (numpy, and the SDP rule)."""
    to_L, to_R = into
    rest = np.flatnonzero(~(to_L | to_R))
    new_L, new_R = screen(problem, sphere, rest if idx is None else idx[rest], rule,
                          hQ=None if hQ is None else hQ[rest], h_norm=None if h_norm is None else h_norm[rest])
    to_L[rest[new_L]] = True
    to_R[rest[new_R]] = True
    return into


def _has_normal(sphere: Sphere) -> bool:
    return sphere.normal is not None and inner(sphere.normal, sphere.normal) > 0


def _compiled_verdicts(problem: TripletProblem, sphere: Sphere, idx: np.ndarray | None, rule: str,
                       hQ: np.ndarray | None, pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
                       h_norm: np.ndarray, into: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``_verdicts`` in one compiled pass (``kernels.sphere_linear_verdicts``): the same masks, or with ``into``
    the verdicts of the triplets neither of its masks marks, added to them in place (no gather of the rest).
    ⟨H_t, Q⟩ is ``hQ``, or q_diff − q_same from ``pairs`` = (q, diff, same)."""
    linear = rule == "linear" and sphere.radius > 0 and _has_normal(sphere)
    from_pairs = hQ is None
    q, diff, same = pairs if from_pairs else (_NONE, _NO_PAIRS, _NO_PAIRS)
    hQ = _NONE if from_pairs else np.ascontiguousarray(hQ, float)
    hP, PP, PQ = _NONE, 0.0, 0.0
    if linear:
        hP = np.ascontiguousarray(problem.margins(sphere.normal, idx), float)
        PP, PQ = inner(sphere.normal, sphere.normal), inner(sphere.normal, sphere.center)
    n = h_norm.size
    to_L, to_R = (np.empty(n, bool), np.empty(n, bool)) if into is None else into
    kernels.compiled().sphere_linear_verdicts(hQ, q, diff, same, from_pairs, hP, np.ascontiguousarray(h_norm, float),
                                              float(sphere.radius), PP, PQ, problem.gamma, linear, into is not None,
                                              to_L, to_R)
    return to_L, to_R


def _verdicts(problem: TripletProblem, sphere: Sphere, idx: np.ndarray | None, rule: str, hQ: np.ndarray,
              h_norm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks (to L*, to R*) of the sphere rule, eq. (4), and for ``rule="linear"`` the linear rule, Thm 3.1."""
    r_nu = sphere.radius * h_norm
    lower, upper = hQ - r_nu, hQ + r_nu  # min and max of ⟨X, H⟩ over the ball, eq. (4)
    nu = h_norm if rule != "sphere" and sphere.radius > 0 else None
    if rule == "linear" and nu is not None and _has_normal(sphere):
        hP = problem.margins(sphere.normal, idx)
        lower = np.maximum(lower, linear_rule_min(hQ, hP, nu, sphere))
        upper = np.minimum(upper, -linear_rule_min(-hQ, -hP, nu, sphere))
    return upper < 1.0 - problem.gamma, lower > 1.0


# -- sphere + linear constraint (Thm 3.1, App. C) ------------------------------------------------------------------
def linear_rule_min(hQ: np.ndarray, hP: np.ndarray, nu: np.ndarray, sphere: Sphere) -> np.ndarray:
    """min ⟨X, H⟩ s.t. ‖X − Q‖ ≤ r, ⟨P, X⟩ ≥ 0, per triplet, from ⟨H, Q⟩, ⟨H, P⟩ and ‖H‖.

    Case 2: the sphere minimiser Q − rH/‖H‖ is feasible → ⟨H, Q⟩ − r‖H‖. Case 3: both constraints active,
    κ = sqrt((‖P‖²‖H‖² − ⟨P,H⟩²)/(r²‖P‖² − ⟨P,Q⟩²)), β = (⟨P,H⟩ − κ⟨P,Q⟩)/‖P‖², value ⟨H,Q⟩ + (β⟨P,H⟩ − ‖H‖²)/κ.
    (Paper's α, β renamed κ, β.) Degenerate cases (H ∥ P, a hyperplane missing the ball) fall back to case 2,
    which is always a valid lower bound.
    """
    Q, P, r = sphere.center, sphere.normal, sphere.radius
    PP, PQ = inner(P, P), inner(P, Q)
    sphere_min = hQ - r * nu
    safe_nu = np.where(nu > 0, nu, 1.0)
    case2 = PQ - r * hP / safe_nu >= 0
    num = PP * nu * nu - hP * hP
    den = r * r * PP - PQ * PQ
    ok = ~case2 & (num > 1e-14 * PP * nu * nu) & (den > 0)
    out = sphere_min.copy()
    if ok.any() and den > 0:
        kappa = np.sqrt(num[ok] / den)
        beta = (hP[ok] - kappa * PQ) / PP
        out[ok] = hQ[ok] + (beta * hP[ok] - nu[ok] ** 2) / kappa
    return np.maximum(out, sphere_min)


# -- sphere + semidefinite constraint (Sec. 3.1.2; App. B for diagonal M) ------------------------------------------
def semidefinite_rule(problem: TripletProblem, sphere: Sphere, idx: np.ndarray, hQ: np.ndarray):
    """Masks (to L*, to R*) for triplets ``idx`` with the ball ∩ PSD cone."""
    if problem.diagonal and sphere.center_is_psd:
        h = _diag_h(problem, idx)
        lower = appendix_b_min(sphere.center, h, sphere.radius)
        upper = -appendix_b_min(sphere.center, -h, sphere.radius)
        return upper < 1.0 - problem.gamma, lower > 1.0
    X0, _ = problem.psd_split(sphere.center)  # a PSD point of the ball (Q itself, or [Q]_+ for GB: ambiguity 20)
    dist0 = X0 - sphere.center
    if inner(dist0, dist0) > sphere.radius ** 2:
        return np.zeros(idx.size, bool), np.zeros(idx.size, bool)
    hX0 = hQ if sphere.center_is_psd else problem.margins(X0, idx)
    to_L, to_R = np.zeros(idx.size, bool), np.zeros(idx.size, bool)
    for C, side, mask in ((1.0, "R", hX0 > 1.0), (1.0 - problem.gamma, "L", hX0 < 1.0 - problem.gamma)):
        rows = np.flatnonzero(mask)
        if rows.size:
            hit = sdls_certifies(problem, sphere, idx[rows], hQ[rows], C, side)
            (to_R if side == "R" else to_L)[rows[hit]] = True
    return to_L, to_R


def _diag_h(problem: TripletProblem, idx: np.ndarray) -> np.ndarray:
    T = problem.triplets
    return problem.U[T.diff[idx]] - problem.U[T.same[idx]]


def _triplet_vectors(problem: TripletProblem, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    T = problem.triplets
    X = problem.X
    return X[T.i[idx]] - X[T.l[idx]], X[T.i[idx]] - X[T.j[idx]]


def sdls_certifies(problem: TripletProblem, sphere: Sphere, idx: np.ndarray, hQ: np.ndarray, C: float,
                   side: str) -> np.ndarray:
    """True where max_y D(y) > r², D(y) = −‖[Q + yH]_+‖² + 2Cy + ‖Q‖² (dual of the distance problem).

    Weak duality: any y with D(y) > r² proves that no X ⪰ O in the ball has ⟨X, H⟩ = C, so (the ball ∩ PSD
    being connected and containing X0 on the screened side) every such X is on that side. D is concave with
    decreasing D'(y) = 2C − 2⟨[Q + yH]_+, H⟩; we bracket its root and bisect, checking D at every point.
    The start y0 = (C − ⟨Q, H⟩)/‖H‖² already certifies everything the sphere rule does (digest §2.3).
    """
    out = np.zeros(idx.size, bool)
    nu2 = problem.h_norm[idx] ** 2
    step = max(1, _BATCH_ENTRIES // problem.dim ** (1 if problem.diagonal else 2))
    for s in range(0, idx.size, step):
        rows = slice(s, s + step)
        evaluate = _sdls_evaluator(problem, sphere, idx[rows], C)
        y0 = (C - hQ[rows]) / np.where(nu2[rows] > 0, nu2[rows], 1.0)
        best = np.full(y0.size, -np.inf)
        # R side: D'(0) < 0, root at y < 0; L side: D'(0) > 0, root at y > 0.
        unit = 1.0 / np.where(nu2[rows] > 0, nu2[rows], 1.0)
        far = np.where(y0 < 0, y0, -unit) if side == "R" else np.where(y0 > 0, y0, unit)
        zero = np.zeros_like(y0)
        for _ in range(60):
            value, slope = evaluate(far)
            best = np.maximum(best, value)
            moving = (slope < 0) if side == "R" else (slope > 0)
            if not moving.any():
                break
            far = np.where(moving, 2.0 * far, far)
        lo, hi = (far, zero) if side == "R" else (zero, far)
        for _ in range(_SDLS_BISECTIONS):
            mid = 0.5 * (lo + hi)
            value, slope = evaluate(mid)
            best = np.maximum(best, value)
            lo, hi = np.where(slope > 0, mid, lo), np.where(slope > 0, hi, mid)
        out[rows] = best > sphere.radius ** 2
    return out


def _sdls_evaluator(problem: TripletProblem, sphere: Sphere, idx: np.ndarray, C: float):
    """y ↦ (D(y), D'(y)) for a batch of triplets: batched eigh of Q + yH (full) or clipping (diagonal)."""
    Q = sphere.center
    QQ = inner(Q, Q)
    if problem.diagonal:
        h = _diag_h(problem, idx)

        def evaluate(y):
            E = np.maximum(Q[None, :] + y[:, None] * h, 0.0)
            return -np.einsum("ij,ij->i", E, E) + 2 * C * y + QQ, 2 * C - 2 * np.einsum("ij,ij->i", E, h)
        return evaluate
    a, b = _triplet_vectors(problem, idx)
    H = np.einsum("ti,tj->tij", a, a) - np.einsum("ti,tj->tij", b, b)

    def evaluate(y):
        w, V = np.linalg.eigh(Q[None] + y[:, None, None] * H)
        w = np.maximum(w, 0.0)
        VtH = (np.einsum("tik,ti->tk", V, a) ** 2 - np.einsum("tik,ti->tk", V, b) ** 2)  # v_kᵀ H v_k
        return -np.sum(w * w, axis=1) + 2 * C * y + QQ, 2 * C - 2 * np.sum(w * VtH, axis=1)
    return evaluate


def appendix_b_min(q: np.ndarray, h: np.ndarray, r: float) -> np.ndarray:
    """Exact min hᵀx s.t. ‖x − q‖ ≤ r, x ≥ 0 for q ≥ 0 and each row of h (App. B, eq. (13)).

    x_k(s) = max(q_k − s h_k, 0), s = 1/(2α) ≥ 0; φ(s) = ‖x(s) − q‖² is non-decreasing with breakpoints
    q_k/h_k (h_k > 0). Sorting the breakpoints and accumulating gives φ on each interval in closed form
    (O(d log d) instead of the paper's O(d²) scan). The ball constraint is active: ‖x − q‖² = r² (the paper's
    "= r" is a typo, ambiguity 4); if φ never reaches r² the minimum is reached at s = ∞.
    """
    B, d = h.shape
    qq = np.broadcast_to(q, (B, d))
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(h > 0, qq / h, np.inf)
    order = np.argsort(bp, axis=1)
    bp_s = np.take_along_axis(bp, order, 1)
    q2_s = np.take_along_axis(qq * qq, order, 1)
    h2_s = np.take_along_axis(h * h, order, 1)
    clipped_q2 = np.concatenate([np.zeros((B, 1)), np.cumsum(q2_s, 1)], 1)  # after m breakpoints passed
    free_h2 = np.sum(h * h, 1, keepdims=True) - np.concatenate([np.zeros((B, 1)), np.cumsum(h2_s, 1)], 1)
    free_h2 = np.maximum(free_h2, 0.0)
    ends = np.concatenate([bp_s, np.full((B, 1), np.inf)], 1)  # right end of interval m
    with np.errstate(invalid="ignore"):
        phi_end = clipped_q2 + np.where(free_h2 > 0, ends ** 2 * free_h2, 0.0)
    reached = phi_end >= r * r
    m = np.where(reached.any(1), reached.argmax(1), d)
    rows = np.arange(B)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sqrt(np.maximum(r * r - clipped_q2[rows, m], 0.0) / free_h2[rows, m])
    s = np.where(np.isfinite(s), s, np.inf)
    with np.errstate(invalid="ignore"):
        x = np.maximum(qq - s[:, None] * h, 0.0)
    x = np.where(np.isnan(x), np.where(h > 0, 0.0, qq), x)  # s = ∞ with h_k = 0 keeps q_k
    return np.einsum("ij,ij->i", h, x)

"""Eq. (14)/(71): min_γ Σ σ_i²/(η + γ_i) s.t. Σγ_i = h, 0 ≤ γ_i ≤ 1 (Appendix C).

For the multiplier t of Σγ = h, each γ_i solves (77) in closed form, Eq. (78):
γ_i(t) = clip(σ_i/√t − η, 0, 1), and Γ(t) = Σγ_i(t) (79) is non-increasing (Theorem C.1). The critical
points (80) are t_i^l = σ_i²/(1+η)² (γ_i = 1 below) and t_i^u = σ_i²/η² (γ_i = 0 above).

Three solvers that must agree:

* ``"linear"``: Algorithm 3 with the digest's corrections (errata E14–E19): the bracket update of
  line 21 sets t_max (not t_min); the drop rules of lines 25–32 are t_i^u ≤ t_min → 0, t_i^l ≥ t_max → 1,
  t_i^l ≤ t_min ∧ t_max ≤ t_i^u → middle; middle values need √t and are set after t_opt is known
  (Eq. (82): t_opt = (Σ_mid σ_i / (h − n_1 + η n_mid))²). The conditional median of line 12 is replaced by
  plain medians of t^l and t^u plus the (lower) median of the breakpoints still inside the bracket,
  which guarantees that the bracket loses half of its breakpoints each sweep: O(q) in total.
* ``"sort"``: in s = 1/√t, γ_i = clip(σ_i s − η, 0, 1) is piecewise linear and non-decreasing; evaluate
  Γ at all 2q breakpoints with prefix sums and interpolate on the bracketing segment: O(q log q).
* ``"bisect"``: bisection on s, a reference for tests.

The caller handles h ≥ q (all ones, plus the fill-in of the M-step) and h = 0.
"""
from __future__ import annotations

import numpy as np

from ..core import InputError

EQ14_METHODS = ("linear", "sort", "bisect")


def critical_points(sigma: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(t^l, t^u) of Eq. (80)."""
    s2 = np.asarray(sigma, float) ** 2
    return s2 / (1.0 + eta) ** 2, s2 / eta**2


def gamma_of_t(sigma: np.ndarray, eta: float, t: float) -> np.ndarray:
    """Eq. (78)."""
    return np.clip(np.asarray(sigma, float) / np.sqrt(t) - eta, 0.0, 1.0)


def eq14_objective(sigma: np.ndarray, eta: float, gamma: np.ndarray) -> float:
    return float(np.sum(np.asarray(sigma, float) ** 2 / (eta + gamma)))


def solve_eq14(sigma, eta: float, h: float, method: str = "linear", trace: list | None = None) -> np.ndarray:
    """The optimal γ of Eq. (14) for positive σ and 0 ≤ h ≤ q = len(σ).

    With ``trace`` (a list), the linear method appends one (t_min, t_max, |I|, inside breakpoints)
    tuple per sweep of Algorithm 3.
    """
    sigma = np.asarray(sigma, dtype=float).ravel()
    q = sigma.size
    if method not in EQ14_METHODS:
        raise InputError(f"unknown Eq. (14) method {method!r}; choose one of {', '.join(EQ14_METHODS)}")
    if not eta > 0:
        raise InputError(f"eta must be > 0, got {eta}")
    if q and not np.all(sigma > 0):
        raise InputError("Eq. (14) needs positive singular values; drop the zero ones first")
    if not 0 <= h <= q:
        raise InputError(f"Eq. (14) is infeasible: h = {h} but only q = {q} non-zero singular values "
                         "(Theorem C.1(3)); the M-step fills in the remaining directions")
    if h == 0:
        return np.zeros(q)
    if h == q:
        return np.ones(q)
    if method == "sort":
        return _solve_sort(sigma, eta, h)
    if method == "bisect":
        return _solve_bisect(sigma, eta, h)
    return _solve_linear(sigma, eta, h, trace)


def _gamma_sum_in_s(sorted_sigma: np.ndarray, prefix: np.ndarray, eta: float, s: np.ndarray) -> np.ndarray:
    """Γ at the points s (vectorised): #{σ_i s ≥ 1+η} + Σ_{η < σ_i s < 1+η} (σ_i s − η)."""
    q = sorted_sigma.size
    hi = np.searchsorted(sorted_sigma, (1.0 + eta) / s, side="left")  # from hi on: γ = 1
    lo = np.searchsorted(sorted_sigma, eta / s, side="right")  # below lo: γ = 0
    return (q - hi) + s * (prefix[hi] - prefix[lo]) - eta * (hi - lo)


def _solve_sort(sigma: np.ndarray, eta: float, h: float) -> np.ndarray:
    ss = np.sort(sigma)
    prefix = np.concatenate([[0.0], np.cumsum(ss)])
    bps = np.unique(np.concatenate([eta / ss, (1.0 + eta) / ss]))
    G = _gamma_sum_in_s(ss, prefix, eta, bps)  # non-decreasing, G[0] = 0, G[-1] = q
    k = int(np.searchsorted(G, h, side="left"))  # first breakpoint with Γ ≥ h (k ≥ 1 since h > 0)
    if G[k] == h:
        s = bps[k]
    else:  # Γ is linear on [bps[k−1], bps[k]]
        s = bps[k - 1] + (bps[k] - bps[k - 1]) * (h - G[k - 1]) / (G[k] - G[k - 1])
    return np.clip(sigma * s - eta, 0.0, 1.0)


def _solve_bisect(sigma: np.ndarray, eta: float, h: float, iters: int = 200) -> np.ndarray:
    lo, hi = 0.0, (1.0 + eta) / sigma.min()  # Γ(lo) = 0 < h < q = Γ(hi)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if np.clip(sigma * mid - eta, 0.0, 1.0).sum() < h:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-16 * hi:
            break
    return np.clip(sigma * 0.5 * (lo + hi) - eta, 0.0, 1.0)


def _lower_median(values: np.ndarray) -> float:
    k = (values.size - 1) // 2
    return float(np.partition(values, k)[k])  # O(|values|), and always one of the values


def _solve_linear(sigma: np.ndarray, eta: float, h: float, trace: list | None) -> np.ndarray:
    """Corrected Algorithm 3 (see the module docstring for the errata fixed)."""
    tl, tu = critical_points(sigma, eta)
    t_min, t_max = tl.min(), tu.max()  # Γ(t_min) = q > h, Γ(t_max) = 0 < h
    active = np.arange(sigma.size)  # I
    n1, s_mid, n_mid = 0, 0.0, 0  # aggregates of the indices already dropped as 1 / middle

    def Gamma(t: float) -> float:  # Γ_I(t) of the digest: O(|I|)
        rest = np.clip(sigma[active] / np.sqrt(t) - eta, 0.0, 1.0).sum()
        return n1 + s_mid / np.sqrt(t) - eta * n_mid + rest

    while active.size:
        a_l, a_u = tl[active], tu[active]
        bps = np.concatenate([a_l, a_u])
        inside = bps[(bps > t_min) & (bps < t_max)]
        if trace is not None:
            trace.append((t_min, t_max, int(active.size), int(inside.size)))
        candidates = [_lower_median(a_l), _lower_median(a_u)]
        if inside.size:
            candidates.append(_lower_median(inside))
        for t_hat in candidates:
            if not t_min < t_hat < t_max:
                continue
            G = Gamma(t_hat)
            if G == h:
                return gamma_of_t(sigma, eta, t_hat)
            if G > h:
                t_min = t_hat
            else:
                t_max = t_hat  # file line 21 (and text l.432) wrongly set t_min here (E16)
        a_l, a_u = tl[active], tu[active]
        zero = a_u <= t_min
        one = a_l >= t_max
        middle = (a_l <= t_min) & (t_max <= a_u)
        n1 += int(one.sum())
        s_mid += float(sigma[active[middle]].sum())
        n_mid += int(middle.sum())
        active = active[~(zero | one | middle)]
    if n_mid == 0:  # Γ is flat (= n1 = h) on the bracket: any t in it gives the same γ
        return gamma_of_t(sigma, eta, np.sqrt(t_min * t_max))
    t_opt = (s_mid / (h - n1 + eta * n_mid)) ** 2  # Eq. (82) solved for t
    return gamma_of_t(sigma, eta, t_opt)

"""Projections and proximal maps shared by several families (each property-tested in tests/core)."""
from __future__ import annotations

import math

import numpy as np

from .errors import InputError


def hard_threshold(z: np.ndarray, s: int, prefer: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Projection onto {w : ‖w‖₀ ≤ s} (hard thresholding H_s), with a deterministic tie rule.

    Keeps the s entries of largest magnitude. Among equal magnitudes at the cut,
    indices in ``prefer`` (e.g. the previous support) win, then lower indices.
    Returns ``(w, J)`` with ``J`` the sorted index set, ``|J| = s`` exactly (padded
    with zero-valued indices when z has fewer than s nonzeros), as seed 001 §2 needs.
    Cost O(n) (argpartition) plus the ties.
    """
    z = np.asarray(z, dtype=float)
    n = z.size
    if not 0 <= s <= n:
        raise InputError(f"sparsity s = {s} must be between 0 and n = {n}")
    w = np.zeros_like(z)
    if s == 0:
        return w, np.empty(0, dtype=np.intp)
    a = np.abs(z)
    cut = np.partition(a, n - s)[n - s]  # s-th largest magnitude
    above = np.flatnonzero(a > cut)
    tied = np.flatnonzero(a == cut)
    need = s - above.size
    if need < tied.size:
        if prefer is not None and len(prefer):
            preferred = np.zeros(n, dtype=bool)
            preferred[np.asarray(prefer, dtype=np.intp)] = True
            order = np.lexsort((tied, ~preferred[tied]))  # preferred first, then by index
            tied = tied[order]
        tied = tied[:need]
    J = np.sort(np.concatenate([above, tied]))
    w[J] = z[J]
    return w, J


def project_box(x: np.ndarray, low: float | np.ndarray, high: float | np.ndarray) -> np.ndarray:
    """Euclidean projection onto the box {low ≤ x ≤ high}."""
    if np.any(np.asarray(low) > np.asarray(high)):
        raise InputError("box projection needs low <= high")
    return np.clip(x, low, high)


def _check_capped(x: np.ndarray, h: float) -> np.ndarray:
    x = np.asarray(x, dtype=float).ravel()
    if not 0 <= h <= x.size:
        raise InputError(f"capped simplex needs 0 <= h <= {x.size}, got h = {h}")
    if not np.all(np.isfinite(x)):
        bad = np.flatnonzero(~np.isfinite(x))
        raise InputError(f"capped simplex projection needs a finite point; entry {bad[0]} is {x[bad[0]]} "
                         f"({bad.size} of {x.size} entries are not finite); give finite values")
    return x


def _sum_above(y: np.ndarray, theta: float) -> float:
    """Σ clip(y − θ, 0, 1). A difference that overflows is ±inf and clips to 1 or 0, which is exact."""
    with np.errstate(over="ignore"):
        return float(np.clip(y - theta, 0.0, 1.0).sum())


def _capped_simplex_anchor(x: np.ndarray, h: float) -> float:
    """An entry c = x_j with the threshold θ in [c − 1, c], found by bisection over the sorted entries.

    g(θ) = Σ clip(x − θ, 0, 1) − h is nonincreasing; take j, the first sorted index with g(x_j) ≤ 0 (the
    largest entry always qualifies: g = −h). If j > 0, g(x_{j−1}) > 0 needs more than h entries above x_{j−1},
    all of them ≥ x_j, so g(x_j − 1) ≥ (q − j) − h > 0; if j = 0, g(x_0 − 1) = q − h ≥ 0. Each test evaluates g
    directly, without prefix sums, so no magnitude up to float64's largest can overflow into NaN.
    """
    xs = np.sort(x)
    lo, hi = 0, xs.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _sum_above(x, xs[mid]) <= h:
            hi = mid
        else:
            lo = mid + 1
    return float(xs[lo])


def _capped_simplex_threshold(y: np.ndarray, h: float) -> float:
    """θ with Σ clip(y − θ, 0, 1) = h for 0 < h < q and moderate |y|, from all 2q breakpoints at once.

    The breakpoints of g are {y_i} ∪ {y_i − 1}; g is evaluated at all of them with prefix sums (O(q log q)),
    then interpolated linearly on the segment holding the root. g at the largest breakpoint is exactly −h < 0,
    so that segment exists.
    """
    q = y.size
    bps = np.sort(np.concatenate([y - 1.0, y]))
    ys = np.sort(y)
    prefix = np.concatenate([[0.0], np.cumsum(ys)])
    idx_hi = np.searchsorted(ys, bps + 1.0, side="left")  # entries below θ + 1
    idx_lo = np.searchsorted(ys, bps, side="right")  # entries at or below θ
    n_full = q - idx_hi  # y_i ≥ θ + 1 contributes 1
    partial_sum = prefix[idx_hi] - prefix[idx_lo]  # θ < y_i < θ + 1 contributes y_i − θ
    g = n_full + partial_sum - (idx_hi - idx_lo) * bps - h  # nonincreasing in θ
    k = int(np.searchsorted(-g, 0.0, side="left"))  # first breakpoint with g ≤ 0
    if k == 0:
        return float(bps[0])
    t0, t1, g0, g1 = bps[k - 1], bps[k], g[k - 1], g[k]
    return float(t1 if g0 == g1 else t0 + (t1 - t0) * g0 / (g0 - g1))


#: below this magnitude the breakpoint search on x itself rounds θ by at most a few q·eps·16, and the shift's
#: bisection (log₂ q passes over x, 1.5–2.7× the time of the search for q = 2 … 30) is skipped
NO_SHIFT_BELOW = 16.0


def project_capped_simplex(x: np.ndarray, h: float) -> np.ndarray:
    """Exact projection onto {v : Σv = h, 0 ≤ v ≤ 1}: clip(x − θ, 0, 1) with θ the root of the nonincreasing,
    piecewise-linear g(θ) = Σ clip(x − θ, 0, 1) − h.

    Any finite x is handled, up to float64's largest magnitudes: the projection is unchanged by a common shift
    of x, and entries at or above θ + 1 only count as 1, those at or below θ as 0. So x is shifted by an entry c
    with θ in [c − 1, c] (``_capped_simplex_anchor``), clipped to [−2, 2] (which keeps every entry on its side
    of θ − c and θ − c + 1, with a margin for rounding), and the sort-and-interpolate search runs on those
    moderate values (O(q log q)); entries all within ±NO_SHIFT_BELOW need no shift. Without the shift, entries near
    1e300 overflowed the prefix sums into NaN. A non-finite x raises InputError.
    """
    x = _check_capped(x, h)
    q = x.size
    if h == 0:
        return np.zeros(q)
    if h == q:
        return np.ones(q)
    if np.abs(x).max() <= NO_SHIFT_BELOW:
        y = x
    else:
        anchor = _capped_simplex_anchor(x, h)
        with np.errstate(over="ignore"):
            y = np.clip(x - anchor, -2.0, 2.0)
    return np.clip(y - _capped_simplex_threshold(y, h), 0.0, 1.0)


def project_capped_simplex_bisection(x: np.ndarray, h: float, tol: float = 1e-13, max_iter: int = 200) -> np.ndarray:
    """Reference projection onto the capped simplex by bisection on θ (for tests)."""
    x = _check_capped(x, h)
    lo, hi = x.min() - 1.0, x.max()  # g(lo) = q - h ≥ 0, g(hi) = -h ≤ 0
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        if np.clip(x - mid, 0.0, 1.0).sum() > h:
            lo = mid
        else:
            hi = mid
        if hi - lo < tol:
            break
    return np.clip(x - 0.5 * (lo + hi), 0.0, 1.0)


def project_psd(A: np.ndarray) -> np.ndarray:
    """Projection of a symmetric matrix onto the PSD cone: clip the eigenvalues at 0."""
    return psd_part(A)[0]


def psd_part(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A_+, μ, V): the projection of ``project_psd`` with the positive eigenvalues μ and their eigenvectors V
    it was built from, A_+ = V diag(μ) Vᵀ (for a caller that needs A_+'s spectrum next)."""
    A = np.asarray(A, dtype=float)
    S = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(S)
    keep = vals > 0
    if keep.all():
        return S, vals, vecs
    V, mu = vecs[:, keep], vals[keep]
    return (V * mu) @ V.T, mu, V


def singular_value_threshold(W: np.ndarray, tau: float) -> tuple[np.ndarray, int]:
    """Prox of τ‖·‖_* : U diag(max(σ − τ, 0)) Vᵀ. Returns the matrix and its rank."""
    if tau < 0:
        raise InputError(f"threshold tau must be >= 0, got {tau}")
    U, sigma, Vt = np.linalg.svd(np.asarray(W, dtype=float), full_matrices=False)
    shrunk = np.maximum(sigma - tau, 0.0)
    r = int(np.count_nonzero(shrunk))
    return (U[:, :r] * shrunk[:r]) @ Vt[:r], r


def fista_next_t(t: float) -> float:
    """t_{k+1} = (1 + √(1 + 4 t_k²)) / 2, the FISTA/Nesterov sequence (t_0 = 1)."""
    return 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))


def fista_momentum(t: float) -> tuple[float, float]:
    """From t_k return (β_k, t_{k+1}) with β_k = (t_k − 1)/t_{k+1}, the extrapolation weight."""
    t_next = fista_next_t(t)
    return (t - 1.0) / t_next, t_next

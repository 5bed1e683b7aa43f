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
    return x


def project_capped_simplex(x: np.ndarray, h: float) -> np.ndarray:
    """Exact projection onto {v : Σv = h, 0 ≤ v ≤ 1} by sorting the 2q breakpoints.

    The projection is clip(x − θ, 0, 1) with θ the root of the nonincreasing,
    piecewise-linear g(θ) = Σ clip(x − θ, 0, 1) − h. The breakpoints of g are
    {x_i} ∪ {x_i − 1}; we evaluate g at all of them at once (O(q log q)), find the
    segment holding the root and interpolate linearly.
    """
    x = _check_capped(x, h)
    q = x.size
    if h == 0:
        return np.zeros(q)
    if h == q:
        return np.ones(q)
    bps = np.sort(np.concatenate([x - 1.0, x]))
    # g at every breakpoint, vectorised: count entries fully above (x - θ ≥ 1) and partial ones.
    xs = np.sort(x)
    prefix = np.concatenate([[0.0], np.cumsum(xs)])
    n_ge_theta_plus_1 = q - np.searchsorted(xs, bps + 1.0, side="left")  # x_i ≥ θ+1 → contributes 1
    n_gt_theta = q - np.searchsorted(xs, bps, side="right")  # x_i > θ
    # partial entries: θ < x_i < θ+1 contribute x_i − θ
    idx_hi = np.searchsorted(xs, bps + 1.0, side="left")
    idx_lo = np.searchsorted(xs, bps, side="right")
    partial_sum = prefix[idx_hi] - prefix[idx_lo]
    n_partial = n_gt_theta - n_ge_theta_plus_1
    g = n_ge_theta_plus_1 + partial_sum - n_partial * bps - h  # nonincreasing in θ
    k = np.searchsorted(-g, 0.0, side="left")  # first breakpoint with g ≤ 0
    if k == 0:
        theta = bps[0]
    else:
        t0, t1, g0, g1 = bps[k - 1], bps[k], g[k - 1], g[k]
        theta = t1 if g0 == g1 else t0 + (t1 - t0) * g0 / (g0 - g1)
    return np.clip(x - theta, 0.0, 1.0)


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
    A = np.asarray(A, dtype=float)
    S = 0.5 * (A + A.T)
    vals, vecs = np.linalg.eigh(S)
    keep = vals > 0
    if keep.all():
        return S
    V = vecs[:, keep]
    return (V * vals[keep]) @ V.T


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

"""Triplets (i, j, l): x_j a same-class neighbour of x_i, x_l a different-class one (Sec. 5, after Shen et al. [21]).

Every triplet is stored through two *pairs*: ⟨H_ijl, M⟩ = d²_M(x_i, x_l) − d²_M(x_i, x_j), so the only
per-pair quantity needed is u_pᵀ M u_p with u_p the pair's difference vector (digest §1.6). No d×d matrix is
ever formed per triplet.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import InputError, check_memory

#: Rough bytes each triplet costs: indices, ‖H‖ and the per-iteration work arrays.
BYTES_PER_TRIPLET = 64
_DIST_CHUNK = 2_000_000  # entries of a distance block computed at once


@dataclass(frozen=True)
class Triplets:
    """Triplet index arrays and the pair table behind them.

    ``i, j, l`` are the sample indices; ``same[t]`` and ``diff[t]`` index ``pairs`` (P, 2) for (i, j) and (i, l).
    """

    i: np.ndarray
    j: np.ndarray
    l: np.ndarray
    same: np.ndarray
    diff: np.ndarray
    pairs: np.ndarray

    def __len__(self) -> int:
        return int(self.i.size)


def scale_to_unit_box(X: np.ndarray) -> np.ndarray:
    """Per-feature min–max scaling to [−1, 1] as LIBSVM's .scale files; constant features become 0."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.where(hi > lo, 2.0 * (X - lo) / span - 1.0, 0.0)


def count_triplets(codes: np.ndarray, k: int | None) -> int:
    """|T| without building it: Σ_c n_c (n_c − 1)(n − n_c) for k = ∞, else Σ_i min(k, n_c − 1)·min(k, n − n_c)."""
    counts = np.bincount(codes).astype(np.int64)
    n = int(counts.sum())
    if k is None:
        return int(np.sum(counts * (counts - 1) * (n - counts)))
    return int(np.sum(counts * np.minimum(k, counts - 1) * np.minimum(k, n - counts)))


def _nearest(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, k: int, exclude_self: bool) -> np.ndarray:
    """Indices (len(rows), k') of the k nearest ``cols`` of each row, Euclidean, ties broken by index."""
    k_eff = min(k, cols.size - (1 if exclude_self else 0))
    out = np.empty((rows.size, k_eff), dtype=np.int64)
    sq_cols = np.einsum("ij,ij->i", X[cols], X[cols])
    step = max(1, _DIST_CHUNK // max(cols.size, 1))
    for start in range(0, rows.size, step):
        r = rows[start:start + step]
        D = sq_cols[None, :] - 2.0 * X[r] @ X[cols].T  # ‖x_r‖² is constant per row: irrelevant for ranking
        if exclude_self:
            D[r[:, None] == cols[None, :]] = np.inf
        out[start:start + step] = cols[_smallest(D, k_eff)]  # cols are sorted: lower position = lower index
    return out


def _smallest(D: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k smallest entries of each row of D in ascending order, ties to the lower position: the
    first k of a stable argsort, in O(columns) per row (a partition, then a sort of the k chosen) instead of a
    full sort (8× faster at 22,000 columns, a9a's classes). Rows with a tie at the k-th value take the stable sort."""
    if k >= D.shape[1]:
        return np.argsort(D, axis=1, kind="stable")[:, :k]
    part = np.argpartition(D, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(D, part, axis=1)
    part = np.take_along_axis(part, np.lexsort((part, values)), axis=1)
    tied = np.flatnonzero(np.count_nonzero(D <= values.max(axis=1)[:, None], axis=1) > k)
    if tied.size:
        part[tied] = np.argsort(D[tied], axis=1, kind="stable")[:, :k]
    return part


def build_triplets(X: np.ndarray, codes: np.ndarray, k: int | None = None) -> Triplets:
    """All triplets (k=None) or k nearest same-class × k nearest other-class neighbours of every sample.

    A class with ≤ k other members contributes all of them (as the paper's rcv1 counts imply).
    Refuses, with the estimated size, a triplet set beyond the memory budget.
    """
    n = X.shape[0]
    total = count_triplets(codes, k)
    if total == 0:
        raise InputError("no triplets can be formed: every class needs at least 2 samples and there must be 2 classes")
    check_memory(total * BYTES_PER_TRIPLET, f"{total:,} triplets (k = {'∞' if k is None else k})")
    I, J, L = [], [], []
    for c in range(int(codes.max()) + 1):
        members = np.flatnonzero(codes == c)
        others = np.flatnonzero(codes != c)
        if members.size < 2:
            continue
        if k is None:
            same = np.broadcast_to(members, (members.size, members.size))
            same = same[~np.eye(members.size, dtype=bool)].reshape(members.size, members.size - 1)
            diff = np.broadcast_to(others, (members.size, others.size))
        else:
            same = _nearest(X, members, members, k, exclude_self=True)
            diff = _nearest(X, members, others, k, exclude_self=False)
        ks, kd = same.shape[1], diff.shape[1]
        I.append(np.repeat(members, ks * kd))
        J.append(np.repeat(same, kd, axis=1).ravel())
        L.append(np.tile(diff, (1, ks)).ravel())
    i, j, l = (np.concatenate(a).astype(np.int32) for a in (I, J, L))
    key_same = np.minimum(i, j).astype(np.int64) * n + np.maximum(i, j)
    key_diff = np.minimum(i, l).astype(np.int64) * n + np.maximum(i, l)
    keys, inverse = np.unique(np.concatenate([key_same, key_diff]), return_inverse=True)
    pairs = np.stack([keys // n, keys % n], axis=1)
    inverse = inverse.astype(np.int32)
    return Triplets(i, j, l, inverse[: i.size], inverse[i.size:], pairs)

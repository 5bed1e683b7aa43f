"""The paper's synthetic generator (Sec. 6.1, after Luo et al. 2015), reproduced exactly, not normalised.

    n_total = ⌈1.25·n_train⌉; the last n_total − n_train samples are the test part (80/20).
    b_1..b_r: orthonormal columns of orth(randn(n_total, r)), r = min(20, p, q) by default.
    (X_i)_{kℓ} = (b_{⌈rℓ/q⌉})_i + ε_{kℓ,i},  ε ~ N(0, δ²), δ = 2e-4          (ℓ = 1..q, k = 1..p)
    W* = P Qᵀ with P, Q orthonormal (p×r, q×r); y_i = sign(⟨W*, X_i⟩), sign(0) = +1.
Entries of b_ℓ are ~1/√n_total while δ is fixed, so the signal-to-noise ratio falls as n grows,
which is why the paper's test accuracy drops from ≈0.99 (n = 1e4) to ≈0.9 (n = 1e6).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import InputError, Param, check_memory
from ..datasets import SEED, Dataset, Generator, register_generator

CHUNK = 20_000  # rows generated at a time (keeps float64 temporaries small for float32 output)


def make_smm_synthetic(n_train: int = 1000, p: int = 10, q: int = 10, r: int = 0, noise: float = 2e-4,
                       seed: int = 0, float32: bool = False) -> Dataset:
    rank = min(20, p, q) if r == 0 else r
    if rank > min(p, q):
        raise InputError(f"rank r = {rank} exceeds min(p, q) = {min(p, q)}; choose r ≤ {min(p, q)} (0 = min(20, p, q))")
    n_total = math.ceil(1.25 * n_train)
    if rank > n_total:  # b_1..b_r are orthonormal in R^n_total
        raise InputError(f"rank r = {rank} needs at least {rank} samples in all, and n = {n_train} gives {n_total} "
                         f"(n plus the 25 % test part); choose n ≥ {math.ceil(rank / 1.25)} or r ≤ {n_total}")
    dtype = np.float32 if float32 else np.float64
    check_memory(n_total * p * q * np.dtype(dtype).itemsize * 1.2, f"the synthetic set of {n_total} samples of {p}×{q}")
    rng = np.random.default_rng(seed)
    P = np.linalg.qr(rng.standard_normal((p, rank)))[0]
    Q = np.linalg.qr(rng.standard_normal((q, rank)))[0]
    W_true = P @ Q.T
    basis = np.linalg.qr(rng.standard_normal((n_total, rank)))[0]  # b_1..b_r
    group = np.ceil(rank * np.arange(1, q + 1) / q).astype(int) - 1  # ⌈rℓ/q⌉, 0-based
    X = np.empty((n_total, p, q), dtype=dtype)
    for start in range(0, n_total, CHUNK):
        stop = min(start + CHUNK, n_total)
        block = rng.standard_normal((stop - start, p, q), dtype=dtype) * dtype(noise)
        block += basis[start:stop, group][:, None, :].astype(dtype)
        X[start:stop] = block
    scores = np.einsum("ipq,pq->i", X, W_true.astype(dtype), optimize=True)
    y = np.where(scores >= 0, 1.0, -1.0)
    test = np.arange(n_total) >= n_train
    return Dataset(f"smm-synthetic (n={n_train}, {p}×{q}, r={rank})", X, y, "classification",
                   "Sec. 6.1 recipe: rank-r block-constant columns plus N(0, δ²) noise; y = sign(⟨W*, X⟩)",
                   "generator smm-synthetic", test_mask=test, meta={"W_true": W_true, "rank": rank})


SYNTHETIC = register_generator(Generator(
    "smm-synthetic", "smm", make_smm_synthetic,
    params=[
        Param("n_train", 3000, int, low=2, high=2_000_000, help="training samples (the test part adds 25%)",
              symbol="n", ui_range=(20, 20_000)),
        Param("p", 30, int, low=1, high=2000, help="rows of each sample matrix", symbol="p", ui_range=(1, 200)),
        Param("q", 30, int, low=1, high=2000, help="columns of each sample matrix", symbol="q", ui_range=(1, 200)),
        Param("r", 0, int, low=0, high=2000, help="rank of W* (0 = min(20, p, q), the paper's choice)",
              symbol="r", ui_range=(0, 50)),
        Param("noise", 2e-4, float, low=0, help="noise level δ of every entry", symbol=r"\delta",
              ui_range=(0.0, 0.5)),
        SEED,
        Param("float32", False, bool, help="store the samples in float32 (halves memory)"),
    ],
    description="Wu, Li & Sun Sec. 6.1 (Luo et al. 2015): rank-r signal W*, block-constant columns, noise δ",
))

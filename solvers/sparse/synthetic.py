"""Synthetic data for the sparse family (registered with solvers.datasets at import).

Following the digest's offline stand-ins (§5): a k-sparse truth w* with ±1 entries at random
positions, and
  * dense X with Toeplitz-correlated columns, Σ_ij = ρ^|i−j| (Bertsimas et al. 2016), built as
    an AR(1) filter along the columns in O(mn);
  * or sparse CSR X (density d) with positive tf-idf-like entries and unit-norm rows, as in
    the LIBSVM text sets (rcv1, E2006); ρ is not used then.
Regression: y = Xw* + e with Var(e) = Var(Xw*)/SNR. Classification: y = sign(Xw* + e).
``m_test`` extra rows are generated and marked in ``test_mask``. The truth is in meta["w_true"].
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.signal import lfilter
from sklearn.preprocessing import normalize

from ..core import InputError, Param, check_memory
from ..datasets import SEED, Dataset, Generator, register_generator

MAX_DENSE_ENTRIES = 25_000_000  # 200 MB of float64: beyond this, real work wants a sparse X

GENERATOR_PARAMS: list[Param] = [
    Param("m", 100, int, low=2, high=10**6, help="training samples", ui_range=(10, 5000)),
    Param("n", 500, int, low=2, high=10**7, help="features", ui_range=(10, 50_000)),
    Param("k", 5, int, low=1, help="nonzeros of the true coefficient vector", ui_range=(1, 100)),
    Param("snr", 10.0, float, low=0, low_strict=True, log=True, help="signal-to-noise ratio Var(Xw*)/Var(noise)",
          ui_range=(0.1, 1e4)),
    Param("rho", 0.0, float, low=0.0, high=1.0, high_strict=True,
          help="correlation between neighbouring features (dense X only)", ui_range=(0.0, 0.95)),
    Param("density", 1.0, float, low=0.0, high=1.0, low_strict=True, log=True,
          help="fraction of nonzero entries; 1 = dense X, below 1 = sparse CSR with unit-norm rows",
          ui_range=(1e-4, 1.0)),
    Param("m_test", 50, int, low=0, high=10**6, help="extra test samples (marked in test_mask)", ui_range=(0, 2000)),
    SEED,
]


def _design(rng: np.random.Generator, rows: int, n: int, rho: float, density: float):
    if density < 1.0:
        nnz = rows * n * density
        check_memory(nnz * 16, f"a sparse {rows} × {n} X at density {density}")
        X = sp.random(rows, n, density=density, format="csr", random_state=rng,
                      data_rvs=lambda size: np.abs(rng.standard_normal(size)) + 0.1)
        return normalize(X, norm="l2", axis=1)
    if rows * n > MAX_DENSE_ENTRIES:
        raise InputError(f"a dense {rows} × {n} X has {rows * n:,} entries (limit {MAX_DENSE_ENTRIES:,}); "
                         "lower m or n, or set density below 1 for a sparse X")
    check_memory(rows * n * 8 * 2, f"a dense {rows} × {n} X")
    E = rng.standard_normal((rows, n))
    if rho == 0.0:
        return E
    E[:, 0] /= np.sqrt(1.0 - rho * rho)  # stationary start: every column has unit variance
    return lfilter([np.sqrt(1.0 - rho * rho)], [1.0, -rho], E, axis=1)


def _make(task: str, m: int, n: int, k: int, snr: float, rho: float, density: float, m_test: int, seed: int) -> Dataset:
    if k > n:
        raise InputError(f"the truth cannot have k = {k} nonzeros with only n = {n} features")
    rng = np.random.default_rng(seed)
    rows = m + m_test
    X = _design(rng, rows, n, rho, density)
    w_true = np.zeros(n)
    support = np.sort(rng.choice(n, size=k, replace=False))
    w_true[support] = rng.choice([-1.0, 1.0], size=k)
    signal = np.asarray(X @ w_true).ravel()
    scale = float(np.std(signal)) or 1.0
    noisy = signal + rng.standard_normal(rows) * scale / np.sqrt(snr)
    test_mask = np.r_[np.zeros(m, bool), np.ones(m_test, bool)] if m_test else None
    kind = f"sparse (density {density:g})" if density < 1 else f"dense (ρ = {rho:g})"
    meta = {"w_true": w_true, "support_true": support}
    if task == "regression":
        return Dataset("sparse-regression", X, noisy, "regression",
                       f"y = Xw* + noise, {m}+{m_test} × {n} {kind}, k = {k}, SNR {snr:g}", "synthetic",
                       test_mask=test_mask, meta=meta)
    y = np.where(noisy >= 0, 1.0, -1.0)
    if np.unique(y[:m]).size < 2:
        raise InputError("the generated training labels have a single class; change the seed or raise k, m or density")
    return Dataset("sparse-classification", X, y, "classification",
                   f"y = sign(Xw* + noise), {m}+{m_test} × {n} {kind}, k = {k}, SNR {snr:g}", "synthetic",
                   test_mask=test_mask, meta=meta)


def make_sparse_regression(**kw) -> Dataset:
    return _make("regression", **kw)


def make_sparse_classification(**kw) -> Dataset:
    return _make("classification", **kw)


REGRESSION = register_generator(Generator(
    "sparse-regression", "sparse", make_sparse_regression, GENERATOR_PARAMS,
    "k-sparse linear model y = Xw* + noise; dense correlated or sparse tf-idf-like X"))
CLASSIFICATION = register_generator(Generator(
    "sparse-classification", "sparse", make_sparse_classification, GENERATOR_PARAMS,
    "k-sparse linear classifier y = sign(Xw* + noise); dense correlated or sparse tf-idf-like X"))

"""A cheap, safe bound on σ_max(X)², the constant behind the step λ = step_factor / L of (5).

The paper (App. B) asks MATLAB's eigs for σ_max at tolerance 1e-3. ARPACK at a tight tolerance
can cost far more than the solve itself (measured: 4.5 s of a 4.6 s fit on a dense 2000 × 20000
X), and ARPACK with a fixed all-ones start fails with "Starting vector is zero" when that vector
lies in the null space of a very sparse X (the sparse generator at low density). Here:

* small X (min(m, n) ≤ EXACT_SIDE): the exact largest eigenvalue of the small Gram matrix;
* otherwise a few steps of Lanczos on the smaller Gram operator (XXᵀ or XᵀX, two products with
  X per step, never formed), from a seeded Gaussian start (zero with probability 0), with full
  reorthogonalisation (the Krylov basis has at most MAX_STEPS vectors of the short side). It
  stops when the Ritz residual r = ‖A v − θ v‖ ≤ rtol · θ. The top Ritz value θ never exceeds
  σ_max², and some eigenvalue lies within r of θ; when the top of the spectrum is clustered the
  Ritz pair can sit on a slightly smaller eigenvalue of the cluster, so we return
  (θ + r)(1 + rtol), at most (1 + rtol)² · σ_max², capped by ‖X‖_F², which bounds σ_max² always.
  Not a certificate (none is cheap), but from a random start the top Ritz value converges to
  σ_max² fastest of all (Kuczyński & Woźniakowski 1992), and the tests check the bound on dense,
  clustered, very sparse, rank-one and null-space cases.

An all-zero X gives 0 (the caller decides what that means); an invariant Krylov subspace
(breakdown) gives the exact value.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .design import ScaledDense, column_norms

EXACT_SIDE = 64
MAX_STEPS = 60
RTOL = 1e-2  # the step is then at most ~2 % shorter than with the exact σ_max² (App. B: eigs at 1e-3)


def frobenius_sq(X) -> float:
    if isinstance(X, ScaledDense):
        return float(np.sum(column_norms(X) ** 2))
    data = X.data if sp.issparse(X) else X
    return float(np.einsum("i,i->", data.ravel(), data.ravel())) if data.size else 0.0


def sigma_max_sq_bound(X, *, rtol: float = RTOL, seed: int = 0) -> float:
    """An upper bound on σ_max(X)² within about ``rtol`` of it (exact for small X; 0 for X = 0)."""
    m, n = X.shape
    fro = frobenius_sq(X)
    if fro == 0.0:
        return 0.0
    wide = m <= n  # work on the short side: A = XXᵀ (m × m) or XᵀX (n × n)
    if min(m, n) <= EXACT_SIDE:
        X = X.toarray() if isinstance(X, ScaledDense) else X
        G = X @ X.T if wide else X.T @ X
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        return float(min(np.linalg.eigvalsh(G)[-1], fro))
    XT = X.T

    def gram(v: np.ndarray) -> np.ndarray:
        return np.asarray(X @ (XT @ v)).ravel() if wide else np.asarray(XT @ (X @ v)).ravel()

    size = min(m, n)
    V = np.empty((MAX_STEPS + 1, size))
    alpha, beta = [], []
    v = np.random.default_rng(seed).standard_normal(size)
    V[0] = v / np.linalg.norm(v)
    theta = 0.0
    for k in range(MAX_STEPS):
        w = gram(V[k])
        alpha.append(float(V[k] @ w))
        w -= V[: k + 1].T @ (V[: k + 1] @ w)  # full reorthogonalisation (twice is enough)
        w -= V[: k + 1].T @ (V[: k + 1] @ w)
        b = float(np.linalg.norm(w))
        T = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
        evals, evecs = np.linalg.eigh(T)
        theta = float(evals[-1])
        ritz_residual = b * abs(float(evecs[-1, -1]))  # ‖A v − θ v‖ for the top Ritz pair
        if b <= 1e-14 * theta or ritz_residual <= rtol * theta:
            break
        beta.append(b)
        V[k + 1] = w / b
    return float(min((theta + ritz_residual) * (1 + rtol), fro))

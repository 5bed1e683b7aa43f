"""The M-block: the set M_c = {M : tr M = h, 0 ⪯ M ⪯ I}, the projection onto it and the exact M-step.

* ``project_trace_box_psd`` is Eq. (75) (B.2.1): eigendecompose, project the eigenvalues onto the capped
  simplex {Σs = h, 0 ≤ s ≤ 1} with core's ``project_capped_simplex``, recompose. (The file's P ∈ R^{m×m}
  is d × d, erratum E11.)
* ``m_step`` minimises tr(Uᵀ(ηI + M)⁻¹U) over M_c (Algorithm 2, lines 7–9): thin SVD of U, γ* from
  Eq. (71) (eq14.py), M = P₁ diag(γ*) P₁ᵀ. When rank U = q < h, (71) is infeasible (Σγ ≤ q), yet the
  M-problem is not: γ = 1 on the q directions and the missing h − q spread evenly over the orthogonal
  complement, which leaves the objective unchanged (digest §2.4). This fill-in is our choice of one
  optimum among many; the paper does not discuss the case.
"""
from __future__ import annotations

import numpy as np

from ..core import InputError, project_capped_simplex
from .eq14 import solve_eq14


def symmetrize(M: np.ndarray) -> np.ndarray:
    return 0.5 * (M + M.T)


def project_trace_box_psd(M_hat: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. (75): the nearest M ∈ M_c in Frobenius norm. Returns (M, eigenvalues s, eigenvectors P)."""
    d = M_hat.shape[0]
    if not 0 <= h <= d:
        raise InputError(f"h = {h} must be between 0 and d = {d}")
    vals, P = np.linalg.eigh(symmetrize(M_hat))
    s = project_capped_simplex(vals, h)
    return (P * s) @ P.T, s, P


def rank_tolerance(sigma: np.ndarray, shape: tuple[int, int]) -> float:
    return max(shape) * np.finfo(float).eps * (sigma[0] if sigma.size else 0.0)


def m_step(U: np.ndarray, eta: float, h: float, method: str = "sort") -> np.ndarray:
    """argmin_{M ∈ M_c} tr(Uᵀ(ηI + M)⁻¹U), by Eq. (71) and the fill-in when rank U < h."""
    d = U.shape[0]
    P1, sigma, _ = np.linalg.svd(U, full_matrices=False)
    q = int(np.sum(sigma > rank_tolerance(sigma, U.shape)))
    P1, sigma = P1[:, :q], sigma[:q]
    if h >= q:
        M = P1 @ P1.T
        if q < d:
            M += (h - q) / (d - q) * (np.eye(d) - M)
        return symmetrize(M)
    gamma = solve_eq14(sigma, eta, h, method)
    return symmetrize((P1 * gamma) @ P1.T)


def shared_subspace(M: np.ndarray, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Θ (h × d, orthonormal rows) = the top-h eigenvectors of M (Algorithm 2, line 11), and all eigenvalues."""
    vals, vecs = np.linalg.eigh(symmetrize(M))
    order = np.argsort(vals)[::-1]
    return vecs[:, order[:h]].T, vals[order]

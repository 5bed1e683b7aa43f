"""Spectral pieces of ALM-SNCG (Sec. 4.1): Π onto the spectral-norm ball B_2^τ, its Moreau
envelope, and the generalised Jacobian of the singular value thresholding (SVT) map.

For X = U Diag(ν) V_1ᵀ (thin SVD, p ≤ q) and f(s) = max(s − τ, 0):
    Prox_{τ‖·‖_*}(X) = U Diag(f(ν)) V_1ᵀ,   Π_B(X) = X − Prox(X) = U Diag(min(ν, τ)) V_1ᵀ.
An element 𝒥 of ∂Prox acts as (35):
    𝒥d = U[Ξ¹∘S(H̃₁) + Ξ²∘T(H̃₁)]V_1ᵀ + U(Ξ³∘H̃₂)V_2ᵀ,   H̃₁ = Uᵀ d V_1, H̃₂ = Uᵀ d V_2,
with the divided differences (34) Ξ¹_ij = (f(ν_i) − f(ν_j))/(ν_i − ν_j), Ξ²_ij = (f(ν_i) + f(ν_j))/(ν_i + ν_j),
Ξ³_i = f(ν_i)/ν_i (zero on β×β, β = {ν ≤ τ}); G = I − 𝒥 ∈ ∂Π_B. V_2 is never formed:
U(Ξ³∘H̃₂)V_2ᵀ = U Diag(Ξ³)(Uᵀd − H̃₁V_1ᵀ) because V_2V_2ᵀ = I − V_1V_1ᵀ.

`apply_svt_jacobian` uses the low-rank form (only the |α| rows with ν > τ are nonzero,
O(|α|pq) flops, Sec. 4.1) when |α| ≤ p/2 and the dense form (O(p²q)) otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SpectralPoint:
    """Thin SVD of a p×q matrix (p ≤ q) with the threshold τ."""

    U: np.ndarray  # (p, p)
    nu: np.ndarray  # (p,) descending
    Vt: np.ndarray  # (p, q)
    tau: float

    @classmethod
    def of(cls, Z: np.ndarray, tau: float) -> "SpectralPoint":
        U, nu, Vt = np.linalg.svd(Z, full_matrices=False)
        return cls(U, nu, Vt, float(tau))

    @property
    def rank_alpha(self) -> int:
        """|α| = #{ν_i > τ}, eq. (24); the rank of Prox_{τ‖·‖_*}(Z)."""
        return int(np.count_nonzero(self.nu > self.tau))

    def ball_projection(self) -> np.ndarray:
        """Π_{B_2^τ}(Z) = U Diag(min(ν, τ)) V_1ᵀ."""
        return (self.U * np.minimum(self.nu, self.tau)) @ self.Vt

    def nuclear_prox(self) -> np.ndarray:
        """Prox_{τ‖·‖_*}(Z) = U Diag(max(ν − τ, 0)) V_1ᵀ (low-rank product)."""
        k = self.rank_alpha
        return (self.U[:, :k] * (self.nu[:k] - self.tau)) @ self.Vt[:k]

    def envelope(self) -> float:
        """Moreau envelope E_{τ‖·‖_*}(Z) = ½‖Z‖² − ½‖Z − Π_B Z‖² = ½Σν² − ½Σf(ν)², summed as
        ½Σ m(2ν − m) with m = min(ν, τ): no cancellation between two large squares when ν ≫ τ."""
        m = np.minimum(self.nu, self.tau)
        return 0.5 * float(m @ (2.0 * self.nu - m))


def _divided_differences(nu: np.ndarray, tau: float, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``0..rows-1`` of Ξ¹, Ξ² and Ξ³ of (34) (all p columns)."""
    f = np.maximum(nu - tau, 0.0)
    ni, nj = nu[:rows, None], nu[None, :]
    fi, fj = f[:rows, None], f[None, :]
    above_i, above_j = ni > tau, nj > tau
    diff = np.where(above_i != above_j, ni - nj, 1.0)  # nonzero where used: one side > τ ≥ other
    xi1 = np.where(above_i & above_j, 1.0, np.where(above_i != above_j, (fi - fj) / diff, 0.0))
    total = ni + nj
    xi2 = np.divide(fi + fj, total, out=np.zeros_like(total), where=total > 0)
    xi3 = np.divide(f[:rows], nu[:rows], out=np.zeros(rows), where=nu[:rows] > 0)
    return xi1, xi2, xi3


def svt_jacobian_dense(sp: SpectralPoint, d: np.ndarray) -> np.ndarray:
    """𝒥d by (35) with the full p×p divided differences: O(p²q)."""
    p = sp.nu.size
    xi1, xi2, xi3 = _divided_differences(sp.nu, sp.tau, p)
    Utd = sp.U.T @ d
    H1 = Utd @ sp.Vt.T
    S, T = 0.5 * (H1 + H1.T), 0.5 * (H1 - H1.T)
    return sp.U @ ((xi1 * S + xi2 * T) @ sp.Vt) + (sp.U * xi3) @ (Utd - H1 @ sp.Vt)


def svt_jacobian_lowrank(sp: SpectralPoint, d: np.ndarray) -> np.ndarray:
    """𝒥d using only the α rows (ν > τ): O(|α|pq + |α|p²), Sec. 4.1."""
    k = sp.rank_alpha
    if k == 0:
        return np.zeros_like(d)
    xi1, xi2, xi3 = _divided_differences(sp.nu, sp.tau, k)
    Ua, Vta = sp.U[:, :k], sp.Vt[:k]
    P = Ua.T @ d  # (k, q)
    Hrow = P @ sp.Vt.T  # H̃₁[α, :]
    Hcol = sp.U.T @ (d @ Vta.T)  # H̃₁[:, α]
    S, T = 0.5 * (Hrow + Hcol.T), 0.5 * (Hrow - Hcol.T)
    M_alpha = xi1 * S + xi2 * T  # rows α of Ξ¹∘S + Ξ²∘T
    M_beta_alpha = (xi1[:, k:] * S[:, k:]).T - (xi2[:, k:] * T[:, k:]).T  # symmetric Ξ, S; skew T
    out = Ua @ (M_alpha @ sp.Vt) + sp.U[:, k:] @ (M_beta_alpha @ Vta)
    return out + (Ua * xi3) @ (P - Hrow @ sp.Vt)


def apply_svt_jacobian(sp: SpectralPoint, d: np.ndarray) -> np.ndarray:
    """𝒥d choosing the cheaper form (low-rank when |α| ≤ p/2)."""
    if sp.rank_alpha <= sp.nu.size // 2:
        return svt_jacobian_lowrank(sp, d)
    return svt_jacobian_dense(sp, d)

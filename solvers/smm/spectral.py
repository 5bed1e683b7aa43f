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


@dataclass
class ShiftedInverse:
    """M⁻¹ = (κI − σ𝒥)⁻¹, κ = 1 + σ: the part I + σG of Ṽ (40), exactly, in the singular-vector basis.

    With R = Uᵀ D V_fullᵀ (rows of V_full: V_1ᵀ then V_2ᵀ, q×q orthogonal), (35) makes 𝒥 act on R entrywise
    up to 2×2 blocks: on the p×p block it scales the symmetric part S(R₁) by Ξ¹ and the skew part T(R₁) by Ξ²
    (Ξ¹, Ξ² symmetric, so the pairs (i, j), (j, i) decouple), and row i of the p×(q−p) block by Ξ³_i. Hence
    M⁻¹ is S/(κ − σΞ¹) + T/(κ − σΞ²) and R₂/(κ − σΞ³) there: O(pq) per matrix after the rotation. Every
    eigenvalue of 𝒥 is in [0, 1], so each divisor is at least κ − σ = 1. Ξ¹, Ξ², Ξ³ vanish outside the
    entries Ω = {rows α} ∪ {columns α of the p×p block} (α = {ν_i > τ}, the first k rows), so
    M⁻¹ − I/κ lives on Ω, |Ω| = kq + (p − k)k: `omega_coordinates` gives sample-space forms in O(k·pq)."""

    U: np.ndarray  # (p, p)
    Vf: np.ndarray  # (q, q), rows are right singular vectors
    k: int  # |α|
    kappa: float
    inv_sym: np.ndarray  # (p, p) 1/(κ − σΞ¹)
    inv_skew: np.ndarray  # (p, p) 1/(κ − σΞ²)
    inv_rest: np.ndarray  # (p,) 1/(κ − σΞ³)

    @classmethod
    def of(cls, sp: SpectralPoint, sigma: float) -> "ShiftedInverse":
        p, q = sp.Vt.shape
        Vf = sp.Vt
        if q > p:  # V_2: the orthogonal complement of V_1 (complete QR of V_1)
            Q = np.linalg.qr(sp.Vt.T, mode="complete")[0]
            Vf = np.vstack([sp.Vt, Q[:, p:].T])
        xi1, xi2, xi3 = _divided_differences(sp.nu, sp.tau, p)
        kappa = 1.0 + sigma
        return cls(sp.U, Vf, sp.rank_alpha, kappa, 1.0 / (kappa - sigma * xi1), 1.0 / (kappa - sigma * xi2),
                   1.0 / (kappa - sigma * xi3))

    def _apply_rotated(self, R: np.ndarray) -> np.ndarray:
        p = self.inv_sym.shape[0]
        R1 = R[:, :p]
        out = np.empty_like(R)
        out[:, :p] = 0.5 * ((R1 + R1.T) * self.inv_sym + (R1 - R1.T) * self.inv_skew)
        out[:, p:] = R[:, p:] * self.inv_rest[:, None]
        return out

    def solve(self, D: np.ndarray) -> np.ndarray:
        """M⁻¹D for one (p, q) matrix."""
        return self.U @ self._apply_rotated(self.U.T @ D @ self.Vf.T) @ self.Vf

    def omega_coordinates(self, XJ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R_Ω, (M⁻¹ − I/κ)_Ω R_Ω) for the stack XJ (m, p, q): their product R_Ω·Eᵀ is X_J(M⁻¹ − I/κ)X_Jᵀ."""
        p, k = self.inv_sym.shape[0], self.k
        m = XJ.shape[0]
        Ua, Ub, Vfa = self.U[:, :k], self.U[:, k:], self.Vf[:k]
        Ra = (np.matmul(Ua.T, XJ).reshape(m * k, -1) @ self.Vf.T).reshape(m, k, -1)  # rows α of R
        Rb = np.matmul(Ub.T, XJ @ Vfa.T)  # (m, p − k, k): R[β, α]
        w1 = self.inv_sym - 1.0 / self.kappa
        w2 = self.inv_skew - 1.0 / self.kappa
        Ra1 = Ra[:, :, :p]
        partner = np.concatenate([np.swapaxes(Ra1[:, :, :k], 1, 2), np.swapaxes(Rb, 1, 2)], axis=2)  # R[j, i]
        Ea = np.empty_like(Ra)
        Ea[:, :, :p] = 0.5 * ((Ra1 + partner) * w1[:k] + (Ra1 - partner) * w2[:k])
        Ea[:, :, p:] = Ra[:, :, p:] * (self.inv_rest[:k, None] - 1.0 / self.kappa)
        partner_b = np.swapaxes(Ra1[:, :, k:], 1, 2)  # R[i, j] for (j, i) ∈ β × α
        Eb = 0.5 * ((Rb + partner_b) * w1[k:, :k] + (Rb - partner_b) * w2[k:, :k])
        coords = np.concatenate([Ra.reshape(m, -1), Rb.reshape(m, -1)], axis=1)
        return coords, np.concatenate([Ea.reshape(m, -1), Eb.reshape(m, -1)], axis=1)

"""The spectral pieces of ALM-SNCG (Sec. 4.1) on a torch device, in float64: the SVD of X_σ(W) = Λ + σW, the
projection onto B_2^τ, the SVT prox, the Moreau envelope and the generalised Jacobian 𝒥 ∈ ∂Prox_{τ‖·‖_*} of (35).

They mirror `spectral.SpectralPoint` and `spectral.svt_jacobian_dense` (see there for the formulas); the divided
differences Ξ¹, Ξ², Ξ³ of (34) are the numpy ones (`spectral._divided_differences`) on the p singular values,
read back once per point, so both backends use one definition. 𝒥 acts in its dense form, O(p²q): p×q is small
and on a GPU the product is a handful of kernel launches either way. Only the SVD itself may run on the host
(HOST_SVD_MAX_ROWS); every product with U, V stays on the device.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .spectral import _divided_differences

#: On CUDA the SVD of a p×q matrix with p at most this runs in torch on the host (8·p·q bytes each way): a small
#: SVD on a GPU is latency-bound (solver launches and a synchronisation), as metric's eigh (device.py) found.
HOST_SVD_MAX_ROWS = 256


@dataclass
class TorchSpectralPoint:
    """Thin SVD of a p×q float64 tensor (p ≤ q) with the threshold τ."""

    U: torch.Tensor  # (p, p)
    nu: torch.Tensor  # (p,) descending
    Vt: torch.Tensor  # (p, q)
    tau: float
    rank_alpha: int  # |α| = #{ν_i > τ}, eq. (24)
    _xi: tuple | None = None

    @classmethod
    def of(cls, Z: torch.Tensor, tau: float) -> "TorchSpectralPoint":
        if Z.device.type == "cuda" and Z.shape[0] <= HOST_SVD_MAX_ROWS:
            U, nu, Vt = (a.to(Z.device) for a in torch.linalg.svd(Z.cpu(), full_matrices=False))
        else:
            U, nu, Vt = torch.linalg.svd(Z, full_matrices=False)
        return cls(U, nu, Vt, float(tau), int((nu > tau).sum()))

    def ball_projection(self) -> torch.Tensor:
        """Π_{B_2^τ}(Z) = U Diag(min(ν, τ)) V_1ᵀ."""
        return (self.U * self.nu.clamp(max=self.tau)) @ self.Vt

    def nuclear_prox(self) -> torch.Tensor:
        """Prox_{τ‖·‖_*}(Z) = U Diag(max(ν − τ, 0)) V_1ᵀ."""
        k = self.rank_alpha
        return (self.U[:, :k] * (self.nu[:k] - self.tau)) @ self.Vt[:k]

    def envelope(self) -> torch.Tensor:
        """E_{τ‖·‖_*}(Z) = ½Σ m(2ν − m), m = min(ν, τ) (no cancellation of two large squares; a 0-d tensor)."""
        m = self.nu.clamp(max=self.tau)
        return 0.5 * torch.dot(m, 2.0 * self.nu - m)

    def divided_differences(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self._xi is None:
            nu = self.nu.cpu().numpy()
            self._xi = tuple(torch.as_tensor(a, dtype=self.nu.dtype, device=self.nu.device)
                             for a in _divided_differences(nu, self.tau, nu.size))
        return self._xi

    def jacobian(self, d: torch.Tensor) -> torch.Tensor:
        """𝒥d by (35): U[Ξ¹∘S(H̃₁) + Ξ²∘T(H̃₁)]V_1ᵀ + U Diag(Ξ³)(Uᵀd − H̃₁V_1ᵀ), H̃₁ = UᵀdV_1 (V_2 never formed)."""
        if self.rank_alpha == 0:
            return torch.zeros_like(d)
        xi1, xi2, xi3 = self.divided_differences()
        Utd = self.U.T @ d
        H1 = Utd @ self.Vt.T
        S, T = 0.5 * (H1 + H1.T), 0.5 * (H1 - H1.T)
        return self.U @ ((xi1 * S + xi2 * T) @ self.Vt) + (self.U * xi3) @ (Utd - H1 @ self.Vt)

"""The τ-step's simplex QP (eq. 25) in torch, on whatever device the network lives on.

    τ* = argmin_{τ∈Δ_K} ½ τᵀAτ + bᵀτ,   A = Gram(∇_{Z_B}J_l) ⪰ 0,  b = −γJ

Solved by FISTA with a fixed number of iterations and Duchi et al.'s sort-based projection onto
the simplex, so a D-NPSVC++ mini-batch never waits on the host (no ``.item()``, no data-dependent
branch, no numpy round trip). The step is 1/L with L = ‖A‖_F ≥ λ_max(A); FISTA's bound
f(τ_k) − f* ≤ 2L‖τ_0 − τ*‖²/(k+1)² ≤ 4L/(k+1)² (Beck & Teboulle 2009, Thm. 4.4; ‖τ_0 − τ*‖² ≤ 2 on Δ)
is what the tests check. Warm-started from the previous τ*, which moves little between batches.
"""
from __future__ import annotations

import torch


def project_simplex(v: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of the last axis onto {x ≥ 0, Σx = 1} (sort and threshold)."""
    K = v.shape[-1]
    u, _ = torch.sort(v, dim=-1, descending=True)
    cumulative = u.cumsum(-1) - 1.0
    ks = torch.arange(1, K + 1, device=v.device, dtype=v.dtype)
    active = (u - cumulative / ks) > 0  # true on a prefix of the sorted entries
    rho = active.sum(-1, keepdim=True).clamp(min=1)
    theta = cumulative.gather(-1, rho - 1) / rho.to(v.dtype)
    return torch.clamp(v - theta, min=0.0)


def simplex_qp_torch(A: torch.Tensor, b: torch.Tensor, x0: torch.Tensor | None = None,
                     iterations: int = 100) -> torch.Tensor:
    """FISTA for argmin_{x∈Δ} ½xᵀAx + bᵀx with a fixed iteration count (no host synchronisation)."""
    K = b.shape[-1]
    A = 0.5 * (A + A.T)
    step = 1.0 / (torch.linalg.matrix_norm(A) + 1e-30)  # Frobenius norm ≥ λ_max for A ⪰ 0
    x = torch.full_like(b, 1.0 / K) if x0 is None else project_simplex(x0.to(b.dtype))
    y, t = x, 1.0
    for _ in range(iterations):
        x_new = project_simplex(y - step * (A @ y + b))
        t_next = 0.5 * (1.0 + (1.0 + 4.0 * t * t) ** 0.5)  # host scalars: the schedule is data-free
        y = x_new + ((t - 1.0) / t_next) * (x_new - x)
        x, t = x_new, t_next
    return x

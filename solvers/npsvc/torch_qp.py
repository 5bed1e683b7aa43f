"""The τ-step's simplex QP (eq. 25) in torch, on whatever device the network lives on.

    τ* = argmin_{τ∈Δ_K} ½ τᵀAτ + bᵀτ,   A = Gram(∇_{Z_B}J_l) ⪰ 0,  b = −γJ

Two solvers, neither of which waits on the host (no ``.item()``, no data-dependent branch, no
numpy round trip), so a D-NPSVC++ mini-batch stays on the device:

* ``simplex_qp_faces`` (K ≤ ``FACES_MAX_K``): exact. Every face S of the simplex at once: the
  KKT system of min over {τ_S ≥ 0 free, τ_{S^c} = 0, Σ τ = 1} is solved for all 2^K − 1 supports
  in one batched LU, the candidates that are feasible are scored by the objective, the best is
  kept. A minimal-support optimum has a nonsingular face system (otherwise a direction inside the
  face with A d = 0, Σ d = 0 would lead to a smaller support), so the optimum is a candidate, and
  every candidate kept is a feasible point scored exactly: the pick is never worse than it. About
  twenty kernel launches, against ~20 per iteration of FISTA: on a GPU, where a small network's
  batch is launch-bound, this is what keeps the τ-step cheap.
* ``simplex_qp_torch`` (any K): FISTA with a fixed number of iterations and Duchi et al.'s
  sort-based projection onto the simplex. The step is 1/L with L = ‖A‖_F ≥ λ_max(A); FISTA's bound
  f(τ_k) − f* ≤ 2L‖τ_0 − τ*‖²/(k+1)² ≤ 4L/(k+1)² (Beck & Teboulle 2009, Thm. 4.4; ‖τ_0 − τ*‖² ≤ 2
  on Δ) is what the tests check. Warm-started from the previous τ*, which moves little between batches.
"""
from __future__ import annotations

import functools

import torch

FACES_MAX_K = 12  # 4095 faces of 13×13 KKT systems; beyond that FISTA


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


@functools.lru_cache(maxsize=8)
def _faces(K: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(supports as a (2^K − 1)×K float64 0/1 matrix, the constant part of their KKT matrices)."""
    codes = torch.arange(1, 2**K, device=device)
    M = ((codes[:, None] >> torch.arange(K, device=device)) & 1).double()
    base = torch.zeros(len(M), K + 1, K + 1, dtype=torch.float64, device=device)
    base[:, :K, :K] = torch.diag_embed(1.0 - M)  # τ_i = 0 off the support
    base[:, :K, K] = M  # multiplier of Σ_S τ = 1
    base[:, K, :K] = M
    return M, base


def simplex_qp_faces(A: torch.Tensor, b: torch.Tensor, tol: float = 1e-9) -> torch.Tensor:
    """Exact argmin_{x∈Δ} ½xᵀAx + bᵀx by solving every face's KKT system in one batch (K ≤ FACES_MAX_K)."""
    K = b.shape[-1]
    if K > FACES_MAX_K:
        raise ValueError(f"simplex_qp_faces enumerates 2^K faces; K = {K} > {FACES_MAX_K}")
    A64, b64 = 0.5 * (A + A.T).double(), b.double()
    scale = torch.clamp(torch.linalg.matrix_norm(A64) + b64.abs().max(), min=1e-300)  # same argmin, O(1) entries
    A64, b64 = A64 / scale, b64 / scale
    M, base = _faces(K, A.device)
    kkt = base.clone()
    kkt[:, :K, :K] += M[:, :, None] * M[:, None, :] * A64
    rhs = torch.cat([-b64 * M, torch.ones_like(M[:, :1])], 1)
    solution, info = torch.linalg.solve_ex(kkt, rhs)  # no error check: a singular face is filtered below
    x = solution[:, :K]
    feasible = ((info == 0) & torch.isfinite(x).all(1) & (x >= -tol).all(1)
                & ((x.sum(1) - 1.0).abs() <= tol))
    x = torch.nan_to_num(x).clamp(min=0.0)
    x = x / x.sum(1, keepdim=True).clamp(min=1e-300)  # exactly on the simplex (a vertex is always feasible)
    value = 0.5 * ((x @ A64) * x).sum(1) + x @ b64
    best = torch.where(feasible, value, torch.full_like(value, torch.inf)).argmin()
    return x.index_select(0, best.reshape(1))[0].to(b.dtype)


def simplex_qp_device(A: torch.Tensor, b: torch.Tensor, x0: torch.Tensor | None = None) -> torch.Tensor:
    """The τ-step's device QP: exact over the faces for K ≤ FACES_MAX_K, warm-started FISTA beyond."""
    if b.shape[-1] <= FACES_MAX_K:
        return simplex_qp_faces(A, b)
    return simplex_qp_torch(A, b, x0)

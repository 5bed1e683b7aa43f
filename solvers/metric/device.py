"""The torch backend: pair and triplet arithmetic and the PSD projection on a torch device (CPU or CUDA).

``device="numpy"`` (the default) never imports torch. With a torch device the problem keeps the pair table U
on the device; every pass over the active triplets — pair values u_pᵀMu_p, margins ⟨H_t, M⟩ = q_diff − q_same
(digest §1.6), α(x) and ℓ(x) (eq. (2), App. A), the scatter-add Σ_t w_t H_t onto the pairs and its product —
runs there, and only the margins and α (needed by the screening rules on the CPU) and d × d matrices come
back. The PSD projection is torch.linalg.eigh (LAPACK for small d on CUDA). Everything else (the λ-path, the ledger's bookkeeping, the
rules) is the numpy code, so the two backends run the same algorithm and screen the same triplets.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..core import InputError, project_psd

DEVICES = ("numpy", "auto", "cpu", "cuda")
#: On CUDA, d × d eigendecompositions below this size stay in LAPACK on the host: a small torch.linalg.eigh on
#: a GPU is latency-bound (a solver call with host synchronisation per matrix), while the pair and triplet
#: passes are bandwidth-bound and gain from the device. torch-cpu always uses torch's eigh.
CUDA_EIGH_MIN_DIM = 128


@lru_cache(maxsize=None)
def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is in the test environment
        return None
    return torch


def resolve_device(device: str) -> str:
    """The device a problem runs on: "numpy", "cpu" (torch) or "cuda"; "auto" is cuda when torch sees a GPU,
    else numpy (the tested CPU default). Raises InputError for a device that is not there."""
    if device not in DEVICES:
        raise InputError(f"device = {device!r}; choose one of {', '.join(DEVICES)}")
    if device == "numpy":
        return device
    torch = _torch()
    if torch is None:
        if device == "auto":
            return "numpy"
        raise InputError(f"device = {device!r} needs PyTorch, which is not installed; use device='numpy'")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "numpy"
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("device = 'cuda' but torch sees no CUDA GPU here; use 'auto', 'cpu' or 'numpy'")
    return device


class TorchPairs:
    """The pair table of one problem on a torch device, and the passes an evaluation makes over triplets."""

    def __init__(self, U: np.ndarray, device: str, diagonal: bool) -> None:
        self.torch = _torch()
        self.device = self.torch.device(device)
        self.diagonal = diagonal
        self.U = self.torch.as_tensor(U, dtype=self.torch.float64, device=self.device)
        self.eigh_on_device = self.device.type != "cuda" or U.shape[1] >= CUDA_EIGH_MIN_DIM

    def tensor(self, a: np.ndarray):
        return self.torch.as_tensor(np.ascontiguousarray(a), device=self.device)

    def index(self, same: np.ndarray, diff: np.ndarray, rows: np.ndarray | None):
        """A subset's pair indices on the device (uploaded once per subset)."""
        return self.tensor(same.astype(np.int64)), self.tensor(diff.astype(np.int64)), (
            None if rows is None else self.tensor(rows.astype(np.int64)))

    def _rows(self, rows):
        return self.U if rows is None else self.U.index_select(0, rows)

    def margins(self, index, M: np.ndarray):
        """⟨H_t, M⟩ = u_diffᵀMu_diff − u_sameᵀMu_same, as a device tensor."""
        same, diff, rows = index
        U = self._rows(rows)
        Mt = self.tensor(M)
        q = U @ Mt if self.diagonal else ((U @ Mt) * U).sum(1)
        return q.index_select(0, diff) - q.index_select(0, same)

    def combine(self, index, weights) -> np.ndarray:
        """Σ_t w_t H_t = Σ_p c_p u_p u_pᵀ with c = scatter(w on diff) − scatter(w on same); ``weights`` a device
        tensor or None (all ones)."""
        same, diff, rows = index
        U = self._rows(rows)
        c = self.torch.zeros(U.shape[0], dtype=U.dtype, device=self.device)
        if weights is None:
            weights = self.torch.ones(same.shape[0], dtype=U.dtype, device=self.device)
        c.index_add_(0, diff, weights)
        c.index_add_(0, same, weights, alpha=-1.0)
        out = U.T @ c if self.diagonal else (U.T * c) @ U
        return out.cpu().numpy()

    def evaluate(self, index, M: np.ndarray, gamma: float):
        """One pass at M: (margins, α, Σ ℓ, Σ α_t H_t) with margins and α as numpy arrays (eq. (2), App. A)."""
        x = self.margins(index, M)
        z = (1.0 - x).clamp_(min=0.0)
        if gamma == 0:
            alpha, total = (x < 1.0).to(x.dtype), float(z.sum())
        else:
            alpha = (z / gamma).clamp_(max=1.0)
            quad = z.clamp(max=gamma)
            total = float((quad * quad).sum()) / (2 * gamma) + float((z - quad).sum())
        S = self.combine(index, alpha)
        return x.cpu().numpy(), alpha.cpu().numpy(), total, S

    def project_psd(self, A: np.ndarray) -> np.ndarray:
        """[A]_+ by torch.linalg.eigh (eigenvalues clipped at 0), as core.project_psd (which it calls for small
        d on CUDA, see CUDA_EIGH_MIN_DIM)."""
        if not self.eigh_on_device:
            return project_psd(A)
        S = self.tensor(0.5 * (A + A.T))
        vals, vecs = self.torch.linalg.eigh(S)
        if bool((vals > 0).all()):
            return S.cpu().numpy()
        return ((vecs * vals.clamp(min=0.0)) @ vecs.T).cpu().numpy()

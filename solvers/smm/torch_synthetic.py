"""The paper's synthetic recipe (Sec. 6.1, `synthetic.make_smm_synthetic`) generated on a torch device, so that
1.25e6 samples of 50 × 100 (25 GB in float32) never exist on the host.

Same distribution as the numpy generator (different random numbers: torch's generator, not numpy's):
    b_1..b_r = orth(randn(n_total, r)) (float64 QR on the device), W* = P Qᵀ with P, Q orthonormal,
    (X_i)_{kℓ} = (b_{⌈rℓ/q⌉})_i + ε, ε ~ N(0, δ²), y_i = sign(⟨W*, X_i⟩) with sign(0) = +1,
    the first n_train samples train, the last n_total − n_train test.
The samples are written straight into one (n_total, p·q) tensor in the working orientation (p ≤ q; when p > q
every X_i is stored transposed, as `problem.build_problem` does), CHUNK rows at a time; train and test are views.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..core import InputError
from .torch_alm import F64, X_times

CHUNK = 65_536  # rows drawn at a time (bounds the gathered signal's temporary)


@dataclass
class DeviceSynthetic:
    X_train: torch.Tensor  # (n_train, p·q), working orientation
    y_train: torch.Tensor  # (n_train,) float64 ±1
    X_test: torch.Tensor
    y_test: torch.Tensor
    shape: tuple[int, int]  # working orientation
    transposed: bool
    W_true: torch.Tensor  # (p, q) in the user's orientation, float64
    basis: torch.Tensor  # (n_total, r) float64, b_1..b_r


def column_groups(p: int, q: int, rank: int, transposed: bool, device) -> torch.Tensor:
    """For each entry of vec(X_i) in the working orientation, the index of b_{⌈rℓ/q⌉} it carries (0-based)."""
    group = torch.ceil(rank * torch.arange(1, q + 1, dtype=F64, device=device) / q).long() - 1  # per column ℓ
    if transposed:  # working sample X_iᵀ is q×p: row ℓ holds column ℓ of X_i
        return group.repeat_interleave(p)
    return group.repeat(p)


def make_smm_synthetic_torch(n_train: int, p: int, q: int, *, r: int = 0, noise: float = 2e-4, seed: int = 0,
                             device: torch.device, dtype=torch.float32) -> DeviceSynthetic:
    rank = min(20, p, q) if r == 0 else r
    n_total = math.ceil(1.25 * n_train)
    if n_train < 2 or p < 1 or q < 1:
        raise InputError(f"(n, p, q) = ({n_train}, {p}, {q}); need n ≥ 2 samples of at least 1×1")
    if rank > min(p, q) or rank > n_total:
        raise InputError(f"rank r = {rank} must be ≤ min(p, q) = {min(p, q)} and ≤ n_total = {n_total}")
    if device.type == "cuda":
        free = torch.cuda.mem_get_info(device)[0]
        need = n_total * p * q * torch.tensor([], dtype=dtype).element_size()
        if need > 0.8 * free:
            raise InputError(f"{n_total} samples of {p}×{q} need {need / 2**30:.1f} GiB; the GPU has "
                             f"{free / 2**30:.1f} GiB free")
    gen = torch.Generator(device=device).manual_seed(seed)
    P = torch.linalg.qr(torch.randn(p, rank, generator=gen, device=device, dtype=F64))[0]
    Q = torch.linalg.qr(torch.randn(q, rank, generator=gen, device=device, dtype=F64))[0]
    W_true = P @ Q.T
    basis = torch.linalg.qr(torch.randn(n_total, rank, generator=gen, device=device, dtype=F64))[0]
    transposed = p > q
    groups = column_groups(p, q, rank, transposed, device)
    basis_lo = basis.to(dtype)
    X = torch.empty(n_total, p * q, device=device, dtype=dtype)
    for start in range(0, n_total, CHUNK):
        stop = min(start + CHUNK, n_total)
        block = X[start:stop]
        block.normal_(0.0, noise, generator=gen)
        block += basis_lo[start:stop][:, groups]
    W_work = W_true.T if transposed else W_true
    y = torch.where(X_times(X, W_work) >= 0, 1.0, -1.0).to(F64)
    shape = (q, p) if transposed else (p, q)
    return DeviceSynthetic(X[:n_train], y[:n_train], X[n_train:], y[n_train:], shape, transposed, W_true, basis)

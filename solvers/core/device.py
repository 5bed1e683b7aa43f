"""The torch device a solver runs on: resolved once before any work, waited for before a clock is read, named in a
benchmark's record (torch is imported only here, on demand)."""
from __future__ import annotations

import platform

from .errors import InputError


def resolve_device(name: str):
    """"auto" → cuda when torch sees a GPU, else cpu; "cuda" without one is refused before any work."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("device='cuda' but torch sees no GPU here; use device='cpu' or 'auto'")
    return torch.device(name)


def synchronize(device) -> None:
    """Wait for the work queued on a CUDA ``device``, so that a wall-clock reading counts it (no-op on the CPU)."""
    if device.type == "cuda":
        import torch

        torch.cuda.synchronize(device)


def device_name(device) -> str:
    """The GPU's name, or the CPU's with torch's thread count."""
    import torch

    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU ({platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads)"

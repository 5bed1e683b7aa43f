"""The torch device a solver runs on, resolved once before any work (torch is imported only here, on demand)."""
from __future__ import annotations

from .errors import InputError


def resolve_device(name: str):
    """"auto" → cuda when torch sees a GPU, else cpu; "cuda" without one is refused before any work."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("device='cuda' but torch sees no GPU here; use device='cpu' or 'auto'")
    return torch.device(name)

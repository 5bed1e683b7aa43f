"""The array library behind an array: numpy on the host, torch on a device (knpsvc_torch.py).

K-NPSVC++'s objectives, Riemannian gradients, GPI and polar factor are written once, with operators and the few
functions numpy and torch name alike (exp, sqrt, where, linalg.eigh, linalg.svd), and look the library up here, so
the device path runs the same code as the numpy one without this family importing torch.
"""
from __future__ import annotations

import sys
from types import ModuleType

import numpy as np


def array_namespace(A) -> ModuleType:
    """numpy for numpy arrays (and scalars), torch for torch tensors."""
    return np if isinstance(A, (np.ndarray, np.generic, float, int)) else sys.modules[type(A).__module__]


def to_host(A) -> np.ndarray:
    """A numpy copy of a torch tensor on any device; numpy arrays pass through."""
    return A if isinstance(A, np.ndarray) else A.detach().cpu().numpy()

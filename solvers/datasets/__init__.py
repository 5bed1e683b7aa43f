"""One registry for every dataset: bundled (scikit-learn), real files from the data
directory, synthetic generators registered by families, and validated uploads.

    from solvers import datasets
    datasets.available()            # names you can load now, with their kind
    ds = datasets.load("wine")      # bundled or real, by name
    ds = datasets.generate("sparse-regression", m=100, n=500, seed=0)
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..core.errors import InputError
from .base import Dataset
from .bundled import BUNDLED, load_bundled
from .limits import upload_budget
from .realdata import REAL, RealDataset, data_dir, load_real
from .synthetic import SEED, Generator, generate, generators, register_generator
from .upload import MAX_UPLOAD_BYTES, parse_upload


def available(family: str | None = None) -> dict[str, str]:
    """{name: "bundled" | "real"} for every dataset that can be loaded now.

    Real datasets whose files are missing are not listed; with ``family`` the real
    ones are limited to those the family's paper uses (bundled ones are always listed).
    """
    out = {name: "bundled" for name in BUNDLED}
    for name, spec in REAL.items():
        if (family is None or family in spec.families) and spec.available():
            out[name] = "real"
    return out


def missing(family: str | None = None) -> dict[str, str]:
    """{name: explanation} for real datasets of the family whose files are absent."""
    return {name: f"needs {', '.join(spec.files)} under the data directory"
            for name, spec in REAL.items()
            if (family is None or family in spec.families) and not spec.available()}


def load(name: str) -> Dataset:
    """Load a bundled or real dataset by name (cached: treat the result as read-only).

    The cache is keyed by the data directory too, so a process that changes SOLVERS_DATA
    (a worker, a test) reads from the new directory instead of reusing what the old one held.
    """
    return _load(name, data_dir() if name in REAL else None)


@lru_cache(maxsize=32)
def _load(name: str, directory: Path | None) -> Dataset:
    if name in BUNDLED:
        return load_bundled(name)
    if name in REAL:
        return load_real(name)
    raise InputError(f"unknown dataset {name!r}; available: {', '.join(available())}")


__all__ = [
    "Dataset", "BUNDLED", "REAL", "RealDataset", "data_dir", "available", "missing", "load",
    "SEED", "Generator", "generate", "generators", "register_generator", "MAX_UPLOAD_BYTES", "parse_upload",
    "upload_budget",
]

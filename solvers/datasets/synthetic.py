"""Synthetic generators, registered by the families that own them.

A family registers its generators at import time::

    register_generator(Generator("sparse-regression", "sparse", make_sparse_regression,
                                 params=[Param("m", 200, int, low=2), ..., SEED],
                                 description="..."))

``generators(family)`` imports ``solvers.<family>`` first so its registrations exist.
Every generator takes a ``seed`` and is deterministic given it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.errors import InputError
from ..core.params import Param, validate_params
from .base import Dataset

SEED = Param("seed", 0, int, low=0, high=2**31 - 1, help="random seed; the same seed gives the same data")


@dataclass(frozen=True)
class Generator:
    name: str
    family: str
    make: Callable[..., Dataset]
    params: Sequence[Param]
    description: str = ""

    def __post_init__(self) -> None:
        if "seed" not in {p.name for p in self.params}:
            raise TypeError(f"generator {self.name} must take a seed parameter")

    def __call__(self, **values) -> Dataset:
        return self.make(**validate_params(self.params, values))


_GENERATORS: dict[str, Generator] = {}


def register_generator(gen: Generator) -> Generator:
    existing = _GENERATORS.get(gen.name)
    if existing is not None and existing.make is not gen.make:
        raise TypeError(f"generator name {gen.name!r} is already taken by family {existing.family}")
    _GENERATORS[gen.name] = gen
    return gen


def _import_family(family: str) -> None:
    try:
        importlib.import_module(f"solvers.{family}")
    except ModuleNotFoundError as exc:
        if exc.name != f"solvers.{family}":
            raise


def generators(family: str | None = None) -> dict[str, Generator]:
    from .. import FAMILIES

    for fam in ([family] if family else list(FAMILIES) + ["foundations"]):
        _import_family(fam)
    return {n: g for n, g in _GENERATORS.items() if family is None or g.family == family}


def generate(name: str, **values) -> Dataset:
    gens = _GENERATORS if name in _GENERATORS else generators()
    if name not in gens:
        raise InputError(f"unknown generator {name!r}; known: {', '.join(sorted(gens))}")
    return gens[name](**values)

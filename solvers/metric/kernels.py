"""Compiled per-triplet and per-pair loops (numba), for the work numpy can only do in many passes over arrays.

``compiled()`` returns the module of numba kernels (``compiled_kernels.py``), imported on first use:
- ``ledger_scan`` (with ``candidate_pairs``): the RRPB range ledger's step (Thm 3.10 turned into ranges of λ
  by Thm 4.1, ``ranges.RangeLedger``);
- ``sphere_linear_verdicts``: the sphere rule (eq. (4)) and the linear rule (Thm 3.1), as ``rules.screen``;
- ``gather_renumber``: a part of a triplet subset with its pairs renumbered (``TripletSubset.part``);
- ``floor_margins``: the least work of the ledger's step, timed by ``screening_profile``;
- ``sample_pair_values``, ``laplacian_product``: the solver's pair products through the samples
  (``TripletSubset.sample_form``) from the pairs' ends, so that a subset screening leaves builds no rows of the
  incidence E and no pair table (every path uses them, the naive one too).
The numpy code they replace stays, run with ``USE_NUMBA = False``; the tests compare the two on every bound
and rule (tests/metric/test_kernels.py).

The first call on a machine compiles the kernels (about 2 CPU s) and caches them on disk; a later process
loads them (about 0.3 CPU s, plus about 1.5 s to import numba). ``warm_up`` does either before the timed work
of a path, so no timing includes it; the bench prints what it took.
"""
from __future__ import annotations

import math
import time
from types import ModuleType

import numpy as np

#: The compiled kernels are used when True; False runs the numpy code they replace (tests compare the two).
USE_NUMBA = True

_warm = False


def compiled() -> ModuleType:
    """The numba kernels (``compiled_kernels``), imported on first use."""
    from . import compiled_kernels
    return compiled_kernels


def warm_up() -> float:
    """Import numba and compile (or load from the on-disk cache) every kernel on tiny arrays of the dtypes the
    solver passes; returns the CPU seconds it took (0 after the first call in a process, or with numpy)."""
    global _warm
    if _warm or not USE_NUMBA:
        return 0.0
    started = time.process_time()
    k = compiled()
    release, side = np.zeros(3, np.int32), np.zeros(3, bool)
    pair = np.array([0, 1, 0], np.int32), np.array([1, 0, 1], np.int32)
    q, nu, w = np.array([0.5, 3.0]), np.ones(3), np.zeros(2)
    k.ledger_scan(release, side, 1, *pair, q, nu, True, 1.0, 0.0, 1.0, 0.9, 0.05, 0.9, w, np.empty(3, np.int64),
                  np.empty(3), np.array([0, 3], np.int64), np.zeros(1, np.int64), np.ones(2), 2)
    k.candidate_pairs(release, 1, *pair, np.zeros(2, bool))
    x = np.array([-1.0, 0.5, 3.0])
    k.sphere_linear_verdicts(x, x, nu, 0.1, 1.0, 0.5, 0.05, True, False, np.empty(3, bool), np.empty(3, bool))
    k.gather_renumber(np.array([0, 2], np.int64), np.arange(3, dtype=np.int64), *pair, 2, True)
    X, ends, rows = np.ones((2, 2)), np.array([[0, 1]], np.int64), np.zeros(1, np.int64)
    k.sample_pair_values(X, np.ones(2), ends, rows, np.empty(1))
    k.laplacian_product(X, np.ones(1), ends, rows, np.empty((2, 2)))
    _warm = True
    return time.process_time() - started

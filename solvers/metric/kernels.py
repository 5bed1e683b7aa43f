"""Compiled per-triplet and per-pair loops (numba), for the work numpy can only do in many passes over arrays.

``compiled()`` returns the module of numba kernels (``compiled_kernels.py``), imported on first use:
- ``ledger_scan``, ``fill_buckets``, ``ledger_step``, ``candidate_pairs``: the RRPB range ledger's step, over T or
  over its candidates from buckets (Thm 3.10 turned into ranges of λ by Thm 4.1, ``ranges.RangeLedger``);
- ``sphere_linear_verdicts``: the sphere rule (eq. (4)) and the linear rule (Thm 3.1), as ``rules.screen``;
- ``split_screened``, ``gather_renumber``: a reduced problem narrowed by new verdicts (the triplets kept, H_L̂'s
  new pair weights) and a part of a triplet subset with its pairs renumbered (``TripletSubset.part``);
- ``floor_margins``: the least work of the ledger's step, timed by ``screening_profile``;
- ``triplet_terms``: an evaluation's per-triplet work (margins, α, the loss, Σ αH's pair weights) in one pass;
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
#: Records per chunk of the compiled range ledger's buckets (``compiled_kernels.ledger_step``): a bucket is a list
#: of chunks, each read in order.
LEDGER_CHUNK = 64

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
    b = dict(pool=np.empty((4 * LEDGER_CHUNK, 4), np.int32), pool_nu=np.empty(4 * LEDGER_CHUNK),
             head=np.full(9, -1, np.int32), tail=np.full(9, -1, np.int32), sizes=np.zeros(9, np.int64),
             next_chunk=np.full(4, -1, np.int32), fill=np.zeros(4, np.int32), free=np.arange(4, dtype=np.int32),
             n_free=np.array([4], np.int64))  # a chunk per bucket the two records below can reach
    records, nu, w = np.array([[0, 0, 1, 0], [1, 1, 0, 1]], np.int32), np.ones(2), np.zeros(2)
    k.fill_buckets(np.array([0, 2], np.int32), np.zeros(2, bool), records[:, 1].copy(), records[:, 2].copy(), nu, 1,
                   **b)
    k.candidate_pairs(records, 1, b["pool"], b["head"], b["next_chunk"], b["fill"], np.zeros(2, bool))
    k.ledger_step(1, records, nu, np.array([0.5, 3.0]), True, 1.0, 0.0, 1.0, 0.9, 0.05, 0.9, w, np.empty(4, np.int32),
                  np.zeros(2, bool), np.zeros(2, np.int32), np.zeros(2, bool), np.empty((2, 4), np.int32), np.empty(2),
                  np.empty(2), **b)
    pair = np.array([0, 1, 0], np.int32), np.array([1, 0, 1], np.int32)
    k.ledger_scan(np.zeros(3, np.int32), np.zeros(3, bool), 1, *pair, np.array([0.5, 3.0]), np.ones(3), True, 1.0,
                  0.0, 1.0, 0.9, 0.05, 0.9, w, np.empty(3, np.int64), np.empty(3))
    nu = np.ones(3)
    x = np.array([-1.0, 0.5, 3.0])
    k.sphere_linear_verdicts(x, np.ones(2), *pair, False, x, nu, 0.1, 1.0, 0.5, 0.05, True, False, np.empty(3, bool),
                             np.empty(3, bool))
    k.split_screened(np.array([True, False, False]), np.array([False, True, False]), *pair, x, True,
                     np.empty(3, np.int64), np.empty(3), np.zeros(3, bool), np.zeros(2))
    k.gather_renumber(np.array([0, 2], np.int64), np.arange(3, dtype=np.int64), *pair, 2, True)
    X, ends, rows = np.ones((2, 2)), np.array([[0, 1]], np.int64), np.zeros(1, np.int64)
    k.sample_pair_values(X, np.ones(2), ends, rows, np.empty(1))
    k.laplacian_product(X, np.ones(1), ends, rows, np.empty((2, 2)))
    k.triplet_terms(np.empty(1), np.ones(2), np.zeros(1, np.int32), np.ones(1, np.int32), 0.05, True, np.empty(1),
                    np.zeros(2))
    _warm = True
    return time.process_time() - started

"""What a run will cost, estimated from the data's shape and the parameters before any work starts.

Each family gets one small estimator that returns a ``Cost``: a flop count per iteration, a typical
number of iterations, a peak-memory figure and the advice to give when it is too much. The page
passes it to ``run_controls``, which refuses (InputError naming what to change) when the memory is
above the solvers' budget or the typical time above ``run_limit_seconds()``, and turns the live
re-run off (Run needed, with the estimate shown) when the run takes more than ``LIVE_SECONDS``.

The time model is deliberately simple: iterations × (Python overhead + flops / FLOP_RATE), where matrix
products count at BLAS speed (their flops scaled by FLOP_RATE / BLAS_RATE). FLOP_RATE, BLAS_RATE and
OVERHEAD_SECONDS were read off single-threaded runs on the shared 2-core machine (metric, round 7: iris,
wine and segment paths at 17–28 ms per iteration, of which the pair products run at 14–19 GFLOP/s), so
estimates are orders of magnitude, not promises; the Stop button covers the rest.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from solvers.core import InputError, format_bytes, memory_budget

FLOP_RATE = 4e8  # elementwise numpy flops per second, one loaded core
BLAS_RATE = 8e9  # matrix-product flops per second, one loaded core (measured 14–19e9 for the metric pair products)
OVERHEAD_SECONDS = 1e-3  # Python and bookkeeping per iteration
LIVE_SECONDS = 5.0  # above this a change waits for Run
TYPICAL_ITERS = 300  # iterations a first-order run typically takes before its tolerance (the caps are the worst case)
TYPICAL_STEPS = 60  # metric λ-path at ρ = 0.8: iris took 60 λ values, wine 159
#: a path's time relative to the naive (unscreened) one: a screened path's iterations cost about half (round 7, CPU s
#: per iteration screened / naive: iris 8.1 / 17, wine 14.5 / 28, segment 8.3 / 23.7) and the semidefinite rule's
#: eigendecompositions 6× the sphere rule's path (iris 8.2 s against 1.5 s)
RULE_WEIGHT = {"naive": 1.0, "sdp": 3.0}
SCREENED_WEIGHT = 0.5
DEFAULT_RUN_LIMIT = 900.0  # seconds; OPTLAB_RUN_LIMIT_S overrides (a shared server may want less)


def run_limit_seconds() -> float:
    """The longest typical run a page accepts, in seconds (env OPTLAB_RUN_LIMIT_S, default 15 min)."""
    try:
        return float(os.environ.get("OPTLAB_RUN_LIMIT_S", DEFAULT_RUN_LIMIT))
    except ValueError:
        return DEFAULT_RUN_LIMIT


def path_time_limit(wanted: float, parts: int) -> float:
    """A time limit for one of ``parts`` solver calls that make one page action, within run_limit_seconds()."""
    return min(wanted, run_limit_seconds() / parts)


@dataclass(frozen=True)
class Cost:
    """A run's estimated size: ``iterations`` of ``flops_per_iter`` each, peaking at ``bytes``."""

    what: str  # the sizes that drive the cost, e.g. "46,000,000 triplets, d = 30"
    iterations: float  # typical total over every job of the run
    flops_per_iter: float
    bytes: float
    advice: str  # what to change when it is too much
    max_iterations: float | None = None  # the caps' worst case, shown beside the typical figure

    @property
    def seconds(self) -> float:
        return self.iterations * (OVERHEAD_SECONDS + self.flops_per_iter / FLOP_RATE)

    @property
    def worst_seconds(self) -> float:
        its = self.max_iterations if self.max_iterations is not None else self.iterations
        return its * (OVERHEAD_SECONDS + self.flops_per_iter / FLOP_RATE)

    def describe(self) -> str:
        text = f"≈ {format_seconds(self.seconds)} and {format_bytes(self.bytes)} ({self.what})"
        if self.worst_seconds > 2 * self.seconds:
            text += f"; up to {format_seconds(self.worst_seconds)} if every iteration cap is reached"
        return text


def format_seconds(s: float) -> str:
    if s < 1:
        return "under a second"
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.0f} h"


def check(cost: Cost) -> None:
    """InputError with what to change when the run cannot fit in memory or would take too long."""
    budget = memory_budget()
    if cost.bytes > budget:
        raise InputError(f"This run needs about {format_bytes(cost.bytes)} ({cost.what}), more than the "
                         f"{format_bytes(budget)} memory budget. {cost.advice}")
    limit = run_limit_seconds()
    if cost.seconds > limit:
        raise InputError(f"This run would take about {format_seconds(cost.seconds)} ({cost.what}), more than the "
                         f"{format_seconds(limit)} a page allows. {cost.advice}")


def _class_counts(y) -> np.ndarray:
    return np.unique(np.asarray(y), return_counts=True)[1].astype(np.int64)


def metric_cost(y, n_features: int, *, k: int, diagonal: bool, max_samples: int, max_steps: int, max_iter: int,
                rules: Sequence[str], rho: float = 0.8, stop: float = 0.01) -> Cost:
    """Triplet screening paths, one per entry of ``rules`` (the rule each path screens with, "naive" for a path
    without screening): |T| from the class sizes, pair distances d² (d for diagonal M) and an eigendecomposition
    d³ per iteration."""
    counts = _class_counts(y)
    n = int(counts.sum())
    if max_samples and max_samples < n:
        counts = np.maximum(1, np.round(counts * max_samples / n)).astype(np.int64)
        n = int(counts.sum())
    if k == 0:  # all triplets: same-class pairs × other-class points (count_triplets with k = ∞)
        triplets = int(np.sum(counts * (counts - 1) * (n - counts)))
        pairs = n * (n - 1) // 2
    else:
        triplets = int(np.sum(counts * np.minimum(k, counts - 1) * np.minimum(k, n - counts)))
        pairs = 2 * n * k
    d = n_features
    per_pair = d if diagonal else d * d
    flops = 4.0 * pairs * per_pair * (FLOP_RATE / BLAS_RATE) + (0 if diagonal else 10.0 * d**3) + 10.0 * triplets
    # iterations per λ grow with d (round 7, naive paths at ρ = 0.8 / 0.9: iris, d = 4, 8.6 / –; wine, d = 13,
    # 16.8 / 13.1; segment, d = 19, 27.5 / 20.4)
    per_step = min(max_iter, int(1.5 * d) + 5)
    runs, weight = len(rules), sum(RULE_WEIGHT.get(r, SCREENED_WEIGHT) for r in rules)
    # λ_t = ρ^t λ_max: covering the same range takes 60·ln 0.8 / ln ρ steps; a stop below the default 0.01
    # (0: never) lets the path run to max_steps
    steps = max_steps if stop < 0.01 else min(max_steps, TYPICAL_STEPS * math.log(0.8) / math.log(rho))
    typical = weight * steps * per_step
    kept = runs * max_steps * (d if diagonal else d * d) * 8.0  # one M per λ per run
    memory = 64.0 * triplets + 8.0 * pairs * 2 + kept + 8.0 * n * d
    shape = f"{triplets:,} triplets from {n} samples, d = {d}{' (diagonal M)' if diagonal else ''}, {runs} path(s)"
    advice = ("Use k ≥ 1 instead of all triplets, set max_samples to subsample, turn on diagonal M, reduce the "
              "features (PCA) or compare fewer bounds and rules.")
    return Cost(shape, typical, flops, memory, advice, max_iterations=weight * max_steps * max_iter)


def multitask_cost(ds, n_rows: int, *, max_iter: int, methods: int) -> Cost:
    """cASO: gradients over the stacked rows (N·d), an eigendecomposition of the d×d M per step (d³).

    Tasks are the columns of a 2-D y (every row then belongs to every task), the groups, or one-vs-rest classes.
    """
    shared = np.ndim(ds.y) == 2
    m = ds.y.shape[1] if shared else len(np.unique(ds.groups)) if ds.groups is not None else len(ds.classes)
    stacked = n_rows * m if shared or ds.groups is None else n_rows
    d = ds.n_features
    flops = 4.0 * stacked * d + 10.0 * d**3 + 4.0 * m * d * d
    memory = 8.0 * (stacked * (d + 4) + 6 * d * d + 4 * m * d) * 2
    return Cost(f"{stacked:,} task rows, d = {d}, {m} tasks, {methods} method(s)",
                methods * min(max_iter, TYPICAL_ITERS), flops, memory,
                "Use fewer rows per task, fewer features (PCA) or fewer tasks, or lower max_iter.",
                max_iterations=methods * max_iter)


def sparse_cost(nnz: int, n_rows: int, n_features: int, *, max_iter: int, time_limit: float, methods: int,
                fits: int = 1) -> Cost:
    """ℓ0 APG: a few products with X (2·nnz) per iteration; each method stops at its time limit anyway."""
    flops = 3 * 2.0 * nnz + 10.0 * n_features
    within_limit = time_limit / (OVERHEAD_SECONDS + flops / FLOP_RATE)
    iterations = fits * methods * min(max_iter, TYPICAL_ITERS, within_limit)
    memory = 16.0 * nnz * 3 + 8.0 * (n_rows + n_features) * 8
    return Cost(f"{n_rows:,} × {n_features:,} X with {nnz:,} stored entries, {methods} method(s) × {fits} fit(s)",
                iterations, flops, memory, "Use fewer rows or features, a shorter time limit or fewer methods.",
                max_iterations=fits * methods * min(max_iter, within_limit))


#: per method: flops per iteration in units of n·pq, typical iterations (None: runs to max_iter). Read off
#: 500 samples of 10×10 (smm-synthetic): ALM-SNCG 17 iterations of 19 ms, isPADMM 26 of 16 ms,
#: sGS-isPADMM 500 (its cap) of 2.8 ms, F-ADMM 36 of 388 ms (its dual QP).
SMM_METHOD_MODEL = {"alm-sncg": (144.0, 30), "ispadmm": (120.0, 50), "sgs-ispadmm": (15.0, None),
                    "fadmm": (3100.0, 50)}


def smm_cost(n: int, p: int, q: int, *, max_iter: int, methods: Sequence[str]) -> Cost:
    """SMM: each method's iterations cost a multiple of n·pq (products with the data, CG, the dual QP)."""
    npq = float(n) * p * q
    model = [SMM_METHOD_MODEL.get(m, (144.0, None)) for m in methods] or [(144.0, None)]
    iterations = sum(min(max_iter, its or max_iter) for _, its in model)
    flops = sum(w * npq * min(max_iter, its or max_iter) for w, its in model) / max(iterations, 1)
    memory = 8.0 * (3 * npq + 10 * p * q + 10 * n)
    return Cost(f"{n:,} samples of {p}×{q}, {len(methods)} method(s)", iterations, flops, memory,
                "Lower n_max or upsample, or compare fewer methods (F-ADMM is the slowest).",
                max_iterations=max(len(methods), 1) * max_iter)


def npsvc_cost(n_train: int, n_test: int, n_classes: int, *, max_iter: int, methods: int) -> Cost:
    """Kernel NPSVC: the n × n kernel and one dual Hessian per class; a solve per class per step."""
    from solvers.npsvc.problem import memory_estimate  # the family's own footprint model

    flops = 2.0 * n_classes * n_train**2 + n_train**3 / 3
    return Cost(f"{n_train:,} training rows, {n_classes} classes, {methods} method(s)",
                methods * min(max_iter, 50), flops, memory_estimate(n_train, n_test, n_classes),
                "Lower max_train (a seeded subsample) or compare fewer methods.", max_iterations=methods * max_iter)

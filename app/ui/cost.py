"""What a run will cost, estimated from the data's shape and the parameters before any work starts.

Each family gets one small estimator that returns a ``Cost``: a flop count per iteration, a typical
number of iterations, a peak-memory figure and the advice to give when it is too much. The page
passes it to ``run_controls``, which refuses (InputError naming what to change) when the memory is
above the solvers' budget or the typical time above ``run_limit_seconds()``, and turns the live
re-run off (Run needed, with the estimate shown) when the run takes more than ``LIVE_SECONDS``.

The time model is deliberately simple: iterations × (Python overhead + flops / FLOP_RATE), where matrix
products count at BLAS speed (their flops scaled by FLOP_RATE / BLAS_RATE) and each family has its own typical
iteration counts and per-iteration overhead. The constants were read off single-threaded CPU seconds on the shared
2-core machine (the metric pair products at 14–19 GFLOP/s; the rest below, family by family), and
``python -m app.calibrate`` checks every page's defaults and presets against measured runs (within 2× either way,
docs/estimates.md). They are estimates of CPU seconds, not promises: a loaded machine's wall clock runs longer, and
the Stop button covers the rest.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from solvers.core import InputError, format_bytes, memory_budget

FLOP_RATE = 4e8  # elementwise numpy flops per second, one loaded core
BLAS_RATE = 8e9  # matrix-product flops per second, one loaded core (measured 14–19e9 for the metric pair products)
OVERHEAD_SECONDS = 1e-3  # Python and bookkeeping per iteration
LIVE_SECONDS = 5.0  # above this a change waits for Run
TYPICAL_ITERS = 300  # iterations a first-order run typically takes before its tolerance (the caps are the worst case)
TYPICAL_STEPS = 60  # metric λ-path at ρ = 0.8: iris took 60 λ values, wine 159
#: a path's time relative to the naive (unscreened) one: a screened path's iterations cost about half (CPU s
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
    overhead: float = OVERHEAD_SECONDS  # seconds of Python per iteration besides the flops (the family's own)

    @property
    def seconds(self) -> float:
        return self.iterations * (self.overhead + self.flops_per_iter / FLOP_RATE)

    @property
    def worst_seconds(self) -> float:
        its = self.max_iterations if self.max_iterations is not None else self.iterations
        return its * (self.overhead + self.flops_per_iter / FLOP_RATE)

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


FOUNDATIONS_OVERHEAD = 2.5e-5  # seconds per iteration of a 2-D method (16–43 µs measured on an idle core; the gradient is a few flops)


def foundations_cost(methods: int, max_iter: int) -> Cost:
    """Foundations' 2-D methods: Python per iteration only; most runs go to the cap at the page's tolerance."""
    return Cost(f"{methods} method(s) × up to {max_iter:,} iterations in 2-D", max(methods, 1) * max_iter, 0.0, 0.0,
                "Lower max_iter or compare fewer methods.", overhead=FOUNDATIONS_OVERHEAD)


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
    # iterations per λ grow with d (naive paths at ρ = 0.8 / 0.9: iris, d = 4, 8.6 / –; wine, d = 13,
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


#: typical iterations per multitask method at its tolerance (APG: 97 on the page's default, its cap of 200 with
#: η = 0.1; BCD: 3 and 21 outer steps); the others run to TYPICAL_ITERS
MULTITASK_TYPICAL_ITERS = {"apg": 150, "bcd": 15}
SDP_NEWTON_STEPS = 30  # interior-point iterations of the cvxpy SDP (CLARABEL) before its tolerance


def multitask_cost(ds, n_rows: int, *, max_iter: int, methods: int | Sequence[str]) -> Cost:
    """cASO: gradients over the stacked rows (N·d), an eigendecomposition of the d×d M per step (d³, at BLAS speed,
    as is the m·d² product: an APG step took 35 ms at d = 300 and 2.4 s at d = 1500, estimated 35 ms and 4.3 s).
    ``methods``: the methods' names, or how many runs of TYPICAL_ITERS (a sweep's cells).

    Tasks are the columns of a 2-D y (every row then belongs to every task), the groups, or one-vs-rest classes.
    """
    shared = np.ndim(ds.y) == 2
    m = ds.y.shape[1] if shared else len(np.unique(ds.groups)) if ds.groups is not None else len(ds.classes)
    stacked = n_rows * m if shared or ds.groups is None else n_rows
    d = ds.n_features
    names = ["?"] * methods if isinstance(methods, int) else list(methods) or ["?"]
    first_order = [name for name in names if name != "cvxpy"]
    flops = 4.0 * stacked * d + (10.0 * d**3 + 4.0 * m * d * d) * (FLOP_RATE / BLAS_RATE)
    iterations = sum(min(max_iter, MULTITASK_TYPICAL_ITERS.get(name, TYPICAL_ITERS)) for name in first_order)
    # the cvxpy SDP: an interior-point method whose Newton systems are dense in the d(d+1)/2 entries of M
    # ((d²/2)³ flops at BLAS speed each, about SDP_NEWTON_STEPS of them; d = 64 took 50–63 s here)
    sdp_seconds = (len(names) - len(first_order)) * SDP_NEWTON_STEPS * (d * d / 2) ** 3 / BLAS_RATE
    iterations_all = max(iterations, 1)
    memory = 8.0 * (stacked * (d + 4) + 6 * d * d + 4 * m * d) * 2
    return Cost(f"{stacked:,} task rows, d = {d}, {m} tasks, {len(names)} method(s)",
                iterations_all, flops * iterations / iterations_all, memory,
                "Use fewer rows per task, fewer features (PCA) or fewer tasks, lower max_iter, or leave out the "
                "cvxpy SDP.", max_iterations=max(len(first_order) * max_iter, 1),
                overhead=sdp_seconds / iterations_all)


#: typical iterations per ℓ0 method on least squares (PG: 141 on the page's synthetic default, 679 with correlated
#: features; APG: 20–85; APG+, GraSP: 6–12); PG runs to its cap on the logistic loss (2000 of 2000)
SPARSE_TYPICAL_ITERS = {"pg": 260, "apg": 50, "apg+": 10, "grasp": 10}
SPARSE_OVERHEAD = 3.5e-5  # seconds of Python per iteration (66–83 µs in all on the 150 × 500 default)
#: flops per second of the products with X: a dense X took 0.4 ns per stored entry and iteration (three products,
#: 1000 × 5000 and 1000 × 20000), a CSR one about four times as long
SPARSE_DENSE_RATE, SPARSE_CSR_RATE = 2 * BLAS_RATE, BLAS_RATE / 2


def sparse_cost(nnz: int, n_rows: int, n_features: int, *, max_iter: int, time_limit: float,
                methods: int | Sequence[str], fits: int = 1, loss: str = "ls") -> Cost:
    """ℓ0 APG: a few products with X (2·nnz each) and vector work over the features per iteration; each method
    stops at its time limit anyway. ``methods``: the methods' names, or how many."""
    rate = SPARSE_DENSE_RATE if nnz >= n_rows * n_features else SPARSE_CSR_RATE
    flops = 3 * 2.0 * nnz * (FLOP_RATE / rate) + 10.0 * n_features
    per_iter = SPARSE_OVERHEAD + flops / FLOP_RATE
    within_limit = time_limit / per_iter
    names = ["?"] * methods if isinstance(methods, int) else list(methods) or ["?"]

    def typical(name: str) -> float:
        its = max_iter if name == "pg" and loss != "ls" else SPARSE_TYPICAL_ITERS.get(name, TYPICAL_ITERS)
        return min(max_iter, its, within_limit)
    iterations = fits * sum(typical(name) for name in names)
    memory = 16.0 * nnz * 3 + 8.0 * (n_rows + n_features) * 8
    return Cost(f"{n_rows:,} × {n_features:,} X with {nnz:,} stored entries, {len(names)} method(s) × {fits} fit(s)",
                iterations, flops, memory, "Use fewer rows or features, a shorter time limit or fewer methods.",
                max_iterations=fits * len(names) * min(max_iter, within_limit), overhead=SPARSE_OVERHEAD)


#: per method: seconds of Python per iteration, elementwise flops per iteration in units of n·pq, typical iterations
#: (None: runs to max_iter). Read off single-threaded CPU seconds (``python -m app.calibrate`` and direct solves on
#: smm-synthetic, n·pq from 5e4 to 3.6e6, C = 1 and 100, τ = 10, ε = 1e-6): ALM-SNCG 4–12 iterations of
#: 3 ms + 10 ns·npq, isPADMM 24–28 of 1.5 ms + 7 ns·npq (28–50 for τ up to 5000 with the page's γ period),
#: sGS-isPADMM its cap of 0.2 ms + 3.5 ns·npq (9.5–10.3 ms a step at 3000 × 30 × 30, τ = 10 and 200), F-ADMM 26–38
#: of 2.5 ms + 6 ns·npq (10 ns of a core at FLOP_RATE are 4 flops). ALM-SNCG's ``warm_start`` isPADMM steps cost
#: as isPADMM's.
SMM_METHOD_MODEL = {"alm-sncg": (3e-3, 4.0, 10), "ispadmm": (1.5e-3, 2.8, 28), "sgs-ispadmm": (2e-4, 1.4, None),
                    "fadmm": (2.5e-3, 2.4, 35)}
SMM_ADVICE = "Lower n_max or upsample, or compare fewer methods (F-ADMM is the slowest)."
#: scikit-learn's Barnes–Hut t-SNE (perplexity 30, PCA start), one core: 1.5 CPU s for 400 points and 5.2–5.9 s for
#: 1000 (64 and 300 features), ≈ 1.9e-4 s·n^1.5 a projection
TSNE_SECONDS = 1.9e-4


def tsne_cost(n_points: int, projections: int) -> Cost:
    """``projections`` t-SNE projections of ``n_points`` rows each (NPSVC++'s raw and learned features, Fig. 3);
    its neighbour lists (3 × perplexity a point) and gradients are what it holds."""
    return Cost(f"t-SNE of {n_points:,} points, {projections} projection(s)", projections, 0.0,
                8.0 * n_points * 200, "Embed fewer points, or use PCA.", overhead=TSNE_SECONDS * n_points**1.5)


def smm_cost(n: int, p: int, q: int, *, max_iter: int, methods: Sequence[str], warm_start: int = 0) -> Cost:
    """SMM: each method's iterations cost a fixed Python part and a multiple of n·pq (products with the data, CG,
    the dual QP); ``warm_start``: the isPADMM steps ALM-SNCG starts from, when it is among ``methods``."""
    npq = float(n) * p * q
    model = [SMM_METHOD_MODEL.get(m, SMM_METHOD_MODEL["alm-sncg"]) for m in methods] or [SMM_METHOD_MODEL["alm-sncg"]]
    its = [min(max_iter, typical or max_iter) for _, _, typical in model]
    if warm_start and "alm-sncg" in methods:
        model.append(SMM_METHOD_MODEL["ispadmm"])
        its.append(warm_start)
    iterations = max(sum(its), 1)
    overhead = sum(k * a for k, (a, _, _) in zip(its, model)) / iterations
    flops = sum(k * w * npq for k, (_, w, _) in zip(its, model)) / iterations
    memory = 8.0 * (3 * npq + 10 * p * q + 10 * n)
    return Cost(f"{n:,} samples of {p}×{q}, {len(methods)} method(s)", iterations, flops, memory, SMM_ADVICE,
                max_iterations=max(len(methods), 1) * max_iter + warm_start, overhead=overhead)


#: the C path (Algorithm 3 against warm-started ALM-SNCG), read off solve_path on smm-synthetic (n·pq from 5e4 to
#: 2.7e6, 10 and 50 points over [0.1, 100] and [1e-3, 1e3], ε from 1e-4 to 1e-8): ALM iterations per grid point
#: grow as 1.9·log10(1/ε) − 4.3 (3.3 at 1e-4, 7.1 at 1e-6, 10.9 at 1e-8) and the first point takes about 5 more;
#: an iteration costs 3 ms + 1 ns·npq and a grid point 50 ns·npq besides (σ₀, the margins and the KKT measures over
#: every sample); an AS+ALM point after the first costs 0.4–1.0 of a Warm+ALM point per sieving round.
PATH_ITER_SECONDS, PATH_ITER_PER_NPQ, PATH_POINT_PER_NPQ = 3e-3, 1e-9, 5e-8
AS_ROUND_SHARE = 0.6
#: with ε̂ below the paper's 0.05 the sieve leaves out samples that then violate: up to 15% of n on the hardest grid
#: points with ε̂ = 0, 3% averaged over the path (rounds of d_max violators each, at most max_rounds)
AS_VIOLATOR_SHARE, EPS_HAT_NO_VIOLATORS = 0.03, 0.05


def smm_path_cost(n: int, p: int, q: int, *, points: int, path_tol: float, time_limit: float, eps_hat: float = 0.05,
                  d_max: int = 500, max_rounds: int = 20, max_iter: int = 500) -> Cost:
    """Both C paths of the SMM page (Warm+ALM and AS+ALM), each stopped after the grid point that passes
    ``time_limit`` (a path can overrun by one point); the estimate is their sum."""
    npq = float(n) * p * q
    per_point = min(max_iter, max(2.0, 1.9 * math.log10(1.0 / path_tol) - 4.3))
    iter_seconds = PATH_ITER_SECONDS + PATH_ITER_PER_NPQ * npq
    point = per_point * iter_seconds + PATH_POINT_PER_NPQ * npq
    first = point + 5 * iter_seconds
    violators = AS_VIOLATOR_SHARE * n * max(0.0, 1.0 - eps_hat / EPS_HAT_NO_VIOLATORS)
    rounds = min(max_rounds, 1.0 + violators / d_max)
    as_point = AS_ROUND_SHARE * rounds * point
    warm = min(first + (points - 1) * point, time_limit + max(first, point))
    sieved = min(first + (points - 1) * as_point, time_limit + max(first, as_point))
    seconds = warm + sieved
    memory = 8.0 * (4 * npq + 2 * points * p * q + 10 * n)  # the data, a reduced copy, a solution per point
    return Cost(f"2 paths of {points} C values on {n:,} samples of {p}×{q}, η_kkt ≤ {path_tol:g}"
                + (f", up to {rounds:.0f} sieving rounds a point" if rounds >= 2 else ""),
                seconds / iter_seconds, 0.0, memory,
                "Use fewer grid points, a looser path tolerance, a larger d_max or ε̂ (fewer sieving rounds), "
                "or lower n_max or upsample.", overhead=iter_seconds)


#: the deep methods train for ``epochs`` of mini-batches of NPSVC_BATCH rows; seconds of one torch thread per batch
#: (digits, 300 training rows, 15 epochs = 75 batches, least of 3 warm runs on an idle core: D-NPSVC++ 0.32 s, DTWSVN
#: 0.12 s; a loaded server or a first run, which pays torch's start-up, takes 2–3× that, hence the margin)
NPSVC_BATCH_SECONDS = {"dnpsvc": 6e-3, "fixed-tau": 2.5e-3, "cross-entropy": 2.5e-3}
NPSVC_BATCH, NPSVC_EPOCHS = 64, 15
#: Python seconds of one iteration of a kernel method besides its matrix products: a K-NPSVC++ outer iteration (U-,
#: P- and τ-steps, eqs. (17)–(20)) against one QP iteration of the others (digits defaults, idle core: K-NPSVC++ 10
#: iterations in 0.02 s, TWSVM 67 in 0.01 s)
NPSVC_ITERATION_SECONDS = {"knpsvc": 2e-3}
NPSVC_QP_ITERATION_SECONDS = 2e-4
NPSVC_TYPICAL_ITERS = 50  # a kernel method's QP iterations over all classes before its tolerance (TWSVM: 67 on digits)


def npsvc_cost(n_train: int, n_test: int, n_classes: int, *, max_iter: int | Mapping[str, int],
               methods: int | Sequence[str], epochs: Mapping[str, int] | None = None) -> Cost:
    """Kernel NPSVC: the n × n kernel and a factor per class once per method, then a solve per class per step. The
    deep methods (named in ``methods``, with their ``epochs``): a batch of NPSVC_BATCH rows per iteration.
    ``methods``: the methods' names, or how many kernel runs (a sweep's cells); ``max_iter``: one cap for all, or
    each method's own (K-NPSVC++ stops at its official 10 outer iterations, the QP solvers at 1000)."""
    from solvers.npsvc.problem import memory_estimate  # the family's own footprint model

    names = ["?"] * methods if isinstance(methods, int) else list(methods) or ["?"]
    deep = [m for m in names if m in NPSVC_BATCH_SECONDS]
    kernel = [m for m in names if m not in NPSVC_BATCH_SECONDS]
    cap = (lambda m: max_iter.get(m, max(max_iter.values(), default=1))) if isinstance(max_iter, Mapping) else (
        lambda m: max_iter)
    batches = math.ceil(n_train / NPSVC_BATCH)
    deep_its = {m: (epochs or {}).get(m, NPSVC_EPOCHS) * batches for m in deep}
    kernel_its = {m: min(cap(m), NPSVC_TYPICAL_ITERS) for m in kernel}
    iterations = max(sum(kernel_its.values()) + sum(deep_its.values()), 1)
    # matrix work at BLAS speed: a Cholesky factor per method, and per iteration a product with each class's block
    blas_flops = len(kernel) * n_train**3 / 3 + sum(kernel_its.values()) * 2.0 * n_classes * n_train**2
    seconds_besides_flops = (sum(k * NPSVC_ITERATION_SECONDS.get(m, NPSVC_QP_ITERATION_SECONDS)
                                 for m, k in kernel_its.items())
                             + sum(k * NPSVC_BATCH_SECONDS[m] for m, k in deep_its.items()))
    return Cost(f"{n_train:,} training rows, {n_classes} classes, {len(names)} method(s)",
                iterations, blas_flops * (FLOP_RATE / BLAS_RATE) / iterations,
                memory_estimate(n_train, n_test, n_classes),
                "Lower max_train (a seeded subsample) or compare fewer methods.",
                max_iterations=sum(cap(m) for m in kernel) + sum(deep_its.values()),
                overhead=seconds_besides_flops / iterations)

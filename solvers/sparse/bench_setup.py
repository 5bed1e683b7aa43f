"""`python -m solvers.bench sparse setup`: where the time of one estimator fit goes.

Profiles (cProfile, one fit each) the default estimator and its fast variant (warm_path=False,
greedy=False) on the large dense synthetic problems of the peers bench, with the paper's L
(Lanczos bound on σ_max(X)²) and with the backtracked L, and splits the wall time into: input
validation, the design (column norms; no copy of dense X), the bound on L, the solver's own
iterations (every solve of the fit), the greedy start, the swap polish. The target is a
whole fit ≤ 2× the iterations.
"""
from __future__ import annotations

import cProfile
import pstats
import time

import numpy as np
import pandas as pd

from . import SparseLinearRegression, SparseLogisticRegression
from .bench_common import planted

PARTS = {  # column: (module file, function) whose cumulative time it reports
    "validation [s]": ("validation.py", "validate_data"),
    "design [s]": ("design.py", "build"),
    "L bound [s]": ("lipschitz.py", "sigma_max_sq_bound"),
    "iterations [s]": ("accelerated.py", "run_accelerated"),
    "greedy start [s]": ("path.py", "greedy_support"),
    "polish [s]": ("polish.py", "swap_polish"),
}
VARIANTS = {"fast": dict(warm_path=False, greedy=False), "default": {}}


def cumulative(stats: pstats.Stats, file: str, function: str) -> float:
    return sum(row[3] for (path, _, name), row in stats.stats.items() if path.endswith(file) and name == function)


def profile_fit(est, X, y) -> tuple[float, dict[str, float]]:
    profiler = cProfile.Profile()
    t = time.perf_counter()
    profiler.enable()
    est.fit(X, y)
    profiler.disable()
    wall = time.perf_counter() - t
    stats = pstats.Stats(profiler)
    return wall, {col: cumulative(stats, *where) for col, where in PARTS.items()}


def run_setup(args) -> pd.DataFrame:
    rows = []
    for loss, (m, n) in (("ls", args.large_ls), ("logistic", args.large_logistic)):
        if not m:
            continue
        X, y, truth = planted(m, n, loss, args.seed)
        cls = SparseLinearRegression if loss == "ls" else SparseLogisticRegression
        for variant, options in VARIANTS.items():
            for lipschitz in ("paper", "backtrack"):
                est = cls(s=10, fit_intercept=False, lipschitz=lipschitz, tol=args.tol, max_iter=args.max_iter,
                          **options)
                wall, parts = profile_fit(est, X, y)
                row = {"problem": f"{loss} {m}×{n}", "fit": variant, "L": lipschitz, "whole fit [s]": round(wall, 3)}
                row.update({k: round(v, 3) for k, v in parts.items()})
                row["fit / iterations"] = round(wall / max(parts["iterations [s]"], 1e-12), 2)
                row["objective"] = f"{est.objective_:.6g}"
                row["support recovered"] = bool(np.array_equal(est.support_, truth))
                rows.append(row)
                print(f"  {row['problem']} {variant} L={lipschitz}: {wall:.2f} s, "
                      f"iterations {parts['iterations [s]']:.2f} s", flush=True)
    return pd.DataFrame(rows)


def add_arguments(p) -> None:
    p.add_argument("--large-ls", dest="large_ls", nargs=2, type=int, default=[2000, 20000], metavar=("M", "N"))
    p.add_argument("--large-logistic", dest="large_logistic", nargs=2, type=int, default=[2000, 10000],
                   metavar=("M", "N"))

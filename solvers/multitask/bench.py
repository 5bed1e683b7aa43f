"""rASO (seed 000): time to a 1e-6 relative gap for APG/PG/BCD vs cvxpy, M-step cost, School RMSE vs single-task ridge.

    python -m solvers.bench multitask                       # all three tables, default sizes
    python -m solvers.bench multitask --only speed --sizes 20x10,50x20 --cvxpy-max 1000
    python -m solvers.bench multitask --only school --splits 3

Ratios are measured side by side in one run. The seed (the paper's appendices) holds no timing or
accuracy table, so the "paper" column shows the lab's target (APG or BCD ≥ 100× faster than the SDP
solver at d = 50, m = 20) and the paper's qualitative claim (the SDP does not scale; rASO beats
single-task learning).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ..bench.records import publish
from ..core import InputError
from ..datasets import REAL, generate, load
from . import metrics
from .cvxpy_reference import solve_cvxpy
from .data import split_rows
from .eq14 import solve_eq14
from .methods import solve
from .problem import make_problem
from .subspace import m_step

GAP = 1e-6


def parse_sizes(text: str) -> list[tuple[int, int]]:
    try:
        sizes = [tuple(int(v) for v in part.lower().split("x")) for part in text.split(",") if part]
    except ValueError:
        raise InputError(f"--sizes wants d×m pairs like 20x10,50x20; got {text!r}") from None
    if not sizes or any(len(s) != 2 or min(s) < 1 for s in sizes):
        raise InputError(f"--sizes wants d×m pairs like 20x10,50x20; got {text!r}")
    return sizes


def time_to_gap(problem, method: str, f_star: float, time_limit: float, **params) -> tuple[float, int, str]:
    """Solver seconds until F − F* ≤ GAP·|F*| (the callback stops the run there)."""
    target = f_star + GAP * abs(f_star)
    res = solve(problem, method, tol=1e-15, max_iter=10**6, time_limit=time_limit,
                callback=lambda row: row["objective"] > target, **params)
    row = res.history.iloc[-1]
    reached = row["objective"] <= target
    return (float(row["time"]) if reached else np.inf), int(row["iter"]), res.status


def speed_table(sizes, n_per_task: int, alpha: float, beta: float, h: int, cvxpy_max: int, time_limit: float,
                seed: int, school: bool = True) -> None:
    title = (f"Time to relative gap {GAP:g} (least squares, n_ℓ = {n_per_task}, α = {alpha}, β = {beta}, "
             f"η = {beta / alpha:g}, h = {h})")
    columns = ["d", "m", "F*", "APG [s] (iters)", "APG + restart [s] (iters)", "PG [s] (iters)", "BCD [s] (iters)",
               "cvxpy/CLARABEL solver [s] (wall)", "cvxpy gap", "cvxpy ÷ fastest of APG/BCD", "paper / target"]
    print(f"\n## {title}\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    rows = []
    cases = [(f"{d}", f"{m}", generate("multitask-subspace", d=d, m=m, n_per_task=n_per_task, n_test=0,
                                       h_true=min(3, d), seed=seed)) for d, m in sizes]
    if school and REAL["school"].available():
        cases.append(("School 27", "139", school_standardized(None)))
    for d_text, m_text, ds in cases:
        problem = make_problem(ds, alpha=alpha, beta=beta, h=min(h, ds.n_features))
        d, m = problem.d, problem.m
        star = solve(problem, "bcd", tol=1e-11, max_iter=50_000, time_limit=10 * time_limit)
        f_star = float(star.history["objective"].min())
        cv_text, gap_text, ratio_text = "skipped (d·m > --cvxpy-max)", "", ""
        cv_time = None
        if d * m <= cvxpy_max:
            Z, _, timings = solve_cvxpy(problem)
            f_cv = problem.objective(Z)
            f_star = min(f_star, f_cv)
            cv_time = timings["solver_time"]
            cv_text = f"{cv_time:.3g} ({timings['wall_time']:.3g})"
        runs = {"apg": time_to_gap(problem, "apg", f_star, time_limit),
                "apg+restart": time_to_gap(problem, "apg", f_star, time_limit, restart=True),
                "pg": time_to_gap(problem, "pg", f_star, time_limit),
                "bcd": time_to_gap(problem, "bcd", f_star, time_limit)}
        if cv_time is not None:
            gap_text = f"{(f_cv - f_star) / abs(f_star):.1e}"
            fastest = min(runs["apg"][0], runs["apg+restart"][0], runs["bcd"][0])
            ratio_text = f"{cv_time / fastest:.0f}×"
        cells = [f"{t:.3g} ({k})" if np.isfinite(t) else f"> {time_limit:g} ({k})" for t, k, _ in runs.values()]
        target = "≥ 100×" if (d, m) == (50, 20) else "SDP does not scale"
        rows.append([d_text, m_text, f"{f_star:.10g}", *cells, cv_text, gap_text, ratio_text, target])
        print("| " + " | ".join(rows[-1]) + " |", flush=True)
    publish("multitask", "speed", title, pd.DataFrame(rows, columns=columns))


def best_ms(fn, reps: int = 5) -> float:
    """Milliseconds per call: the best of ``reps`` timed calls after one warm-up call."""
    fn()
    best = np.inf
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return 1e3 * best


def mstep_table(seed: int) -> None:
    rng = np.random.default_rng(seed)
    title = "Eq. (14) solvers: corrected Algorithm 3 (linear) vs sort reference vs bisection (η = 0.1, h = q/4; best of 5)"
    columns = ["q", "linear [ms]", "sort [ms]", "bisect [ms]", "max difference linear vs sort"]
    print(f"\n## {title}\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    rows = []
    for q in (100, 1_000, 10_000, 100_000):
        sigma = rng.lognormal(0.0, 1.0, q)
        times = {method: best_ms(lambda method=method: solve_eq14(sigma, 0.1, q // 4, method))
                 for method in ("linear", "sort", "bisect")}
        out = {method: solve_eq14(sigma, 0.1, q // 4, method) for method in ("linear", "sort")}
        diff = np.abs(out["linear"] - out["sort"]).max()
        rows.append([q, float(f"{times['linear']:.3g}"), float(f"{times['sort']:.3g}"), float(f"{times['bisect']:.3g}"),
                     f"{diff:.1e}"])
        print("| " + " | ".join(map(str, rows[-1])) + " |", flush=True)
    publish("multitask", "mstep-eq14", title, pd.DataFrame(rows, columns=columns))
    title = "M-step (thin SVD of U + Eq. (71)) vs one full eigendecomposition of a d × d matrix"
    columns = ["d", "m", "M-step (sort) [ms]", "Eq. (71) alone by Algorithm 3 [ms]", "eigh(d×d) [ms]",
               "ratio eigh ÷ M-step"]
    print(f"\n## {title}\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    rows = []
    for d, m in ((50, 20), (200, 50), (500, 100), (1000, 100)):
        U = rng.standard_normal((d, m))
        A = rng.standard_normal((d, d))
        A = A + A.T
        sigma = np.linalg.svd(U, compute_uv=False)
        t_step = best_ms(lambda: m_step(U, 0.1, 3))
        t_eq = best_ms(lambda: solve_eq14(sigma, 0.1, 3))
        t_eig = best_ms(lambda: np.linalg.eigh(A))
        rows.append([d, m, float(f"{t_step:.3g}"), float(f"{t_eq:.3g}"), float(f"{t_eig:.3g}"), f"{t_eig / t_step:.2g}×"])
        print("| " + " | ".join(map(str, rows[-1])) + " |", flush=True)
    publish("multitask", "mstep", title, pd.DataFrame(rows, columns=columns))


def school_standardized(train: np.ndarray | None):
    """School without its constant last column (MALSAR's bias; we fit intercepts), features standardised
    with the statistics of the ``train`` rows (all rows when None)."""
    ds = load("school")
    X = ds.X[:, :-1]
    train = np.arange(ds.n_samples) if train is None else train
    mean, std = X[train].mean(0), X[train].std(0)
    std[std == 0] = 1.0
    scaled = ds.subset(np.arange(ds.n_samples))
    scaled.X = (X - mean) / std
    return scaled


def school_table(splits: int, seed: int) -> None:
    if not REAL["school"].available():
        print("\n## School: skipped (school/school.mat is not in the data directory)")
        return
    ds = load("school")
    print(f"\n## School (139 tasks, 15362 students): test RMSE, {splits} random 70/30 splits within each task, "
          "hyper-parameters chosen on a 25% validation part of the training rows; least squares with intercepts")
    print("| split | single-task ridge RMSE (λ) | rASO RMSE (α, β, h) | pooled ridge RMSE (λ) | rASO better by |")
    print("|---|---|---|---|---|")
    ridge_grid = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
    raso_grid = [(a, b, h) for a in (0.1, 1.0, 10.0, 100.0) for b in (1e-3, 1e-2) for h in (1, 2, 3, 5)]
    scores = []
    for split in range(splits):
        train, test = split_rows(ds, 0.3, seed=seed + split)
        scaled = school_standardized(train)
        inner_fit, inner_val = split_rows(scaled.subset(train), 0.25, seed=seed + 100 + split)
        fit, val = train[inner_fit], train[inner_val]

        def rmse(params, rows_fit, rows_eval, pool=False):
            a, b, h = params
            problem = make_problem(scaled, rows=rows_fit, alpha=a, beta=b, h=h)
            sol = metrics.pooled(problem) if pool else solve(problem, "bcd", tol=1e-6, max_iter=300).solution
            err = metrics.per_task_error(sol, scaled, problem.data, rows_eval, "least_squares")
            counts = np.bincount(scaled.groups[rows_eval], minlength=problem.m)
            return float(np.sqrt(np.nansum(err**2 * counts) / counts.sum()))

        # h = 0 is single-task ridge with weight α + β (digest §1.4): α = β = λ/2; pooled gets its own λ
        best_ridge = min(ridge_grid, key=lambda lam: rmse((lam / 2, lam / 2, 0), fit, val))
        best_pool = min(ridge_grid, key=lambda lam: rmse((lam / 2, lam / 2, 0), fit, val, pool=True))
        best_raso = min(raso_grid, key=lambda p: rmse(p, fit, val))
        stl = rmse((best_ridge / 2, best_ridge / 2, 0), train, test)
        raso = rmse(best_raso, train, test)
        pool = rmse((best_pool / 2, best_pool / 2, 0), train, test, pool=True)
        scores.append((stl, raso, pool))
        print(f"| {split} | {stl:.4f} ({best_ridge:g}) | {raso:.4f} {best_raso} | {pool:.4f} ({best_pool:g}) | "
              f"{100 * (stl - raso) / stl:.1f}% |")
    stl, raso, pool = np.mean(scores, axis=0)
    print(f"| mean | {stl:.4f} | {raso:.4f} | {pool:.4f} | {100 * (stl - raso) / stl:.1f}% |")
    print("Paper's claim (qualitative; the seed has no School table): sharing a subspace beats single-task learning.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solvers.bench multitask", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("speed", "mstep", "school"), action="append",
                        help="run only these tables (repeatable); default: all")
    parser.add_argument("--sizes", default="20x10,50x20,100x50,200x100", help="d×m pairs for the speed table")
    parser.add_argument("--n-per-task", type=int, default=20, help="training rows per synthetic task")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--beta", type=float, default=0.01)
    parser.add_argument("--h", type=int, default=3)
    parser.add_argument("--cvxpy-max", type=int, default=1000, help="run cvxpy only when d·m is at most this")
    parser.add_argument("--time-limit", type=float, default=60.0, help="solver seconds per run")
    parser.add_argument("--no-school-row", dest="school_row", action="store_false",
                        help="leave School out of the speed table (its APG and PG runs take 3 × --time-limit)")
    parser.add_argument("--splits", type=int, default=3, help="random splits for School")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.alpha <= 0 or args.beta <= 0 or args.n_per_task < 2 or args.splits < 1:
        raise InputError("alpha and beta must be > 0, --n-per-task ≥ 2 and --splits ≥ 1")
    tables = args.only or ["speed", "mstep", "school"]
    if "speed" in tables:
        speed_table(parse_sizes(args.sizes), args.n_per_task, args.alpha, args.beta, args.h, args.cvxpy_max,
                    args.time_limit, args.seed, args.school_row)
    if "mstep" in tables:
        mstep_table(args.seed)
    if "school" in tables:
        school_table(args.splits, args.seed)
    return 0

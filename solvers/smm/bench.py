"""SMM (seed 002): Table 4 (ALM-SNCG vs isPADMM vs F-ADMM) and Table 6 (AS+ALM vs Warm+ALM) on the synthetic recipe.

    python -m solvers.bench smm table4 --n 10000 --p 100 --q 100 --eps 1e-4 1e-6
    python -m solvers.bench smm table6 --n 10000 --p 100 --q 100 --points 50
    python -m solvers.bench smm gpu --n 1000000 --p 50 --q 100 --path --device cuda --out smm-gpu.json

Table 4 protocol (Sec. 6.1): obj_opt from ALM-SNCG at η_kkt ≤ 1e-8, then every method stops at
Relobj (47) ≤ ε (or the time limit); ALM-SNCG starts from --warm-start isPADMM steps (paper: up to 4),
or with --warm-start 0 from its own solution on --start-rows random samples (ours); either start's time is
part of its own. Table 6: both path methods stop every solve at η_kkt ≤ ε; the
average time per grid point is over points 2..N. Ratios are means of per-row time ratios measured
side by side in this run, printed next to the paper's. Peak memory is the process's max RSS.
--clock cpu (the default) makes every solver time and time limit this process's CPU seconds
(`solvers.core.use_clock`): with OMP_NUM_THREADS=1 that is the work done, which a loaded machine
does not inflate; --clock wall gives the seconds a user waits.
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
import pandas as pd

from ..bench.records import publish
from ..core import now, use_clock
from . import METHODS, bench_gpu, build_problem, solve, solve_path, train_test
from .synthetic import make_smm_synthetic

#: Table 4 of the paper, (n, p, q) = (1e4, 100, 100): (ε, τ, C) → seconds of F-ADMM, isPADMM, ALM-SNCG
PAPER_TABLE4 = {
    (1e-4, 10, 0.1): (11.2, 18.2, 1.6), (1e-4, 10, 1): (13.5, 13.5, 1.7), (1e-4, 10, 10): (26.0, 20.6, 1.6),
    (1e-4, 10, 100): (28.1, 21.7, 7.9), (1e-4, 100, 0.1): (14.8, 10.4, 2.2), (1e-4, 100, 1): (10.5, 17.1, 2.3),
    (1e-4, 100, 10): (26.3, 69.1, 1.7), (1e-4, 100, 100): (1526.2, 37.5, 2.0),
    (1e-6, 10, 0.1): (21.7, 29.4, 2.4), (1e-6, 10, 1): (21.2, 27.1, 5.5), (1e-6, 10, 10): (33.1, 37.0, 4.3),
    (1e-6, 10, 100): (7200.6, 42.4, 14.0), (1e-6, 100, 0.1): (29.5, 18.9, 4.9), (1e-6, 100, 1): (15.4, 25.6, 5.3),
    (1e-6, 100, 10): (38.7, 46.4, 6.0), (1e-6, 100, 100): (7200.0, 116.7, 6.4),
}
#: the paper's mean per-row ratios (digest §6.6, re-computed from its tables)
PAPER_RATIOS = {"isP/A": {1e-4: 8.76, 1e-6: 13.02}, "F/A (1e4,100,100)": {1e-4: 103.1, 1e-6: 209.4},
                "Warm/AS": {1e-4: 2.69, 1e-6: 3.07}}
#: Table 6, (1e4, 100, 100): (ε, τ) → average seconds per grid point (Warm, AS)
PAPER_TABLE6 = {(1e-4, 10): (1.50, 0.49), (1e-4, 100): (1.50, 0.65), (1e-6, 10): (3.93, 1.20),
                (1e-6, 100): (3.80, 1.55)}


# per-row seconds, ours beside the paper's (the columns of `table4`)
FIGURES = {"table4": {"kind": "bar", "x": ["tau", "C", "eps"], "y": ["ALM-SNCG_s", "paper_A_s", "isPADMM_s", "paper_isP_s"],
                      "log_y": True, "y_title": "seconds (ours: one core; the paper: eight)"}}


def peak_memory_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def load_synthetic(args):
    ds = make_smm_synthetic(n_train=args.n, p=args.p, q=args.q, seed=args.seed, float32=args.float32)
    X, y, X_test, y_test = train_test(ds)
    return X, y, X_test, y_test


def accuracy(W, b, X_test, y_test) -> float:
    f = np.einsum("ipq,pq->i", X_test, W.astype(X_test.dtype), optimize=True) + b
    return float(np.mean(np.where(f >= 0, 1.0, -1.0) == y_test))


def table4(args) -> pd.DataFrame:
    X, y, X_test, y_test = load_synthetic(args)
    dtype = np.float32 if args.float32 else np.float64
    rows = []
    for tau in args.tau:
        for C in args.C:
            problem = build_problem(X, y, C=C, tau=tau, dtype=dtype)
            t0 = now()
            ref = solve(problem, "alm-sncg", tol=1e-8, max_iter=500, time_limit=args.time_limit,
                        warm_start=args.warm_start, start_rows=args.start_rows)
            obj_opt = float(ref.history["objective"].iloc[-1])
            ref_time = now() - t0
            for eps in args.eps:
                row = {"eps": eps, "tau": tau, "C": C, "obj_opt": obj_opt, "ref_s": ref_time,
                       "ref_kkt": float(ref.history["kkt"].iloc[-1])}
                for method in args.methods:
                    if method == "fadmm" and problem.n > args.fadmm_max_n:
                        row["F-ADMM_s"] = np.nan
                        continue
                    label = METHODS[method].label
                    extra = ({"warm_start": args.warm_start, "start_rows": args.start_rows} if method == "alm-sncg"
                             else {})
                    cpu0 = time.process_time()
                    res = solve(problem, method, tol=eps, max_iter=30_000, time_limit=args.time_limit,
                                obj_opt=obj_opt, **extra)
                    row[f"{label}_s"] = res.info["time"]
                    # CPU seconds of the whole call (one thread): robust to a loaded machine, but they include
                    # the monitoring (objective, η_kkt per row) that the solver time excludes
                    row[f"{label}_cpu_s"] = time.process_time() - cpu0
                    row[f"{label}_it"] = res.info["n_iter"]
                    # Newton steps (inner ones for isPADMM and F-ADMM): each costs one pass over X (X·d_W)
                    row[f"{label}_newton"] = res.info.get("newton", np.nan)
                    row[f"{label}_relobj"] = float(res.history["relobj"].iloc[-1])
                    row[f"{label}_status"] = res.status
                    if method == "alm-sncg":
                        row["J1"] = int(res.history["j1"].iloc[-1])
                        row["alpha"] = int(res.history["alpha"].iloc[-1])
                        row["test_acc"] = accuracy(res.solution["W"], res.solution["b"], X_test, y_test)
                paper = PAPER_TABLE4.get((eps, tau, C)) if (args.n, args.p, args.q) == (10_000, 100, 100) else None
                row["paper_F_s"], row["paper_isP_s"], row["paper_A_s"] = paper or (np.nan,) * 3
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows)


def table4_ratios(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for eps, part in df.groupby("eps"):
        line = {"eps": eps}
        if "isPADMM_s" in part:  # a run without isPADMM (e.g. --methods alm-sncg fadmm) has no isP/A
            line["isP/A ours"] = float((part["isPADMM_s"] / part["ALM-SNCG_s"]).mean())
            line["isP/A ours (CPU s)"] = float((part["isPADMM_cpu_s"] / part["ALM-SNCG_cpu_s"]).mean())
            line["isP/A paper"] = PAPER_RATIOS["isP/A"].get(eps, np.nan)
        if "F-ADMM_s" in part and part["F-ADMM_s"].notna().any():
            line["F/A ours"] = float((part["F-ADMM_s"] / part["ALM-SNCG_s"]).mean())
            line["F/A ours (CPU s)"] = float((part["F-ADMM_cpu_s"] / part["ALM-SNCG_cpu_s"]).mean())
            line["F/A paper"] = PAPER_RATIOS["F/A (1e4,100,100)"].get(eps, np.nan)
        out.append(line)
    return pd.DataFrame(out)


def table6(args) -> pd.DataFrame:
    X, y, X_test, y_test = load_synthetic(args)
    dtype = np.float32 if args.float32 else np.float64
    Cs = np.logspace(np.log10(args.C_range[0]), np.log10(args.C_range[1]), args.points)
    rows = []
    for tau in args.tau:
        problem = build_problem(X, y, C=Cs[0], tau=tau, dtype=dtype)
        for eps in args.eps:
            paths = {m: solve_path(problem, Cs, method=m, tol=eps, eps_hat=args.eps_hat, d_max=args.d_max,
                                   X_test=X_test, y_test=y_test) for m in ("warm", "as")}
            w, a = paths["warm"].table.iloc[1:], paths["as"].table.iloc[1:]
            paper = PAPER_TABLE6.get((eps, tau)) if (args.n, args.p, args.q) == (10_000, 100, 100) else None
            row = {"eps": eps, "tau": tau, "Avg_nSM": a["n_sm"].mean(), "Avg_sam": a["n_reduced"].mean(),
                   "Max_sam": a["max_reduced"].max(), "Avg_J1_W": w["j1"].mean(), "Avg_J1_AS": a["j1"].mean(),
                   "worst_kkt_W": paths["warm"].table["kkt_full"].max(),
                   "worst_kkt_AS": paths["as"].table["kkt_full"].max(),
                   "iters_W": f"({w['alm_iters'].mean():.0f},{w['newton_iters'].mean():.0f})",
                   "iters_AS": f"{a['rounds'].mean():.1f}({a['alm_iters'].mean():.0f},{a['newton_iters'].mean():.0f})",
                   "time_W": w["time"].mean(), "time_AS": a["time"].mean(),
                   "ratio": w["time"].mean() / a["time"].mean(),
                   "max_rel_obj_diff": float((np.abs(w["objective"] - a["objective"]) / (1 + w["objective"])).max()),
                   "paper_time_W": paper[0] if paper else np.nan, "paper_time_AS": paper[1] if paper else np.nan}
            rows.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m solvers.bench smm", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="table", required=True)
    for name in ("table4", "table6"):
        p = sub.add_parser(name, help=f"the paper's {name.replace('table', 'Table ')} protocol")
        p.add_argument("--n", type=int, default=2000, help="training samples (the generator adds 25%% test)")
        p.add_argument("--p", type=int, default=20)
        p.add_argument("--q", type=int, default=20)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--float32", action="store_true", help="store the samples in float32")
        p.add_argument("--tau", type=float, nargs="+", default=[10.0, 100.0])
        p.add_argument("--eps", type=float, nargs="+", default=[1e-4, 1e-6])
        p.add_argument("--csv", help="also write the rows to this CSV file")
        p.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                       help="solver times and time limits in this process's CPU seconds (default) or wall seconds")
    t4 = sub.choices["table4"]
    t4.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0, 10.0, 100.0])
    t4.add_argument("--methods", nargs="+", default=["alm-sncg", "ispadmm", "fadmm"], choices=list(METHODS))
    t4.add_argument("--time-limit", type=float, default=600.0,
                    help="seconds per run on --clock (the paper: 7200 wall seconds)")
    t4.add_argument("--warm-start", type=int, default=4,
                    help="isPADMM iterations that start ALM-SNCG, counted in its time (paper Sec. 6.1: 4 on synthetic data)")
    t4.add_argument("--start-rows", type=int, default=1000,
                    help="with --warm-start 0: start ALM-SNCG from its solution on this many random samples (our start, "
                         "not the paper's; counted in its time); 0 = the origin")
    t4.add_argument("--fadmm-max-n", type=int, default=5000, help="skip F-ADMM above this many samples")
    t6 = sub.choices["table6"]
    t6.add_argument("--points", type=int, default=50)
    t6.add_argument("--C-range", type=float, nargs=2, default=[0.1, 100.0])
    t6.add_argument("--eps-hat", type=float, default=0.05, help="ε̂ of Algorithm 3 (paper: 0.05 on random data)")
    t6.add_argument("--d-max", type=int, default=500)
    bench_gpu.add_parser(sub)
    return ap


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.table == "gpu":  # wall seconds on a torch device, its own table and JSON (bench_gpu.py)
        return bench_gpu.main(args)
    start = time.perf_counter()
    print(f"# smm {args.table}: n={args.n} p={args.p} q={args.q} {'float32' if args.float32 else 'float64'} "
          f"seed={args.seed}; clock {args.clock}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with use_clock(args.clock):
        df = table4(args) if args.table == "table4" else table6(args)
        publish("smm", args.table, f"{args.table.replace('table', 'Table ')} protocol at (n, p, q) = "
                f"({args.n}, {args.p}, {args.q})", df, figure=FIGURES.get(args.table))
        if args.table == "table4":
            publish("smm", "table4-ratios", "Table 4: mean time ratios against ALM-SNCG", table4_ratios(df))
    print()
    if args.table == "table4":
        print(table4_ratios(df).to_string(index=False))
    else:
        print(f"mean Warm/AS ratio: ours {df['ratio'].mean():.2f} per ε: "
              + ", ".join(f"{e:g}: {g['ratio'].mean():.2f}" for e, g in df.groupby("eps"))
              + f" | paper {PAPER_RATIOS['Warm/AS']}")
    print(f"peak memory (max RSS): {peak_memory_mib():.0f} MiB; wall time {time.perf_counter() - start:.0f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.csv:
        df.to_csv(args.csv, index=False)
    return 0

"""SMM at the paper's largest synthetic size on a torch device: Table 4's (1e6, 50, 100) rows and Table 6's AS path.

    python -m solvers.bench smm gpu --n 1000000 --p 50 --q 100 --tau 10 --C 0.1 1 10 100 --tol 1e-4 1e-6 \\
        --path --device cuda --time-limit 170 --out smm-gpu.json

The data are the Sec. 6.1 recipe generated on the device in float32 (`torch_synthetic`, 25 GB at n = 1e6, no
host copy). For every (τ, C, tol) ALM-SNCG (`torch_alm`, CG-only Newton systems) runs from our subsample start
(--start-rows) to η_kkt ≤ tol; each row records wall seconds with the device synchronised (wall_s: the whole call,
the start and the history's measures included; solver_s: without the measures),
ALM iterations, Newton and CG steps, the final |J1| and |α|, the η_kkt reached and the test accuracy on the
device-generated test part, beside the paper's row (labelled paper_*: 8-core CPU, MATLAB, stopped at Relobj ≤ ε
(47) rather than η_kkt ≤ ε, from 4 isPADMM steps). --path then runs AS+ALM (Algorithm 3) over --points C values
in [--C-range] at --path-tol, beside the paper's Table 6 averages (50 points). --time-limit is a hard cap on the
whole command's wall seconds: each solve gets what is left, and what does not fit is reported as skipped.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd

from ..bench.limits import hard_cap

#: Table 4 of the paper at (n, p, q) = (1e6, 50, 100): (ε, τ, C) → (|J1|, |α|, isPADMM s, ALM-SNCG s)
PAPER_TABLE4_1E6 = {
    (1e-4, 10, 0.1): (1935, 1, 194.2, 29.0), (1e-4, 10, 1): (11357, 1, 167.5, 60.0),
    (1e-4, 10, 10): (9267, 30, 694.4, 271.5), (1e-4, 10, 100): (13027, 50, 2346.5, 67.0),
    (1e-4, 100, 0.1): (1348, 1, 339.2, 34.7), (1e-4, 100, 1): (7545, 1, 370.5, 49.4),
    (1e-4, 100, 10): (8750, 1, 327.2, 154.8), (1e-4, 100, 100): (12252, 29, 1702.6, 1136.2),
    (1e-6, 10, 0.1): (862, 1, 372.7, 42.7), (1e-6, 10, 1): (3072, 2, 1222.0, 89.9),
    (1e-6, 10, 10): (4294, 30, 2003.1, 290.6), (1e-6, 10, 100): (2409, 50, 5413.7, 224.1),
    (1e-6, 100, 0.1): (312, 1, 1703.4, 72.9), (1e-6, 100, 1): (835, 1, 4299.5, 127.2),
    (1e-6, 100, 10): (2319, 1, 2320.4, 187.4), (1e-6, 100, 100): (1833, 29, 5371.3, 1289.7),
}
PAPER_ACCURACY_1E6 = "0.9017–0.9450"
#: Table 6 at (1e6, 50, 100), 50 points in [0.1, 100]: (ε, τ) → (Avg_sam, Max_sam, Avg|J1| AS, AS rounds,
#: Warm s per point, AS s per point)
PAPER_TABLE6_1E6 = {(1e-4, 10): (303668, 485124, 984, 1, 76.63, 34.20),
                    (1e-4, 100): (321628, 565727, 860, 1, 57.21, 34.15),
                    (1e-6, 10): (303681, 485006, 395, 1, 209.41, 78.54),
                    (1e-6, 100): (321643, 565653, 214, 1, 197.75, 82.87)}
PAPER_SIZE = (1_000_000, 50, 100)
WARMUP_ROWS = 2000  # an untimed solve on this many rows first: CUDA context, cuBLAS and cuSOLVER set-up
MIN_SOLVE_S = 1.0  # a solve is skipped when less than this is left of --time-limit
HARD_GRACE_S = 15.0  # SIGALRM ends the measurements this long after --time-limit


def add_parser(sub) -> None:
    g = sub.add_parser("gpu", help="Table 4 rows and the AS path at (1e6, 50, 100) on a torch device",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("--n", type=int, default=1_000_000, help="training samples (the recipe adds 25%% test)")
    g.add_argument("--p", type=int, default=50)
    g.add_argument("--q", type=int, default=100)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--float64", action="store_true", help="samples in float64 (default float32)")
    g.add_argument("--tau", type=float, nargs="+", default=[10.0])
    g.add_argument("--C", type=float, nargs="+", default=[0.1, 1.0, 10.0, 100.0])
    g.add_argument("--tol", type=float, nargs="+", default=[1e-4, 1e-6], help="η_kkt targets, one solve each")
    g.add_argument("--start-rows", type=int, default=1000, help="subsample start (0: the origin), counted in the time")
    g.add_argument("--path", action="store_true", help="then the AS+ALM path at the first τ")
    g.add_argument("--path-methods", nargs="+", default=["as"], choices=("as", "warm"),
                   help="the path by AS+ALM, warm-started ALM-SNCG, or both (Table 6's Warm / AS ratio)")
    g.add_argument("--points", type=int, default=8, help="grid points of the path (paper: 50)")
    g.add_argument("--C-range", type=float, nargs=2, default=[0.1, 100.0])
    g.add_argument("--path-tol", type=float, default=1e-4)
    g.add_argument("--eps-hat", type=float, default=None, help="ε̂ of Algorithm 3 (default: the paper's 0.1 when "
                                                                 "n ≥ 5e5, else 0.05)")
    g.add_argument("--d-max", type=int, default=500)
    g.add_argument("--device", default="cuda", choices=("cuda", "torch-cpu", "auto"))
    g.add_argument("--time-limit", type=float, default=170.0, help="hard cap on the command's wall seconds")
    g.add_argument("--solve-limit", type=float, default=30.0, help="solver seconds of one Table 4 solve at most")
    g.add_argument("--out", help="write the rows and the set-up as JSON here")


def _paper(n: int, p: int, q: int):
    return (n, p, q) == PAPER_SIZE


def table4_rows(args, data, deadline: float, rows: list) -> None:
    """One ALM-SNCG solve per (τ, C, tol), appended to ``rows`` as it finishes."""
    from ..core.device import synchronize
    from .torch_alm import build_torch_problem, torch_alm_solve
    from .torch_path import accuracy

    dev = data.X_train.device
    for tau in args.tau:
        for C in args.C:
            problem = build_torch_problem(data.X_train, data.y_train, data.shape, C=C, tau=tau,
                                          transposed=data.transposed)
            for tol in args.tol:
                row = {"tau": tau, "C": C, "tol": tol}
                left = deadline - time.perf_counter()
                if left < MIN_SOLVE_S:
                    row["status"] = "skipped (time limit)"
                else:
                    synchronize(dev)
                    t0 = time.perf_counter()
                    res, state = torch_alm_solve(problem, tol=tol, max_iter=500,
                                                 time_limit=min(left, args.solve_limit), start_rows=args.start_rows)
                    synchronize(dev)
                    h = res.history
                    row.update(wall_s=time.perf_counter() - t0, solver_s=res.info["time"], status=res.status,
                               alm_iters=res.info["n_iter"], newton=res.info["newton"], cg=res.info["cg"],
                               J1=int(h["j1"].iloc[-1]), alpha=int(h["alpha"].iloc[-1]),
                               kkt=float(h["kkt"].iloc[-1]), objective=float(h["objective"].iloc[-1]),
                               test_acc=accuracy(state.W, state.b, data.X_test, data.y_test))
                paper = PAPER_TABLE4_1E6.get((tol, tau, C)) if _paper(args.n, args.p, args.q) else None
                row["paper_J1"], row["paper_alpha"], row["paper_isP_s"], row["paper_A_s"] = paper or (np.nan,) * 4
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)


def path_run(args, data, deadline: float, method: str):
    """AS+ALM (``method`` "as") or warm-started ALM-SNCG ("warm") over the C grid at the first τ: (its table or
    None, a summary beside the paper's Table 6 row)."""
    from .torch_alm import build_torch_problem
    from .torch_path import torch_solve_path

    Cs = np.logspace(np.log10(args.C_range[0]), np.log10(args.C_range[1]), args.points)
    eps_hat = args.eps_hat if args.eps_hat is not None else (0.1 if args.n >= 500_000 else 0.05)
    left = deadline - time.perf_counter()
    if left < MIN_SOLVE_S:
        return None, {"status": "skipped (time limit)"}
    problem = build_torch_problem(data.X_train, data.y_train, data.shape, C=Cs[0], tau=args.tau[0],
                                  transposed=data.transposed)
    result = torch_solve_path(problem, Cs, method=method, tol=args.path_tol, eps_hat=eps_hat, d_max=args.d_max,
                              X_test=data.X_test, y_test=data.y_test, time_limit=left)
    table = result.table
    later = table.iloc[1:]
    summary = {"method": method, "status": result.status, "tau": args.tau[0], "tol": args.path_tol, "eps_hat": eps_hat,
               "points": len(table), "avg_s_per_point_2..N": float(later["time"].mean()),
               "total_s": float(table["time"].sum()), "avg_n_reduced": float(later["n_reduced"].mean()),
               "max_n_reduced": int(later["max_reduced"].max()) if len(later) else 0,
               "avg_J1": float(later["j1"].mean()), "avg_rounds": float(later["rounds"].mean()),
               "worst_kkt_full": float(table["kkt_full"].max())}
    paper = PAPER_TABLE6_1E6.get((args.path_tol, args.tau[0])) if _paper(args.n, args.p, args.q) else None
    if paper:
        keys = ("paper_avg_sam", "paper_max_sam", "paper_avg_J1_AS", "paper_rounds", "paper_warm_s_per_point",
                "paper_AS_s_per_point")
        summary.update(dict(zip(keys, paper)), paper_points=50)
    print("\nAS+ALM path (Algorithm 3):" if method == "as" else "\nwarm-started ALM-SNCG path:")
    print(table[["C", "time", "rounds", "alm_iters", "newton_iters", "n_reduced", "j1", "rank", "n_sm", "kkt_full",
                 "test_acc"]].to_string(index=False), flush=True)
    return table, summary


def main(args) -> int:
    import torch

    from ..core.device import synchronize
    from .torch_alm import build_torch_problem, torch_alm_solve, torch_device
    from .torch_synthetic import make_smm_synthetic_torch

    t_start = time.perf_counter()
    deadline = t_start + args.time_limit
    dev = torch_device(args.device)
    dtype = torch.float64 if args.float64 else torch.float32
    setup = {"device": str(dev), "torch": torch.__version__, "n": args.n, "p": args.p, "q": args.q,
             "dtype": str(dtype), "seed": args.seed, "time_limit": args.time_limit}
    if dev.type == "cuda":
        setup["gpu"] = torch.cuda.get_device_name(dev)
        setup["float32_matmul_precision"] = torch.get_float32_matmul_precision()  # "highest": no TF32
        torch.cuda.reset_peak_memory_stats(dev)
    print("# smm gpu: " + ", ".join(f"{k}={v}" for k, v in setup.items()), flush=True)

    rows, path_tables, path_summaries = [], {}, {}
    try:
        with hard_cap(deadline + HARD_GRACE_S - time.perf_counter()):
            t0 = time.perf_counter()
            data = make_smm_synthetic_torch(args.n, args.p, args.q, seed=args.seed, device=dev, dtype=dtype)
            synchronize(dev)
            setup["generate_s"] = time.perf_counter() - t0
            print(f"generated {data.X_train.shape[0]} + {data.X_test.shape[0]} samples of {args.p}×{args.q} on "
                  f"{dev} in {setup['generate_s']:.2f} s", flush=True)
            warm = build_torch_problem(data.X_train[:WARMUP_ROWS], data.y_train[:WARMUP_ROWS], data.shape, C=1.0,
                                       tau=args.tau[0])
            torch_alm_solve(warm, tol=1e-4, max_iter=50, start_rows=0)
            table4_rows(args, data, deadline, rows)
            for method in args.path_methods if args.path else ():
                path_tables[method], path_summaries[method] = path_run(args, data, deadline, method)
    except TimeoutError:  # hard_cap: a solve outlived --time-limit by HARD_GRACE_S (it checks only between ALM steps)
        setup["stopped"] = f"hard time limit ({args.time_limit:g} + {HARD_GRACE_S:g} s) in the middle of a solve"
        print(setup["stopped"], flush=True)
    table = pd.DataFrame(rows)

    setup["wall_s"] = time.perf_counter() - t_start
    if dev.type == "cuda":
        setup["peak_device_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"setup": setup, "table4": table.to_dict(orient="records"),
                       "paths": {m: None if t is None else t.to_dict(orient="records") for m, t in path_tables.items()},
                       "path_summaries": path_summaries, "paper_accuracy_1e6": PAPER_ACCURACY_1E6}, fh, indent=1,
                      default=float)
    print(f"\nALM-SNCG on {dev} to η_kkt ≤ tol, ours beside the paper's (paper: 8-core CPU, Relobj ≤ ε, "
          f"test accuracy {PAPER_ACCURACY_1E6} at 1e6):")
    cols = [c for c in ("tau", "C", "tol", "status", "wall_s", "alm_iters", "newton", "J1", "alpha", "kkt", "test_acc",
                        "paper_J1", "paper_alpha", "paper_A_s", "paper_isP_s") if c in table]
    print(table[cols].to_string(index=False))
    for method, summary in path_summaries.items():
        print(f"{method} path: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                             for k, v in summary.items()))
    if {"as", "warm"} <= set(path_tables) and all(t is not None for t in path_tables.values()):
        shared = min(len(path_tables["as"]), len(path_tables["warm"]))  # the points both finished
        ratio = path_tables["warm"]["time"].iloc[:shared].sum() / path_tables["as"]["time"].iloc[:shared].sum()
        print(f"Warm / AS path time over the {shared} points both finished: {ratio:.2f}")
    extra = f", peak device memory {setup['peak_device_gib']:.1f} GiB" if "peak_device_gib" in setup else ""
    print(f"generate {setup.get('generate_s', float('nan')):.1f} s, whole command {setup['wall_s']:.1f} s{extra}")
    return 0

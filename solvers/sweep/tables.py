"""The papers' tables as sweeps: one independent job per cell, computed and summarised by the family's own
public functions, so a table on a cluster equals the one ``python -m solvers.bench FAMILY`` prints serially.

``python -m solvers.bench npsvc --part accuracy --workers N`` (or ``--scheduler ADDRESS``) lands here.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

import pandas as pd

from ..core import InputError
from .executor import run_sweep, warm_up
from .grid import expand

SVC_LABEL = "SVC"


def npsvc_split_job(config: dict, data=None) -> dict:
    """One cell of NPSVC++ Table 2: a method's test accuracy on one random 60/40 split (seed = split).

    The same calls, in the same order, as ``solvers.npsvc.experiments.accuracy_splits`` makes for the cell.
    """
    from ..datasets import load
    from ..npsvc.bench import KERNEL_METHODS
    from ..npsvc.experiments import fit_svc, run_method
    from ..npsvc.problem import make_problem

    problem = make_problem(load(config["dataset"]), max_train=config["max_train"], seed=config["split"],
                           split="random")
    if config["method"] == SVC_LABEL:
        _, accuracy, seconds = fit_svc(problem, 1.0)
    else:
        method, params = KERNEL_METHODS[config["method"]]
        accuracy, seconds = run_method(problem, method, tol=1e-6, max_iter=config["max_iter"], **params)
    return {"accuracy": accuracy, "train_seconds": seconds}


def npsvc_table2_configs(names: list[str], splits: int, max_train: int, max_iter: int = 200) -> list[dict]:
    from ..npsvc.bench import KERNEL_METHODS

    return expand({"dataset": names, "split": list(range(splits)), "method": [SVC_LABEL, *KERNEL_METHODS]},
                  fixed={"max_train": max_train, "max_iter": max_iter})


def npsvc_table2(argv: list[str], client) -> int:
    """NPSVC++ Table 2 (accuracy part) with every (dataset, split, method) cell a job on ``client``."""
    from ..datasets import BUNDLED, REAL
    from ..npsvc.bench import default_datasets, markdown
    from ..npsvc.experiments import summarize, with_paper

    parser = argparse.ArgumentParser(prog="python -m solvers.bench npsvc --workers N",
                                     description="NPSVC++ Table 2 on the sweep executor (the accuracy part)")
    parser.add_argument("--part", choices=("accuracy",), default="accuracy",
                        help="only the accuracy table is split into jobs (timings are measured serially)")
    parser.add_argument("--datasets", default=",".join(default_datasets()))
    parser.add_argument("--splits", type=int, default=10, help="random 60/40 splits (paper: 10)")
    parser.add_argument("--max-train", dest="max_train", type=int, default=1000)
    parser.add_argument("--csv", help="write the tidy table (one row per cell) here (.parquet for Parquet)")
    args = parser.parse_args(argv)
    names = [n for n in args.datasets.split(",") if n]
    unknown = [n for n in names if n not in BUNDLED and n not in REAL]
    if unknown or not names or args.splits < 2:
        raise InputError(f"name known datasets (unknown: {', '.join(unknown) or 'none'}) and at least 2 splits")
    configs = npsvc_table2_configs(names, args.splits, args.max_train)
    ready = warm_up(client, [__name__, "solvers.npsvc.bench"])  # what npsvc_split_job imports
    print(f"## Table 2 protocol as {len(configs)} jobs on {describe(client)} (imports on the workers: "
          f"{ready:.1f} s)\n", flush=True)
    start = time.perf_counter()
    result = run_sweep(npsvc_split_job, configs, client=client, on_row=print_progress)
    elapsed = time.perf_counter() - start
    table = result.table
    for name in names:
        ok = table[(table["dataset"] == name) & (table["status"] == "ok")]
        if ok.empty:
            print(f"### {name}: no cell finished ({table.loc[table['dataset'] == name, 'error'].iloc[0]})\n")
            continue
        runs = ok[["split", "method", "accuracy", "train_seconds"]].rename(columns={"train_seconds": "seconds"})
        summary = with_paper(summarize(runs), name)
        print(f"### {name}")
        print(markdown(summary[["method", "ours", "paper (Table 2)", "p vs K-NPSVC++", "seconds"]]))
        print()
    print(f"sweep: {len(configs)} jobs, {int((table['status'] == 'ok').sum())} ok, "
          f"{len(result.errors)} errors, {result.cancelled} cancelled, {elapsed:.1f} s wall", flush=True)
    if args.csv:
        result.write(args.csv)
    return 0 if result.errors.empty and result.cancelled == 0 else 1


def describe(client) -> str:
    if client is None:
        return "this process (serial)"
    from .executor import cluster_info

    info = cluster_info(client)
    return f"{info['workers']} worker(s), {info['threads']} thread(s) at {info['address']}"


def print_progress(row: dict, done: int, total: int) -> None:
    detail = row["error"] if row["status"] == "error" else f"accuracy {row.get('accuracy', float('nan')):.4f}"
    print(f"[{done}/{total}] {row['dataset']} split {row['split']} {row['method']}: {row['status']}, "
          f"{row['seconds']:.2f} s, {detail}", file=sys.stderr, flush=True)


TABLES: dict[str, Callable[[list[str], object], int]] = {"npsvc": npsvc_table2}

"""The papers' tables as sweeps: one independent job per cell, computed and summarised by the family's own
public functions, so a table on a cluster equals the one ``python -m solvers.bench FAMILY`` prints serially.

``python -m solvers.bench npsvc --part accuracy --workers N`` (NPSVC++ Table 2) and
``python -m solvers.bench sparse tables --workers N`` (sparse Tables 7–10) and ``python -m solvers.bench metric
--workers N`` (metric Tables 4 and 2), or ``--scheduler ADDRESS``, land here.
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
    from ..npsvc.bench import BUDGETS, KERNEL_METHODS
    from ..npsvc.experiments import fit_svc, run_method
    from ..npsvc.problem import make_problem

    problem = make_problem(load(config["dataset"]), max_train=config["max_train"], seed=config["split"],
                           split="random")
    if config["method"] == SVC_LABEL:
        _, accuracy, seconds = fit_svc(problem, 1.0)
    else:
        method, params = KERNEL_METHODS[config["method"]]
        budget = BUDGETS.get(config["method"], config["max_iter"])  # NPSVM's dual needs its own budget
        accuracy, seconds = run_method(problem, method, tol=1e-6, max_iter=budget, **params)
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


def sparse_table_cell_job(config: dict, data=None) -> dict:
    """One cell of the sparse Tables 7–10: a method at one (dataset, loss, κ) on the seeded split, computed by
    ``solvers.sparse.bench.table_row`` as the serial run does (the configuration's loss and method left out
    of the metrics, which would repeat them)."""
    from ..sparse.bench import split, table_row

    train, test = split(config["dataset"], config["seed"])
    settings = argparse.Namespace(**{k: config[k] for k in ("tol", "max_iter", "alpha_scale")})
    row = table_row(config["dataset"], train, test, config["loss"], config["kappa"], config["method"], settings)
    return {k: v for k, v in row.items() if k not in ("loss", "method")}


def sparse_tables_configs(args: argparse.Namespace) -> list[dict]:
    """The cells in the serial run's order: dataset × loss × κ × method."""
    from ..sparse.bench import METHODS

    return expand({"dataset": list(args.datasets), "loss": list(args.losses), "kappa": list(args.kappas),
                   "method": [m for m in METHODS if m in args.methods]},
                  fixed={"seed": args.seed, "tol": args.tol, "max_iter": args.max_iter, "alpha_scale": args.alpha_scale})


def sparse_serial_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The finished cells as the rows ``python -m solvers.bench sparse tables`` prints, in its order."""
    rows = []
    for cell in table[table["status"] == "ok"].to_dict("records"):
        metric = "PA" if cell["loss"] == "logistic" else "MSE"
        rows.append({"data": cell["data"], "loss": cell["loss"], "s": cell["s"], "method": cell["method"],
                     **{k: cell[k] for k in ("time [s]", "GE", "CG", "paper GE", "GE / paper", "objective")},
                     metric: cell[metric]})
    return pd.DataFrame(rows)


def sparse_tables(argv: list[str], client) -> int:
    """Sparse Tables 7–10 (``python -m solvers.bench sparse tables ...``) with every cell a job on ``client``."""
    from ..sparse.bench import machine, markdown, parse

    args = parse(argv)
    if args.what != "tables":
        raise InputError(f"only `sparse tables` is split into jobs; run `sparse {args.what}` without --workers / "
                         "--scheduler")
    configs = sparse_tables_configs(args)
    ready = warm_up(client, [__name__, "solvers.sparse.bench"])
    print(f"# machine: {machine()}\n## Tables 7–10 as {len(configs)} jobs on {describe(client)} (imports on the "
          f"workers: {ready:.1f} s)\n", flush=True)
    start = time.perf_counter()
    result = run_sweep(sparse_table_cell_job, configs, client=client, on_row=print_progress)
    elapsed = time.perf_counter() - start
    table = sparse_serial_rows(result.table)
    print(markdown(table) if len(table) else "no cell finished")
    for message, cells in result.errors.groupby("error", sort=False)["dataset"]:
        print(f"\n{len(cells)} cell(s) of {', '.join(cells.unique())} failed: {message}")
    print(f"\nsweep: {len(configs)} jobs, {len(table)} ok, {len(result.errors)} errors, {result.cancelled} cancelled, "
          f"{elapsed:.1f} s wall", flush=True)
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0 if result.errors.empty and result.cancelled == 0 else 1


METRIC_CELL = ("dataset", "trial", "method")
SIZE = "size:"  # prefix of the problem sizes in a metric job's results


def metric_method_job(config: dict, data=None) -> dict:
    """One method × trial of the metric Table 4 / Table 2 protocol on one dataset: the trial's subsample
    (seed = seed + trial) and that row's path (naive, active set or a screened configuration), as the serial
    run computes them (``solvers.metric.bench.trial_problem`` and ``run_method``): its time and screening time
    on ``clock``, #λ, the problem's sizes (``size:*``) and the solution at every λ, from which the summary
    computes the speedup and the safety column against the trial's baseline job."""
    from ..core import use_clock
    from ..metric.bench import load_for_bench, run_method, trial_problem

    ds = load_for_bench(config["dataset"])
    if ds is None:
        raise InputError(f"{config['dataset']}: its data file is not in this worker's data directory (SOLVERS_DATA)")
    args = argparse.Namespace(**{k: v for k, v in config.items() if k not in METRIC_CELL})
    with use_clock(args.clock):
        problem, sizes = trial_problem(ds, config["dataset"], config["trial"], args)
        path = run_method(problem, config["method"], args)
    return {**{SIZE + k: v for k, v in sizes.items()}, **path}


def metric_trials(cells: pd.DataFrame, args) -> list[tuple[dict, dict[str, dict]]]:
    """A dataset's trials whose every method finished, as ``run_trial`` returns them (sizes, {label: numbers}),
    in trial order; speedups and ΔM/M against the trial's baseline job (``compare_paths``)."""
    from ..metric.bench import baseline_label, compare_paths, method_labels

    labels = method_labels(args)
    trials = []
    for _, group in cells.sort_values("trial").groupby("trial", sort=True):
        by_method = {cell["method"]: cell for cell in group.to_dict("records")}
        if any(label not in by_method for label in labels):
            continue
        # counts come back as floats when another row of the table lacks them (NaN); they are whole numbers
        sizes = {k[len(SIZE):]: int(v) if isinstance(v, float) and v.is_integer() else v
                 for k, v in by_method[labels[0]].items() if k.startswith(SIZE)}
        paths = {label: {key: by_method[label][key] for key in ("time", "screen", "lambdas", "solutions")}
                 for label in labels}
        trials.append((sizes, compare_paths(paths, baseline_label(args))))
    return trials


def metric_table(argv: list[str], client) -> int:
    """Metric Table 4 / Table 2 (``python -m solvers.bench metric ...``) with every (dataset, trial, method) a job.

    A speedup divides the trial's baseline job time by the method job's: the same process with ``--workers 0``,
    two single-threaded worker processes otherwise (so time them with ``--clock cpu``)."""
    from ..metric.bench import dataset_names, format_table, method_labels, parse, protocol, summarize_trials

    args = parse(argv)
    if args.repeats > 1:
        raise InputError("--repeats has the rows take turns in one process; with --workers each row is a job of "
                         "its own: use --trials for more samples")
    names = dataset_names(args)
    configs = expand({"dataset": names, "trial": list(range(args.trials)), "method": method_labels(args)},
                     fixed=vars(args))
    ready = warm_up(client, [__name__, "solvers.metric.bench"])
    print(f"## metric Table {args.table} as {len(configs)} jobs on {describe(client)} (imports on the workers: "
          f"{ready:.1f} s)\n", flush=True)
    start = time.perf_counter()
    result = run_sweep(metric_method_job, configs, client=client, on_row=print_progress)
    elapsed = time.perf_counter() - start
    table = result.table
    rows = []
    for name in names:
        ok = table[(table["dataset"] == name) & (table["status"] == "ok")]
        trials = metric_trials(ok, args) if len(ok) else []
        if not trials:
            errors = table.loc[(table["dataset"] == name) & (table["status"] != "ok"), "error"]
            rows.append({"dataset": name, "method": f"(no trial finished: {errors.iloc[0] if len(errors) else '?'})"})
            continue
        rows.extend(summarize_trials(name, trials, args))
    print(protocol(args))
    print(format_table(rows))
    print(f"\nsweep: {len(configs)} jobs, {int((table['status'] == 'ok').sum())} ok, {len(result.errors)} errors, "
          f"{result.cancelled} cancelled, {elapsed:.1f} s wall", flush=True)
    return 0 if result.errors.empty and result.cancelled == 0 else 1


def describe(client) -> str:
    if client is None:
        return "this process (serial)"
    from .executor import cluster_info

    info = cluster_info(client)
    return f"{info['workers']} worker(s), {info['threads']} thread(s) at {info['address']}"


def print_progress(row: dict, done: int, total: int) -> None:
    """One line on stderr per finished cell: its configuration, status and seconds (or its error)."""
    cell = " ".join(f"{k} {row[k]}" for k in row if k not in ("job", "status", "seconds", "error")
                    and k in CELL_KEYS)
    detail = f", {row['error']}" if row["status"] == "error" else ""
    print(f"[{done}/{total}] {cell}: {row['status']}, {row['seconds']:.2f} s{detail}", file=sys.stderr, flush=True)


CELL_KEYS = ("dataset", "split", "trial", "loss", "kappa", "method")
TABLES: dict[str, Callable[[list[str], object], int]] = {"npsvc": npsvc_table2, "sparse": sparse_tables,
                                                         "metric": metric_table}

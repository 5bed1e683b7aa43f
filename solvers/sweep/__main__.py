"""python -m solvers.sweep FAMILY ...: run a grid of solves (datasets × methods × parameters × seeds) on Dask.

    python -m solvers.sweep npsvc --datasets iris wine --methods twsvm knpsvc --seeds 0 1 2 \\
        --param c=0.1,1,10 --set max_iter=200 --workers 2 --out runs.csv --histories runs-history.parquet

Each cell is one job (solvers.sweep.solve_job) on an embedded local cluster (--workers N, default one per
core), on an existing cluster (--scheduler tcp://HOST:PORT or $OPTLAB_SCHEDULER), or serially in this
process (--workers 0). Rows print as jobs finish; Ctrl-C cancels the rest and keeps the finished rows.
Exit status: 0 all jobs ok, 1 some failed or were cancelled, 2 bad input (nothing ran).
"""
from __future__ import annotations

import argparse
import sys

from ..core import InputError
from .executor import SCHEDULER_ENV, cluster_info, executor, run_sweep
from .grid import expand, parse_axis, parse_value
from .jobs import check_solve_configs, solve_job

SHOWN = ("job", "status", "seconds", "solver_status", "n_iter", "objective", "test_acc", "error")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m solvers.sweep", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("family", help="sparse, multitask, smm, metric, npsvc or foundations")
    grid = parser.add_argument_group("grid (every combination is one job)")
    grid.add_argument("--datasets", nargs="+", required=True,
                      help="dataset names, resolved on each worker (bundled, or files in its SOLVERS_DATA)")
    grid.add_argument("--methods", nargs="+", required=True, help="method names of the family")
    grid.add_argument("--seeds", nargs="+", type=int, help="seeds, passed to the parameter named seed")
    grid.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2",
                      help="a parameter axis (problem, method or stopping parameter); repeat for more axes")
    grid.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a fixed parameter")
    run = parser.add_argument_group("where the jobs run")
    run.add_argument("--workers", type=int, help="local cluster of N worker processes (0: serially, here)")
    run.add_argument("--scheduler", help=f"address of a running Dask scheduler (default: ${SCHEDULER_ENV})")
    run.add_argument("--retries", type=int, default=2,
                     help="local cluster: reruns of a job whose worker died (an existing cluster keeps its own)")
    out = parser.add_argument_group("output")
    out.add_argument("--out", help="write the table here: .csv, or .parquet")
    out.add_argument("--histories", help="write every job's full history here (.parquet or .csv)")
    return parser


def configs_from(args: argparse.Namespace) -> list[dict]:
    axes: dict[str, list] = {"dataset": args.datasets, "method": args.methods}
    for text in args.param:
        name, values = parse_axis(text)
        axes[name] = values
    if args.seeds:
        axes["seed"] = args.seeds
    fixed = {"family": args.family}
    for text in args.set:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise InputError(f"--set {text!r} is not NAME=VALUE")
        fixed[name.strip()] = parse_value(value)
    configs = expand(axes, fixed)
    check_solve_configs(configs)
    return configs


def print_row(row: dict, done: int, total: int) -> None:
    detail = row["error"] or ", ".join(f"{k} {row[k]:.6g}" if isinstance(row[k], float) else f"{k} {row[k]}"
                                       for k in ("solver_status", "objective") if k in row)
    print(f"[{done}/{total}] {row['dataset']} {row['method']} job {row['job']}: {row['status']} "
          f"({row['seconds']:.2f} s) {detail}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        configs = configs_from(args)
        with executor(workers=args.workers, scheduler=args.scheduler, retries=args.retries) as client:
            where = "this process" if client is None else "{workers} worker(s), dashboard {dashboard}".format(
                **cluster_info(client))
            print(f"{len(configs)} jobs on {where}", file=sys.stderr, flush=True)
            result = run_sweep(solve_job, configs, client=client, on_row=print_row,
                               histories=bool(args.histories))
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    table = result.table
    config_cols = [c for c in configs[0] if c != "family"]
    shown = [c for c in ("job", *config_cols, *SHOWN[1:]) if c in table and (c != "error" or table[c].any())]
    print(table[list(dict.fromkeys(shown))].to_string(index=False, formatters={"error": lambda e: e[:80]}))
    if args.out:
        result.write(args.out)
    if args.histories and result.histories is not None:
        result.write_histories(args.histories)
    return 0 if result.errors.empty and result.cancelled == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

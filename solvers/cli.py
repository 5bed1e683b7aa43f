"""The command line: run any method of any family on any dataset, with flags generated from Param specs.

    python -m solvers list                                   # families, methods, datasets available here
    python -m solvers foundations nesterov --problem rosenbrock --max-iter 2000
    python -m solvers sparse apg+ --dataset colon-cancer --s 20 --history apg.csv
    python -m solvers metric ... --generator blobs --gen-n 200 --gen-seed 1
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
from types import ModuleType

from . import FAMILIES, datasets
from .core import STOPPING_PARAMS, InputError, add_cli_flags, params_from_cli

ALL_FAMILIES = ("foundations", *FAMILIES)


def load_family(name: str) -> ModuleType:
    if name not in ALL_FAMILIES:
        raise InputError(f"unknown family {name!r}; choose one of {', '.join(ALL_FAMILIES)}")
    try:
        return importlib.import_module(f"solvers.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"solvers.{name}":
            raise InputError(f"family {name!r} is not installed in this checkout") from None
        raise


def list_everything() -> None:
    for name in ALL_FAMILIES:
        try:
            fam = load_family(name)
        except InputError:
            continue
        print(f"{name}: {getattr(fam, 'TITLE', '')}")
        for m in fam.METHODS.values():
            print(f"    {m.name:<14} {m.label}  {m.summary}")
    print("datasets available here:", ", ".join(f"{n} ({k})" for n, k in datasets.available().items()))
    print("synthetic generators:", ", ".join(sorted(datasets.generators())))


def build_parser(fam: ModuleType, family: str, method: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m solvers {family} {method}",
                                     description=fam.METHODS[method].summary or fam.METHODS[method].label)
    data = parser.add_argument_group("data")
    data.add_argument("--dataset", help="a bundled or real dataset name (see: python -m solvers list)")
    data.add_argument("--generator", help="a synthetic generator of this family; its settings are --gen-NAME flags")
    add_cli_flags(parser.add_argument_group("problem"), fam.PROBLEM_PARAMS)
    # A name both lists declare (npsvc's seed: the split's and the model's) gets one flag that sets both.
    shared = {p.name for p in fam.PROBLEM_PARAMS}
    add_cli_flags(parser.add_argument_group(f"{method} parameters"),
                  [p for p in fam.METHODS[method].params if p.name not in shared])
    add_cli_flags(parser.add_argument_group("stopping"), STOPPING_PARAMS)
    out = parser.add_argument_group("output")
    out.add_argument("--history", help="write the history to this CSV file")
    out.add_argument("--every", type=int, default=0, help="print every N-th history row while running (0: none)")
    return parser


def load_data(args: argparse.Namespace, extra: list[str], family: str):
    if args.generator:
        gens = datasets.generators(family)
        if args.generator not in gens:
            raise InputError(f"unknown generator {args.generator!r} for {family}; choose one of {', '.join(gens)}")
        gen_parser = argparse.ArgumentParser(prog="generator settings")
        add_cli_flags(gen_parser, [dataclasses.replace(p, name=f"gen_{p.name}") for p in gens[args.generator].params])
        gen_args = gen_parser.parse_args(extra)
        values = {k[4:]: v for k, v in vars(gen_args).items() if v is not None}
        return gens[args.generator](**values)
    if extra:
        raise InputError(f"unrecognised arguments: {' '.join(extra)}")
    return datasets.load(args.dataset) if args.dataset else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        if argv[0] == "list":
            list_everything()
            return 0
        family = argv[0]
        fam = load_family(family)
        if len(argv) < 2 or argv[1].startswith("-"):
            raise InputError(f"name a method of {family}: {', '.join(fam.METHODS)}")
        method = argv[1]
        if method not in fam.METHODS:
            raise InputError(f"unknown method {method!r} for {family}; choose one of {', '.join(fam.METHODS)}")
        parser = build_parser(fam, family, method)
        args, extra = parser.parse_known_args(argv[2:])
        ds = load_data(args, extra, family)
        problem = fam.make_problem(ds, **params_from_cli(args, fam.PROBLEM_PARAMS))
        method_params = params_from_cli(args, fam.METHODS[method].params)
        stopping = params_from_cli(args, STOPPING_PARAMS)

        def progress(row: dict) -> None:
            if args.every and row["iter"] % args.every == 0:
                print("  ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
                                if isinstance(v, (int, float))))

        result = fam.solve(problem, method, callback=progress, **stopping, **method_params)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    last = result.history.iloc[-1]
    print(f"{fam.METHODS[method].label}: {result.status} after {result.info['n_iter']} iterations, "
          f"{result.info['time']:.4g} s; objective {last['objective']:.10g}")
    print("counters:", ", ".join(f"{k}={v}" for k, v in result.info.items() if k not in ("n_iter", "time")))
    if args.history:
        result.history.to_csv(args.history, index=False)
        print(f"history written to {args.history}")
    return 0

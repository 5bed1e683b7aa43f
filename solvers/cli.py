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
from pathlib import Path
from types import ModuleType

from . import FAMILIES, datasets
from .core import InputError, add_cli_flags, cli_values, params_from_cli, stopping_params, validate_params

ALL_FAMILIES = ("foundations", *FAMILIES)
DATA_OPTIONAL = {"foundations"}  # its built-in test functions need no data


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


def family_help(fam: ModuleType, family: str) -> str:
    lines = [f"usage: python -m solvers {family} METHOD [options]   (python -m solvers {family} METHOD --help: its options)",
             "", f"{family}: {getattr(fam, 'TITLE', '')}", "methods:"]
    lines += [f"    {m.name:<14} {m.label}  {m.summary}" for m in fam.METHODS.values()]
    return "\n".join(lines)


def shared_names(fam: ModuleType, method: str) -> set[str]:
    """Parameter names that both the problem and the method declare (npsvc: the split seed and the training seed)."""
    return {p.name for p in fam.PROBLEM_PARAMS} & {p.name for p in fam.METHODS[method].params}


def build_parser(fam: ModuleType, family: str, method: str) -> argparse.ArgumentParser:
    """Flags from the Param specs. A name that the problem and the method share gets ``--problem-NAME`` and
    ``--method-NAME``, plus a plain ``--NAME`` that sets both."""
    parser = argparse.ArgumentParser(prog=f"python -m solvers {family} {method}",
                                     description=fam.METHODS[method].summary or fam.METHODS[method].label)
    data = parser.add_argument_group("data")
    data.add_argument("--dataset", help="a bundled or real dataset name (see: python -m solvers list)")
    data.add_argument("--generator", help="a synthetic generator of this family; its settings are --gen-NAME flags")
    shared = shared_names(fam, method)
    problem_specs, method_specs = fam.PROBLEM_PARAMS, fam.METHODS[method].params
    add_cli_flags(parser.add_argument_group("problem"), [p for p in problem_specs if p.name not in shared])
    add_cli_flags(parser.add_argument_group(f"{method} parameters"), [p for p in method_specs if p.name not in shared])
    if shared:
        both = parser.add_argument_group("shared by the problem and the method (--NAME sets both)")
        add_cli_flags(both, [p for p in problem_specs if p.name in shared])
        add_cli_flags(both, [p for p in problem_specs if p.name in shared], prefix="problem")
        add_cli_flags(both, [p for p in method_specs if p.name in shared], prefix="method")
    add_cli_flags(parser.add_argument_group("stopping"), stopping_params(fam.METHODS[method]))
    out = parser.add_argument_group("output")
    out.add_argument("--history", help="write the history to this CSV file")
    out.add_argument("--every", type=int, default=0, help="print every N-th history row while running (0: none)")
    return parser


def split_params(args: argparse.Namespace, fam: ModuleType, method: str) -> tuple[dict, dict]:
    """(problem, method) parameter values; a shared name's prefixed flag wins over the plain one."""
    shared = shared_names(fam, method)
    problem_specs, method_specs = fam.PROBLEM_PARAMS, fam.METHODS[method].params
    plain = cli_values(args, [p for p in problem_specs if p.name in shared])
    problem = {**cli_values(args, [p for p in problem_specs if p.name not in shared]), **plain,
               **cli_values(args, [p for p in problem_specs if p.name in shared], prefix="problem")}
    method_values = {**cli_values(args, [p for p in method_specs if p.name not in shared]), **plain,
                     **cli_values(args, [p for p in method_specs if p.name in shared], prefix="method")}
    return validate_params(problem_specs, problem), validate_params(method_specs, method_values)


def load_data(args: argparse.Namespace, extra: list[str], family: str, parser: argparse.ArgumentParser):
    """The dataset or generated data the options name; None only for a family that needs no data."""
    for option, value in (("--dataset", args.dataset), ("--generator", args.generator)):
        if value is not None and not value.strip():
            raise InputError(f"{option} is empty; name one (see: python -m solvers list)")
    if args.dataset is not None and args.generator is not None:
        raise InputError("give either --dataset or --generator, not both")
    if args.generator is not None:
        gens = datasets.generators(family)
        if args.generator not in gens:
            raise InputError(f"unknown generator {args.generator!r} for {family}; choose one of {', '.join(gens)}")
        gen_parser = argparse.ArgumentParser(prog="generator settings", add_help=False)
        add_cli_flags(gen_parser, [dataclasses.replace(p, name=f"gen_{p.name}") for p in gens[args.generator].params])
        gen_args, extra = gen_parser.parse_known_args(extra)
    if extra:
        raise InputError(f"unrecognised arguments: {' '.join(extra)} (see: {parser.prog} --help)")
    if args.generator is not None:
        values = {k[4:]: v for k, v in vars(gen_args).items() if v is not None}
        return gens[args.generator](**values)
    if args.dataset is not None:
        return datasets.load(args.dataset)
    if family in DATA_OPTIONAL:
        return None
    raise InputError(f"{family} needs data: give --dataset NAME or --generator NAME (see: python -m solvers list)")


def check_writable(path: str, option: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"{option} {path} is a directory; give a file name such as {target / 'history.csv'}")
    if not target.parent.is_dir():
        raise InputError(f"{option} {path}: the directory {target.parent} does not exist; create it first")
    existed = target.exists()
    try:  # the only sure test (permissions, read-only or special file systems) is to open it
        with open(target, "a"):
            pass
    except OSError as exc:
        raise InputError(f"{option} {path} cannot be written ({exc.strerror}); choose another path") from None
    if not existed:
        target.unlink()


def _holds_arrays(value, arrays: dict) -> bool:
    """Whether an info entry is, or holds, one of the per-iteration arrays, which the summary names, not prints."""
    values = value.values() if isinstance(value, dict) else [value]
    return any(v is a for v in values for a in arrays.values())


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
        if len(argv) >= 2 and argv[1] in ("-h", "--help"):
            print(family_help(fam, family))
            return 0
        if len(argv) < 2 or argv[1].startswith("-"):
            raise InputError(f"name a method of {family}: {', '.join(fam.METHODS)}")
        method = argv[1]
        if method not in fam.METHODS:
            raise InputError(f"unknown method {method!r} for {family}; choose one of {', '.join(fam.METHODS)}")
        parser = build_parser(fam, family, method)
        args, extra = parser.parse_known_args(argv[2:])
        if args.history:
            check_writable(args.history, "--history")
        ds = load_data(args, extra, family, parser)
        problem_params, method_params = split_params(args, fam, method)
        problem = fam.make_problem(ds, **problem_params)
        stopping = params_from_cli(args, stopping_params(fam.METHODS[method]))  # the method's own max_iter default

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
    arrays = result.per_iteration_arrays()
    print("counters:", ", ".join(f"{k}={v}" for k, v in result.info.items()
                                 if k not in ("n_iter", "time") and not _holds_arrays(v, arrays)))
    if arrays:
        print("per iteration:", ", ".join(f"{k} ({a.shape[1]} values)" for k, a in arrays.items()),
              "(columns NAME_1 … of --history)")
    if args.history:
        try:
            result.history_with_arrays().to_csv(args.history, index=False)
        except OSError as exc:
            print(f"error: --history {args.history} could not be written: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"history written to {args.history}")
    return 0

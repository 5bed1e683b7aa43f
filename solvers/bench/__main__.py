"""python -m solvers.bench <family> [options]: run a family's paper-table benchmark."""
from __future__ import annotations

import argparse
import importlib
import sys
from contextlib import nullcontext

from .. import FAMILIES
from ..core.errors import InputError
from . import records


def family_benchmarks() -> dict[str, object]:
    """{family: its bench module} for the families that ship one."""
    found = {}
    for fam in FAMILIES:
        try:
            found[fam] = importlib.import_module(f"solvers.{fam}.bench")
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith(f"solvers.{fam}"):
                raise
    return found


def executor_flags() -> argparse.ArgumentParser:
    """--workers / --scheduler, understood after any family: they send the family's table to solvers.sweep;
    --save / --note, which store the family's headline tables as records (solvers/bench/records.py)."""
    flags = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    flags.add_argument("--save", action="store_true", help="store the headline tables as JSON records in "
                                                           "docs/benchmarks/records/ (then: python -m solvers.bench report)")
    flags.add_argument("--note", action="append", default=[], help="a note stored with the records (repeatable), "
                                                                    "e.g. what was scaled down and why")
    flags.add_argument("--workers", type=int, help="run the table's cells as jobs on a local Dask cluster of N "
                                                   "worker processes (0: serially through the same executor)")
    flags.add_argument("--scheduler", help="run the table's cells on the Dask cluster at this address "
                                           "(tcp://HOST:PORT, as printed by `dask scheduler`)")
    return flags


def run_on_executor(family: str, argv: list[str], workers: int | None, scheduler: str | None) -> int:
    from ..sweep import executor
    from ..sweep.tables import TABLES

    if family not in TABLES:
        raise InputError(f"{family}'s benchmark has no table split into jobs yet (those that do: "
                         f"{', '.join(TABLES)}); run it without --workers / --scheduler")
    with executor(workers=workers, scheduler=scheduler) as client:
        return int(TABLES[family](argv, client) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"]:
        try:
            return records.report_main(argv[1:])
        except InputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    benches = family_benchmarks()
    listing = "\n".join(f"  {fam:<10} {(mod.__doc__ or '').strip().splitlines()[0]}" for fam, mod in benches.items())
    parser = argparse.ArgumentParser(
        prog="python -m solvers.bench",
        description="Reproduce the papers' tables on the data available here; ratios are measured side by side "
                    "in one run. Each family takes its own options: python -m solvers.bench FAMILY --help.",
        epilog=f"families with benchmarks:\n{listing or '  (none yet)'}\n\n"
               "--workers N / --scheduler ADDRESS (after the family) run the family's table as independent jobs "
               "on Dask (see docs/scaling.md). --save (after the family) stores the headline tables as records;\n"
               "python -m solvers.bench report [--check] rebuilds the docs' tables from them.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("family", choices=sorted(benches) or list(FAMILIES), help="which family's benchmark")
    args, rest = parser.parse_known_args(argv[:1])
    if args.family not in benches:
        parser.error(f"family {args.family!r} has no benchmark yet")
    scale, family_argv = executor_flags().parse_known_args(argv[1:])
    command = " ".join(["python -m solvers.bench", args.family, *family_argv] + [
        flag for flag, value in (("--workers", scale.workers), ("--scheduler", scale.scheduler)) if value is not None
        for flag in (flag, str(value))])
    try:
        with (records.saving(command, scale.note) if scale.save else nullcontext()):
            if scale.workers is None and scale.scheduler is None:
                return int(benches[args.family].main(family_argv) or 0)
            return run_on_executor(args.family, family_argv, scale.workers, scale.scheduler)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

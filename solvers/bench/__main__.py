"""python -m solvers.bench <family> [options]: run a family's paper-table benchmark."""
from __future__ import annotations

import argparse
import importlib
import sys

from .. import FAMILIES
from ..core.errors import InputError


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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    benches = family_benchmarks()
    listing = "\n".join(f"  {fam:<10} {(mod.__doc__ or '').strip().splitlines()[0]}" for fam, mod in benches.items())
    parser = argparse.ArgumentParser(
        prog="python -m solvers.bench",
        description="Reproduce the papers' tables on the data available here; ratios are measured side by side "
                    "in one run. Each family takes its own options: python -m solvers.bench FAMILY --help.",
        epilog=f"families with benchmarks:\n{listing or '  (none yet)'}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("family", choices=sorted(benches) or list(FAMILIES), help="which family's benchmark")
    args, rest = parser.parse_known_args(argv[:1])
    if args.family not in benches:
        parser.error(f"family {args.family!r} has no benchmark yet")
    try:
        return int(benches[args.family].main(argv[1:]) or 0)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Warm the lesson before class: ``python -m app.warm [--url http://localhost:8501] [--page P | --all]``.

Runs, against the running server, every configuration a class starts from: each page at its defaults, each of
its presets (Home's lesson links open these) and the lesson slider's notches (app/loadtest/lessons.py). Their
solver runs land in the server's run store, so every student's first steps are cache hits. Pages that wait for
their Run button get it pressed. Prints one line per configuration; exits non-zero when one fails.
"""
from __future__ import annotations

import argparse
import asyncio
import sys

from app.loadtest.classroom import visit
from app.loadtest.lessons import PAGES, query_string, warm_links
from app.loadtest.protocol import Student


async def warm_page(url: str, page: str, timeout: float) -> int:
    """Every warm link of one page through one session; the number that failed."""
    failed = 0
    async with Student(url, page, timeout=timeout) as student:
        for link in warm_links(page):
            query = query_string(link)
            run, pressed = await visit(student, query, page)
            problems = run.exceptions + run.errors + ([run.detail] if not run.ok else [])
            failed += bool(problems)
            print(f"{page:12s} {run.seconds:7.2f} s  {'ok    ' if not problems else 'FAILED'} "
                  f"{'(Run pressed) ' if pressed else ''}?{query}" + (f"\n    {problems[0][:300]}" if problems else ""),
                  flush=True)
    return failed


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://localhost:8501", help="the lecture server (make serve)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--page", choices=PAGES, default="foundations")
    which.add_argument("--all", action="store_true", help="every page")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one configuration may take")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    pages = PAGES if args.all else (args.page,)

    async def warm_all() -> int:
        return sum([await warm_page(args.url.rstrip("/"), page, args.timeout) for page in pages])

    try:
        failed = asyncio.run(warm_all())
    except OSError as exc:
        print(f"Cannot reach the server at {args.url} ({exc}); start it with `make serve` and pass --url.",
              file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

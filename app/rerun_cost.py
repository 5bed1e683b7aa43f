"""Server CPU of a cached rerun of every page: ``python -m app.rerun_cost [page ...]`` (or ``python -m app.latency
--cached``).

A cached rerun is what the fortieth student of a lecture costs: the page at its defaults, run again with the same
state, every solver result already in the run store. Each page is opened through ``app/main.py`` (navigation, as the
server runs it) in Streamlit's AppTest, run until its results are stored, then rerun ``--reruns`` times; each rerun is
timed in this process's CPU seconds (the script runs in a thread of this process, so that is the server's work;
a loaded machine inflates it less than wall seconds). AppTest compiles the page script afresh on each run, which the
server does once: a script cache shared by the runs removes that. Prints the median and the fastest rerun in ms, the
charts drawn, and the load average. Run it with ``OMP_NUM_THREADS=1``: BLAS threads otherwise spin after each small
product and add their CPU to every rerun.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1 import app_test

MAIN = Path(__file__).parent / "main.py"
PAGES = ["home", "foundations", "sparse", "multitask", "smm", "metric", "npsvc"]
TARGET_MS = 50


def share_script_cache() -> None:
    """Compile each script once, as the server's runtime does (AppTest makes a new ScriptCache per run)."""
    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared


def settled(page: str, timeout: float) -> AppTest:
    """The page at its defaults with its results stored: opened, run, and run once more (URL and state settle)."""
    at = AppTest.from_file(str(MAIN), default_timeout=timeout)
    at.run()
    if page != "home":
        at.switch_page(f"views/{page}.py").run()
    return at.run()


def measure(page: str, reruns: int, timeout: float) -> dict:
    at = settled(page, timeout)
    cpu_ms = []
    for _ in range(reruns):
        start = time.process_time()
        at.run()
        cpu_ms.append(1000 * (time.process_time() - start))
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    waiting = any("press **Run**" in i.value for i in at.info)
    return {"page": page, "median": statistics.median(cpu_ms), "fastest": min(cpu_ms),
            "charts": len(at.get("plotly_chart")),
            "notes": "; ".join(problems)[:80] + (" waits for Run (nothing computed at the defaults)" if waiting else "")}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=PAGES, help=f"any of {', '.join(PAGES)} (default: all)")
    parser.add_argument("--reruns", type=int, default=9, help="cached reruns timed per page")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per run")
    args = parser.parse_args(argv)
    unknown = set(args.pages) - set(PAGES)
    if unknown:
        parser.error(f"unknown page(s) {', '.join(sorted(unknown))}; choose from {', '.join(PAGES)}")
    if args.reruns < 1:
        parser.error("--reruns must be at least 1")
    share_script_cache()
    if os.environ.get("OMP_NUM_THREADS") != "1":
        print("note: OMP_NUM_THREADS is not 1: BLAS threads spinning after small products are counted too "
              "(run with OMP_NUM_THREADS=1 to time the page's own work)")
    print(f"| page | cached rerun, median CPU [ms] | fastest [ms] | ≤ {TARGET_MS} ms | charts | notes |")
    print("|---|---|---|---|---|---|")
    for page in args.pages:
        row = measure(page, args.reruns, args.timeout)
        print(f"| {page} | {row['median']:.0f} | {row['fastest']:.0f} | {'yes' if row['median'] <= TARGET_MS else 'no'} "
              f"| {row['charts']} | {row['notes']} |", flush=True)
    print(f"load average after the runs: {' / '.join(f'{v:.1f}' for v in os.getloadavg())} (1 / 5 / 15 min)")


if __name__ == "__main__":
    main()

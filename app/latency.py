"""Per-notch latency of every page's default: ``python -m app.latency [page ...]``.

For each page: the first run (cold caches), then one slider moved notch by notch to values not seen before
(every notch misses the run cache, as a lecturer's would), timing each script rerun with Streamlit's AppTest
(the page's own work: solvers, figures, tables; not the browser's drawing or the network). Prints one row per
page: the first run, the median and the worst notch, and the machine's load average at the end.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

VIEWS = Path(__file__).parent / "views"
# page → (widget kind, key, values one notch apart that the default run has not computed)
NOTCHES = {
    "foundations": ("slider", "fd.step", [0.95, 0.9, 0.85, 0.8, 0.75]),
    "sparse": ("slider", "sp.problem.s", [6, 7, 8, 9, 10]),
    "multitask": ("select_slider", "mt.problem.alpha", [0.2, 0.5, 1.0, 0.05, 0.02]),
    "smm": ("select_slider", "smm.problem.C", [2.0, 5.0, 0.5, 0.2, 0.1]),
    "metric": ("slider", "ml.problem.gamma", [0.06, 0.07, 0.08, 0.09, 0.1]),
    "npsvc": ("select_slider", "np.m.knpsvc.c", [2.0, 5.0, 0.5, 0.2, 0.1]),
}


def measure(page: str, timeout: float) -> dict:
    kind, key, values = NOTCHES[page]
    at = AppTest.from_file(str(VIEWS / f"{page}.py"), default_timeout=timeout)
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    notches = []
    for value in values:
        getattr(at, kind)(key=key).set_value(value)
        start = time.perf_counter()
        at.run()
        notches.append(time.perf_counter() - start)
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    return {"page": page, "widget": key, "first [s]": first, "median notch [s]": statistics.median(notches),
            "worst notch [s]": max(notches), "problems": "; ".join(problems)[:80]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=list(NOTCHES), help=f"any of {', '.join(NOTCHES)} (default: all)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per rerun")
    args = parser.parse_args(argv)
    unknown = set(args.pages) - set(NOTCHES)
    if unknown:
        parser.error(f"unknown page(s) {', '.join(sorted(unknown))}; choose from {', '.join(NOTCHES)}")
    print("| page | slider | first run [s] | median notch [s] | worst notch [s] | notes |")
    print("|---|---|---|---|---|---|")
    for page in args.pages:
        row = measure(page, args.timeout)
        print(f"| {row['page']} | `{row['widget']}` | {row['first [s]']:.2f} | {row['median notch [s]']:.2f} | "
              f"{row['worst notch [s]']:.2f} | {row['problems']} |", flush=True)
    print(f"load average after the runs: {' / '.join(f'{v:.1f}' for v in os.getloadavg())} (1 / 5 / 15 min)")


if __name__ == "__main__":
    main()

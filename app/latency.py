"""Per-notch latency of every page's default: ``python -m app.latency [page ...]``.

For each page: the first run (cold caches), then each of its sliders moved notch by notch to values not seen before
(every notch misses the run cache, as a lecturer's would), timing each script rerun with Streamlit's AppTest
(the page's own work: solvers, figures, tables; not the browser's drawing or the network). The sliders are found
by key wherever the page draws them (Foundations' step and β sit beside its chart, not in the sidebar). Prints one
row per slider: the page's first run, the median and the worst notch, in wall seconds and in this process's CPU
seconds (the script runs in a thread of this process; with OMP_NUM_THREADS=1 the CPU seconds are the work done,
which a loaded machine does not inflate the way it inflates wall seconds), notes on notches that waited for Run or
left every chart as it was (a notch that computes nothing measures nothing), and the load average at the end.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

VIEWS = Path(__file__).parent / "views"
# page → the sliders moved, each (widget kind, key, values one notch apart that the default run has not computed)
NOTCHES = {
    "foundations": [("slider", "fd.step", [0.95, 0.9, 0.85, 0.8, 0.75]),
                    ("slider", "fd.beta", [0.45, 0.4, 0.35, 0.3, 0.25])],
    "sparse": [("slider", "sp.problem.s", [6, 7, 8, 9, 10])],
    "multitask": [("select_slider", "mt.problem.alpha", [0.2, 0.5, 1.0, 0.05, 0.02])],
    "smm": [("select_slider", "smm.problem.C", [2.0, 5.0, 0.5, 0.2, 0.1])],
    "metric": [("slider", "ml.problem.gamma", [0.06, 0.07, 0.08, 0.09, 0.1])],
    "npsvc": [("select_slider", "np.m.knpsvc.c", [2.0, 5.0, 0.5, 0.2, 0.1])],
}


def open_page(page: str, timeout: float) -> AppTest:
    return AppTest.from_file(str(VIEWS / f"{page}.py"), default_timeout=timeout)


def notch_widget(at: AppTest, kind: str, key: str):
    """The slider a notch moves, wherever the page draws it (sidebar or beside a chart)."""
    return getattr(at, kind)(key=key)


def timed_run(at: AppTest) -> tuple[float, float]:
    """One script run: (wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    at.run()
    return time.perf_counter() - wall, time.process_time() - cpu


def chart_specs(at: AppTest) -> list[str]:
    return [el.proto.spec for el in at.get("plotly_chart")]


def waits_for_run(at: AppTest) -> bool:
    return any("press **Run**" in i.value for i in at.info)


def move(at: AppTest, kind: str, key: str, values) -> dict:
    """Move one slider through ``values``, timing each rerun; also counts the notches that waited for Run and
    those after which every chart was as before."""
    walls, cpus, waited, still = [], [], 0, 0
    for value in values:
        before = chart_specs(at)
        notch_widget(at, kind, key).set_value(value)
        wall, cpu = timed_run(at)
        walls.append(wall)
        cpus.append(cpu)
        waited += waits_for_run(at)
        still += chart_specs(at) == before
    notes = [f"{waited} of {len(values)} notches waited for Run"] if waited else []
    notes += [f"{still} of {len(values)} notches left every chart as it was"] if still else []
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    return {"widget": key, "median notch [s]": statistics.median(walls), "worst notch [s]": max(walls),
            "median notch cpu [s]": statistics.median(cpus), "worst notch cpu [s]": max(cpus),
            "waited": waited, "still": still, "notes": "; ".join(notes + problems)[:120]}


def measure(page: str, timeout: float) -> list[dict]:
    """One row per slider of ``page``; each row also carries the page's first run."""
    at = open_page(page, timeout)
    first_wall, first_cpu = timed_run(at)
    return [{"page": page, "first [s]": first_wall, "first cpu [s]": first_cpu, **move(at, kind, key, values)}
            for kind, key, values in NOTCHES[page]]


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--cached" in argv:  # the CPU of a rerun whose results are stored, instead of fresh notches
        from app import rerun_cost

        return rerun_cost.main([a for a in argv if a != "--cached"])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="--cached: time cached reruns instead (app/rerun_cost.py)")
    parser.add_argument("pages", nargs="*", default=list(NOTCHES), help=f"any of {', '.join(NOTCHES)} (default: all)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per rerun")
    args = parser.parse_args(argv)
    unknown = set(args.pages) - set(NOTCHES)
    if unknown:
        parser.error(f"unknown page(s) {', '.join(sorted(unknown))}; choose from {', '.join(NOTCHES)}")
    print("| page | slider | first run, wall / CPU [s] | median notch, wall / CPU [s] | worst notch, wall / CPU [s] "
          "| notes |")
    print("|---|---|---|---|---|---|")
    for page in args.pages:
        for row in measure(page, args.timeout):
            print(f"| {row['page']} | `{row['widget']}` | {row['first [s]']:.2f} / {row['first cpu [s]']:.2f} | "
                  f"{row['median notch [s]']:.2f} / {row['median notch cpu [s]']:.2f} | "
                  f"{row['worst notch [s]']:.2f} / {row['worst notch cpu [s]']:.2f} | {row['notes']} |", flush=True)
    print(f"load average after the runs: {' / '.join(f'{v:.1f}' for v in os.getloadavg())} (1 / 5 / 15 min)")


if __name__ == "__main__":
    main()

"""Every page's run estimate against a measured run: ``python -m app.calibrate [page ...]``.

For each page, its defaults and then each of its presets (app/views/_presets.py): Streamlit's AppTest opens the
page with the preset's widget values, presses Run where the page waits for it (and a preset's own button, e.g.
SMM's "Compute the path"), and records the ``Cost`` the page handed to ``run_controls`` (or ``refused``, for an
extra such as the C path) beside the CPU seconds of the runs that started (this process's CPU time around each
solver job, less the time its callback spent redrawing the live chart: the script runs in a thread of this process,
and with OMP_NUM_THREADS=1, which this module sets when it is started first, the CPU seconds are the work done,
which a loaded machine inflates far less than wall seconds). Prints one Markdown row per run: the estimate, the measurement and their ratio; the estimators aim at
a ratio within 2× either way. A configuration a page has already computed comes back from the run cache and is
not listed again.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy: one BLAS thread, as the estimates assume

import argparse  # noqa: E402 (after the thread setting)
import platform  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Iterator  # noqa: E402

from streamlit.testing.v1 import AppTest  # noqa: E402

import app.ui as ui  # noqa: E402
import app.ui.sweep as ui_sweep  # noqa: E402
from app.ui.cost import LIVE_SECONDS, Cost  # noqa: E402
from app.ui.runs import _run_store  # noqa: E402
from app.views._presets import PRESETS  # noqa: E402

VIEWS = Path(__file__).parent / "views"
PAGE_KEYS = {"foundations": "fd", "sparse": "sp", "multitask": "mt", "smm": "smm", "metric": "ml", "npsvc": "np"}
#: buttons a preset's claim needs pressed after the page's own run: (page, preset slug) → button labels
PRESET_BUTTONS = {("smm", "as-beats-warm"): ("Compute the path",)}


@dataclass
class Measured:
    """One page action: the estimate it was given and the CPU seconds and iterations of what it ran."""

    page: str
    config: str
    action: str
    cost: Cost | None
    cpu: float = 0.0
    iterations: int = 0
    runs: int = 0
    notes: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)  # per job: "label: iterations in CPU seconds"

    @property
    def ratio(self) -> float | None:
        """Measured over estimated seconds (1: exact; the target is 0.5 … 2)."""
        if self.cost is None or self.cost.seconds <= 0:
            return None
        return self.cpu / self.cost.seconds


class Recorder:
    """Wraps the page helpers that take a Cost and start runs, for as long as it is active."""

    def __init__(self) -> None:
        self.rows: list[Measured] = []
        self.page = self.config = ""
        self._cost: Cost | None = None  # the last run_controls cost of this script run
        self._extra: Cost | None = None  # the last refused() cost (an extra's estimate)

    @contextmanager
    def active(self) -> Iterator["Recorder"]:
        saved = ui.run_controls, ui.run_live, ui.refused, ui_sweep.run_grid_result
        ui.run_controls, ui.run_live, ui.refused = self._run_controls(saved[0]), self._run_live(saved[1]), \
            self._refused(saved[2])
        ui_sweep.run_grid_result = self._grid(saved[3])
        try:
            yield self
        finally:
            ui.run_controls, ui.run_live, ui.refused, ui_sweep.run_grid_result = saved

    def _run_controls(self, original):
        def wrapped(key, *, cost=None, **kw):
            self._cost = cost
            return original(key, cost=cost, **kw)
        return wrapped

    def _refused(self, original):
        def wrapped(cost):
            self._extra = cost
            return original(cost)
        return wrapped

    def _run_live(self, original):
        def wrapped(jobs, spec, *, key, execute):
            row = Measured(self.page, self.config, "run", self._cost)
            timed = [ui.Job(j.label, j.key, self._timed(j.label, j.run, row), j.color) for j in jobs]
            results = original(timed, spec, key=key, execute=execute)
            if row.runs:
                row.iterations = sum(int(r.info.get("n_iter") or 0) for r in results.values())
                row.notes = sorted({f"{label}: {r.status}" for label, r in results.items() if r.status != "converged"})
                self.rows.append(row)
            return results
        return wrapped

    @staticmethod
    def _timed(label: str, run, row: Measured):
        """The job's run, timed in CPU seconds less those spent in its callback (the page's live chart, redrawn
        more often the longer a run takes in wall seconds: on a loaded machine it took 0.3–1.1 s of a metric path)."""
        def timed_run(callback):
            drawing = [0.0]

            def counted(progress):
                begin = time.process_time()
                try:
                    return callback(progress)
                finally:
                    drawing[0] += time.process_time() - begin
            start = time.process_time()
            result = None
            try:
                result = run(counted)
                return result
            finally:
                spent = time.process_time() - start - drawing[0]
                row.cpu += spent
                row.runs += 1
                iters = "–" if result is None else result.info.get("n_iter")
                row.jobs.append(f"{label}: {iters} it. in {spent:.2f} s (+ {drawing[0]:.2f} s live chart)")
        return timed_run

    def _grid(self, original):
        def wrapped(fn, configs, *, start=None, **kw):
            if not start:
                return original(fn, configs, start=start, **kw)
            row = Measured(self.page, self.config, f"{fn.__name__} ({len(configs)} jobs)", self._extra,
                           runs=len(configs))
            begin = time.process_time()
            result = original(fn, configs, start=start, **kw)
            row.cpu = time.process_time() - begin
            if result is not None and result.histories is not None:
                row.iterations = len(result.histories)  # the grid's rows (an SMM path: its C values)
                row.notes.append(f"{row.iterations} rows")
            self.rows.append(row)
            return result
        return wrapped


def configurations(page: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, widget values) for the page's defaults and each of its presets."""
    return [("defaults", {})] + [(p.slug, dict(p.values)) for p in PRESETS.get(page, [])]


def _press(at: AppTest, label: str, timeout: float) -> bool:
    for button in at.button:
        if button.label == label and not button.proto.disabled:
            button.click().run(timeout=timeout)
            return True
    return False


def measure_configuration(page: str, name: str, values: dict[str, Any], recorder: Recorder,
                          timeout: float) -> list[Measured]:
    """The rows one configuration adds: what its page computed that the run cache did not hold."""
    recorder.page, recorder.config = page, name
    before = len(recorder.rows)
    at = AppTest.from_file(str(VIEWS / f"{page}.py"), default_timeout=timeout)
    for key, value in values.items():
        at.session_state[key] = list(value) if isinstance(value, tuple) else value
    at.run(timeout=timeout)
    if len(recorder.rows) == before:  # the page waits for Run (or had nothing new to compute)
        _press(at, "Run", timeout)
    for label in PRESET_BUTTONS.get((page, name), ()):
        if not _press(at, label, timeout):
            recorder.rows.append(Measured(page, name, f"{label}: no such button", None))
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    if problems:
        if len(recorder.rows) == before:
            recorder.rows.append(Measured(page, name, "no run", recorder._cost))
        recorder.rows[-1].notes.append("; ".join(str(p) for p in problems)[:120])
    return recorder.rows[before:]


def measure_page(page: str, recorder: Recorder, timeout: float, repeat: int = 1) -> None:
    """Each configuration ``repeat`` times (the runs it adds leave the cache in between); each row keeps its least
    CPU time, as timings do: what the machine's other work added is noise, not the run's cost."""
    store = _run_store()
    store.clear()  # every configuration computed here, none left from an earlier page
    for name, values in configurations(page):
        kept = set(store)
        best = measure_configuration(page, name, values, recorder, timeout)
        for _ in range(repeat - 1):
            for key in set(store) - kept:
                del store[key]
            rows = measure_configuration(page, name, values, recorder, timeout)
            del recorder.rows[len(recorder.rows) - len(rows):]
            if [r.action for r in rows] == [r.action for r in best]:
                for row, again in zip(best, rows):
                    if again.cpu < row.cpu:
                        row.cpu, row.jobs = again.cpu, again.jobs


def _seconds(s: float | None) -> str:
    return "–" if s is None else f"{s:.3f}"


def format_row(m: Measured) -> str:
    est = m.cost.seconds if m.cost is not None else None
    ratio = m.ratio
    live = "–" if est is None or m.action != "run" else ("live" if est <= LIVE_SECONDS else "Run")
    iters = "–" if m.cost is None or m.action != "run" else f"{m.cost.iterations:.0f} / {m.iterations}"
    return (f"| {m.page} | {m.config} | {m.action} | {_seconds(est)} | {live} | {m.cpu:.3f} | "
            f"{'–' if ratio is None else f'{ratio:.2f}'} | {iters} | {'; '.join(m.notes)} |")


HEADER = ("| page | configuration | action | estimate [s] | live? | solver CPU [s] | measured / estimate "
          "| iterations est. / run | notes |\n|---|---|---|---|---|---|---|---|---|")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", default=list(PAGE_KEYS), help=f"any of {', '.join(PAGE_KEYS)} (default: all)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds allowed per page rerun")
    parser.add_argument("--jobs", action="store_true", help="also list each job's iterations and CPU seconds")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each configuration; the least CPU time is kept")
    args = parser.parse_args(argv)
    unknown = set(args.pages) - set(PAGE_KEYS)
    if unknown:
        parser.error(f"unknown page(s) {', '.join(sorted(unknown))}; choose from {', '.join(PAGE_KEYS)}")
    recorder = Recorder()
    wall = time.perf_counter()
    print(HEADER, flush=True)
    with recorder.active():
        for page in args.pages:
            shown = len(recorder.rows)
            measure_page(page, recorder, args.timeout, max(args.repeat, 1))
            for row in recorder.rows[shown:]:
                print(format_row(row), flush=True)
                if args.jobs and row.jobs:
                    print(f"|  |  | {'; '.join(row.jobs)} |  |  |  |  |  |  |", flush=True)
    ratios = [r.ratio for r in recorder.rows if r.ratio is not None]
    within = sum(0.5 <= r <= 2.0 for r in ratios)
    print(f"\n{within} of {len(ratios)} estimates within 2× of the measurement (least of {max(args.repeat, 1)} runs); "
          f"{platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}; "
          f"{time.perf_counter() - wall:.0f} s wall; load average {' / '.join(f'{v:.1f}' for v in os.getloadavg())} "
          "(1 / 5 / 15 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

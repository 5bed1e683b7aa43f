"""Running solvers from a page: Run/Stop controls, a live chart fed by the solver callback,
a progress bar, and a cache of finished runs keyed by the whole configuration.

Finished runs are kept in a process-wide LRU store (``st.cache_resource``) rather than
``st.cache_data``: a cache_data function cannot draw live charts while it computes, and
results are large; they are read-only once stored.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st

from solvers.core import InputError, Result

from .charts import line_chart
from .cost import LIVE_SECONDS, Cost
from .cost import check as cost_check

log = logging.getLogger(__name__)
STORE_SIZE = 96
REFRESH_SECONDS = 0.3
DRAW_SHARE = 0.2  # the most of a live run's time that redrawing its chart may take


@st.cache_resource
def _run_store() -> OrderedDict:
    return OrderedDict()


def config_key(*parts: Any) -> str:
    """A stable hash of anything JSON-able (numbers, strings, dicts, lists, tuples)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def cached_result(key: str) -> Result | None:
    store = _run_store()
    if key in store:
        store.move_to_end(key)
        return store[key]
    return None


def store_result(key: str, result: Result) -> None:
    store = _run_store()
    store[key] = result
    store.move_to_end(key)
    while len(store) > STORE_SIZE:
        store.popitem(last=False)


@dataclass
class Job:
    """One solver run to show: ``run(callback) -> Result``; ``key`` must capture data and every parameter."""

    label: str  # legend text, e.g. "APG+"
    key: str  # config_key(...) of everything that determines the result
    run: Callable[[Callable[[dict], Any]], Result]
    color: str | None = None  # method name whose colour to use (default: the label)


@dataclass
class LiveSpec:
    """What the live chart shows while solvers run."""

    y: str
    y_title: str
    x: str = "iter"
    x_title: str = "iteration"
    log_y: bool = True
    title: str = "Convergence (live)"
    tol: float | None = None  # with a tolerance the progress bar also tracks log(measure)/log(tol)
    max_iter: int | None = None


def run_controls(key: str, *, live_default: bool, cost: Cost | None = None, container: Any = None,
                 live_worst_seconds: float | None = None) -> bool:
    """Sidebar Run button and 'live' toggle. True when the page should compute now.

    Cheap pages default to live: every change re-runs at once. Expensive ones wait for Run.
    With a ``cost`` estimate, a run beyond the memory budget or the time limit is refused
    (InputError saying what to change), and one longer than a few seconds always waits for Run
    with its estimate shown. A press of Stop (drawn during a run) interrupts the script, and the
    next pass does not re-run. ``live_worst_seconds``: a page whose typical estimate can be far below what its
    iteration caps allow also waits for Run when the caps' worst case exceeds this many seconds.
    """
    box = container if container is not None else st.sidebar
    refusal = None
    if cost is not None:
        try:
            cost_check(cost)
        except InputError as exc:
            refusal = exc
    heavy = refusal is not None or (cost is not None and cost.seconds > LIVE_SECONDS) or (
        cost is not None and live_worst_seconds is not None and cost.worst_seconds > live_worst_seconds)
    live = box.toggle("Re-run on every change", value=live_default and not heavy, key=f"{key}.live", disabled=heavy,
                      help="Off for runs estimated over a few seconds: press Run." if heavy else
                      "On: any change re-runs (finished runs come back from the cache). Off: press Run.")
    pressed = box.button("Run", type="primary", key=f"{key}.run", width="stretch")
    if refusal is not None:  # the controls stay in place (Run shows the refusal again); the page says what to change
        raise refusal
    if cost is not None:
        box.caption(f"Estimated run: {cost.describe()}." + (" Stop interrupts it." if heavy else ""))
    stopped = bool(st.session_state.get(f"{key}.stop"))
    return pressed or (live and not heavy and not stopped)


def awaiting_run(keys: Sequence[str], *, key: str, execute: bool) -> bool:
    """True when nothing is to be shown yet: no run cached for ``keys`` and the page is not computing.

    Pages call it before building their problem, so a field change in manual mode costs nothing
    until Run. A stopped run still goes on to ``run_live``, which shows what had been computed.
    """
    if execute or any(cached_result(k) is not None for k in keys):
        return False
    if st.session_state.get(f"{key}.stop") and st.session_state.get(f"{key}.partial"):
        return False
    st.info("Not computed yet for these settings: press **Run** in the sidebar.")
    return True


class StoppableProgress:
    """A progress bar with a Stop button, for loops of runs (sweeps, paths, splits).

    Pressing Stop reruns the script, which interrupts the loop; the button that started the loop is
    then unpressed, so nothing restarts. ``empty()`` (or leaving a ``with`` block) removes both.
    """

    def __init__(self, key: str, text: str = "working…") -> None:
        self._box = st.empty()
        stop_col, bar_col = self._box.container().columns([1, 5])
        stop_col.button("Stop", key=f"{key}.stop_loop", help="Interrupt this loop")
        self._bar = bar_col.progress(0.0, text=text)

    def progress(self, value: float, text: str | None = None) -> None:
        self._bar.progress(min(max(float(value), 0.0), 1.0), text=text)

    def empty(self) -> None:
        self._box.empty()

    def __enter__(self) -> "StoppableProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.empty()



def refused(cost: Cost) -> bool:
    """Show an optional extra's estimate (st.caption), or its refusal (st.error with what to change)."""
    try:
        cost_check(cost)
    except InputError as exc:
        st.error(str(exc))
        return True
    st.caption(f"Estimated: {cost.describe()}.")
    return False


def _progress(row: dict, first: float | None, spec: LiveSpec) -> float:
    """Share of the work done: the solver's own ``progress`` column when it records one (a run of several
    sub-solves, e.g. TWSVM's K duals one after another), else iterations over max_iter or decades of the
    measure gained towards tol."""
    own = row.get("progress")
    if own is not None and math.isfinite(own):
        return min(max(float(own), 0.0), 1.0)
    frac = 0.0
    if spec.max_iter:
        frac = min(1.0, row.get("iter", 0) / spec.max_iter)
    m = row.get(spec.y)
    if spec.tol and first and m is not None and m > 0 and math.isfinite(m) and math.isfinite(first):
        if first > spec.tol and m < first:
            frac = max(frac, min(1.0, math.log(first / m) / math.log(first / spec.tol)))
    return frac


def run_live(jobs: Sequence[Job], spec: LiveSpec, *, key: str, execute: bool) -> dict[str, Result]:
    """Run (or fetch from the cache) every job, drawing a live chart and a progress bar.

    Returns ``{label: Result}`` for the jobs that finished (now or earlier). Jobs not in the
    cache are run only when ``execute`` is true; otherwise the page says to press Run.
    Bad input (InputError) is shown with st.error, other failures with a short message: never a traceback.
    """
    results: dict[str, Result] = {}
    pending = []
    for job in jobs:
        hit = cached_result(job.key)
        if hit is not None:
            results[job.label] = hit
        else:
            pending.append(job)
    if not pending:
        return results
    partial_key = f"{key}.partial"
    if st.session_state.get(f"{key}.stop") and st.session_state.get(partial_key):
        st.warning("Stopped. The curves below are what had been computed; press Run to start again.")
        st.plotly_chart(line_chart(st.session_state[partial_key], spec.x, spec.y, title="Stopped run",
                                   x_title=spec.x_title, y_title=spec.y_title, log_y=spec.log_y, ghost=False),
                        key=f"{key}.partial_chart")
        return results
    if not execute:
        st.info(f"{len(pending)} run(s) not computed yet for these settings: press **Run** in the sidebar.")
        return results

    live: dict[str, pd.DataFrame] = {label: r.history for label, r in results.items()}
    st.session_state[partial_key] = live
    controls = st.empty()  # Stop button and progress bar, cleared when the runs end
    stop_col, bar_col = controls.container().columns([1, 5])
    stop_col.button("Stop", key=f"{key}.stop", help="Interrupt the running solvers")
    bar = bar_col.progress(0.0, text="starting…")
    chart = st.empty()
    colors = {job.label: job.color or job.label for job in jobs}

    for index, job in enumerate(pending):
        rows: list[dict] = []
        last_draw = [time.perf_counter(), 0.0]  # when the last draw ended (the job's start at first), what it cost

        def callback(row: dict, job=job, rows=rows, last_draw=last_draw, index=index) -> None:
            rows.append(row)
            # ≈3 redraws a second, but at most DRAW_SHARE of the run spent drawing: a figure costs 0.1–0.4 s on
            # the loaded 2-core machine, and redrawing after every 0.3 s made a 1 s Multi-task run take 14 s.
            # A run shorter than REFRESH_SECONDS is never drawn live.
            if time.perf_counter() - last_draw[0] < max(REFRESH_SECONDS, last_draw[1] * (1 - DRAW_SHARE) / DRAW_SHARE):
                return None
            start = time.perf_counter()
            live[job.label] = pd.DataFrame(rows)
            done = (index + _progress(row, rows[0].get(spec.y), spec)) / len(pending)
            bar.progress(min(done, 1.0), text=f"{job.label}: iteration {row.get('iter', '?')}")
            chart.plotly_chart(line_chart(live, spec.x, spec.y, title=spec.title, x_title=spec.x_title,
                                          y_title=spec.y_title, log_y=spec.log_y, color_keys=colors, ghost=False))
            end = time.perf_counter()
            last_draw[:] = [end, end - start]
            return None

        try:
            result = job.run(callback)
        except InputError as exc:
            st.error(f"{job.label}: {exc}")
            continue
        except Exception as exc:  # a page never shows a traceback; the server log keeps it
            log.exception("run %s failed", job.label)
            st.error(f"{job.label} failed: {type(exc).__name__}: {exc}")
            continue
        store_result(job.key, result)
        results[job.label] = result
        live[job.label] = result.history
    controls.empty()
    chart.empty()
    st.session_state.pop(partial_key, None)
    return results


def summary_table(results: dict[str, Result], measure: str) -> pd.DataFrame:
    """Per run: status, iterations, solver time, final objective and optimality measure."""
    rows = []
    for label, r in results.items():
        last = r.history.iloc[-1] if len(r.history) else {}
        rows.append({"method": label, "status": r.status, "iterations": r.info.get("n_iter"),
                     "time [s]": round(float(r.info.get("time", float("nan"))), 4),
                     "objective": last.get("objective"), measure: last.get(measure)})
    return pd.DataFrame(rows)

"""Running solvers from a page: Run/Stop controls, a live chart fed by the solver callback,
a progress bar, and a cache of finished runs keyed by the whole configuration.

Finished runs are kept in a process-wide store (``st.cache_resource``; app/ui/lru.py bounds it) rather than
``st.cache_data``: a cache_data function cannot draw live charts while it computes, and
results are large; they are read-only once stored.

Runs not in the store go to the server's pool of worker processes (app/workers.py: one per core, identical
runs in flight computed once, a session's stale run cancelled; ``OPTLAB_WORKERS`` sets the size, 0 runs
them here in the server process, as AppTest scripts do by default).
"""
from __future__ import annotations

import hashlib
import importlib
import json
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd
import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

from solvers.core import InputError, Result

from ..workers import CANCELLED, DONE, FAILED, RUNNING, Status, WorkerPool, configured_workers
from .charts import line_chart
from .cost import LIVE_SECONDS, Cost
from .cost import check as cost_check
from .figcache import entry_bytes, prepare
from .lru import LRUStore

log = logging.getLogger(__name__)
STORE_SIZE = 96  # runs
STORE_BYTES = 12 << 20  # a lesson's runs on every page (≈ 0.01–0.4 MB a configuration at the pages' defaults)
REFRESH_SECONDS = 0.3
DRAW_SHARE = 0.2  # the most of a live run's time that redrawing its chart may take
# A run's live chart waits this long for its first frame: a lecture's fresh runs mostly end before it, and a frame
# they would flash for a few tenths of a second costs the browser a Plotly draw while the solvers need the cores
# (fresh SMM notches in Chromium, alternated on this 2-core machine: mean 0.72 s against 0.86, all 24 under 1 s
# against 17; docs/serving.md). The progress bar and Stop are there from the start.
FIRST_FRAME_SECONDS = 1.0


@st.cache_resource
def _run_store() -> LRUStore:
    return LRUStore(STORE_SIZE, STORE_BYTES)  # a run's size: its history, solution and info (app/memory.py)


def _close_pool(pool: WorkerPool | None) -> None:
    if pool is not None:
        pool.close()


@st.cache_resource(show_spinner=False, on_release=_close_pool)  # a cleared cache stops its worker processes
def _worker_pool() -> WorkerPool | None:
    """The server's worker processes (None: run in this process). A finished run lands in the run store even
    when every session that asked for it has moved on."""
    under_server = type(Runtime.instance()) is Runtime  # AppTest's Runtime is a mock: in-process by default
    workers = configured_workers(server=under_server)
    if workers == 0:
        return None
    return WorkerPool(workers, on_result=_run_store().__setitem__)


def prepare_workers(target: str, server_module: str) -> None:
    """A page's head start on its heavy imports, once per server: each worker process calls ``target``
    (``module:function``) in the background, and this process imports ``server_module``, which it needs to unpickle
    the runs' results. Nothing when runs stay in this process (AppTest; ``OPTLAB_WORKERS=0``)."""
    pool = _worker_pool()
    if pool is not None and pool.prepare(target):
        threading.Thread(target=importlib.import_module, args=(server_module,), name="optlab-prepare",
                         daemon=True).start()


def _session_id() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "bare"


def config_key(*parts: Any) -> str:
    """A stable hash of anything JSON-able (numbers, strings, dicts, lists, tuples)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def cached_result(key: str) -> Result | None:
    return _run_store().get(key)


def store_result(key: str, result: Result) -> None:
    _run_store()[key] = result


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
    pool = _worker_pool()
    if pool is not None and not st.session_state.get(f"{key}.stop") and pool.holds(_session_id(), keys):
        return False  # this session's run is still in a worker (a rerun interrupted it): run_live takes it up
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
    cache are run only when ``execute`` is true (or when this session's run of them is still in a worker:
    a rerun takes it up again); otherwise the page says to press Run.
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
    pool, session = _worker_pool(), _session_id()
    stopped = bool(st.session_state.get(f"{key}.stop"))
    held = pool is not None and not stopped and pool.holds(session, [job.key for job in pending])
    if pool is not None and not held:
        pool.release(session)  # Stop, or latest wins: whatever this session waited for before is stale now
    if not pending:
        return results
    partial_key = f"{key}.partial"
    if stopped and st.session_state.get(partial_key):
        st.warning("Stopped. The curves below are what had been computed; press Run to start again.")
        st.plotly_chart(line_chart(st.session_state[partial_key], spec.x, spec.y, title="Stopped run",
                                   x_title=spec.x_title, y_title=spec.y_title, log_y=spec.log_y, ghost=False),
                        key=f"{key}.partial_chart")
        return results
    if not (execute or held):
        st.info(f"{len(pending)} run(s) not computed yet for these settings: press **Run** in the sidebar.")
        return results

    live: dict[str, pd.DataFrame] = {label: r.history for label, r in results.items()}
    st.session_state[partial_key] = live
    controls = st.empty()  # Stop button and progress bar, cleared when the runs end
    stop_col, bar_col = controls.container().columns([1, 5])
    stop_col.button("Stop", key=f"{key}.stop", help="Interrupt the running solvers")
    view = _LiveView(bar_col.progress(0.0, text="starting…"), st.empty(), live, spec,
                     {job.label: job.color or job.label for job in jobs}, key)
    if pool is None:
        outcomes = _run_here(pending, view)
    else:
        outcomes = _run_in_workers(pool, session, pending, view, [job for job in jobs if job not in pending])
    for job in pending:
        outcome = outcomes.get(job.label)
        if isinstance(outcome, Result):
            results[job.label] = outcome
            live[job.label] = outcome.history
        elif outcome is not None:
            _show_failure(job.label, *outcome)
    controls.empty()
    view.chart.empty()
    st.session_state.pop(partial_key, None)
    return results


class _LiveView:
    """The progress bar and live chart of one ``run_live`` call."""

    def __init__(self, bar: Any, chart: Any, live: dict[str, pd.DataFrame], spec: LiveSpec,
                 colors: dict[str, str], key: str) -> None:
        self.bar, self.chart, self.live, self.spec, self.colors, self.key = bar, chart, live, spec, colors, key
        start = time.perf_counter()
        self._first_frame_at = start + FIRST_FRAME_SECONDS
        self._last_draw = (start, 0.0)  # when the last draw ended (the start at first), what it cost
        self._draws = 0  # each draw gets a key of its own: new rows may leave the figure as it was (a duplicate)

    def due(self) -> bool:
        # ≈3 redraws a second, but at most DRAW_SHARE of the run spent drawing: a figure costs 0.1–0.4 s on
        # the loaded 2-core machine, and redrawing after every 0.3 s made a 1 s Multi-task run take 14 s.
        # A run shorter than FIRST_FRAME_SECONDS is never drawn live.
        now, (end, cost) = time.perf_counter(), self._last_draw
        return now >= self._first_frame_at and now - end >= max(REFRESH_SECONDS, cost * (1 - DRAW_SHARE) / DRAW_SHARE)

    def draw(self, rows: dict[str, list[dict]], done: float, text: str, shared: Any = None) -> None:
        """Redraw with ``rows`` (per label). ``shared``: what identifies the chart's whole content across
        sessions, when it can (runs in workers): a class following the same runs builds each frame once."""
        start = time.perf_counter()
        for label, label_rows in rows.items():
            if label_rows:
                self.live[label] = pd.DataFrame(label_rows)
        self.bar.progress(min(done, 1.0), text=text)
        spec = self.spec

        def build() -> Any:
            return line_chart(self.live, spec.x, spec.y, title=spec.title, x_title=spec.x_title,
                              y_title=spec.y_title, log_y=spec.log_y, color_keys=self.colors, ghost=False)

        figure = build() if shared is None else _shared_live_figure((shared, spec, sorted(self.colors.items())), build)
        self.chart.plotly_chart(figure, key=f"{self.key}.live{self._draws}")
        self._draws += 1
        end = time.perf_counter()
        self._last_draw = (end, end - start)


Outcome = Result | tuple[str, str] | None  # a result, (kind, message) of a failure, or None (cancelled)
# recent live frames shared by the sessions following the same runs: a frame is asked for by those sessions within a
# REFRESH_SECONDS or so of its building, never later (the next one has more rows)
_live_figures = LRUStore(64, 2 << 20, size=entry_bytes)


def _shared_live_figure(identity: Any, build: Callable[[], Any]) -> Any:
    """The live frame for ``identity``, built (and serialised, app/ui/figcache.py) by the first session to ask."""
    key = config_key(identity)
    hit = _live_figures.get(key)
    if hit is None:
        hit = prepare(build())
        _live_figures[key] = hit
    return hit


def _run_here(pending: Sequence[Job], view: _LiveView) -> dict[str, Outcome]:
    """Each job in turn in this process, the chart drawn from the solver's callback."""
    outcomes: dict[str, Outcome] = {}
    for index, job in enumerate(pending):
        rows: list[dict] = []

        def callback(row: dict, job=job, rows=rows, index=index) -> None:
            rows.append(row)
            if view.due():
                done = (index + _progress(row, rows[0].get(view.spec.y), view.spec)) / len(pending)
                view.draw({job.label: rows}, done, f"{job.label}: iteration {row.get('iter', '?')}")
            return None

        try:
            result = job.run(callback)
        except InputError as exc:
            outcomes[job.label] = ("input", str(exc))
            continue
        except Exception as exc:  # a page never shows a traceback; the server log keeps it
            log.exception("run %s failed", job.label)
            outcomes[job.label] = ("failed", f"{type(exc).__name__}: {exc}")
            continue
        store_result(job.key, result)
        outcomes[job.label] = result
    return outcomes


def _run_in_workers(pool: WorkerPool, session: str, pending: Sequence[Job], view: _LiveView,
                    cached: Sequence[Job]) -> dict[str, Outcome]:
    """Hand the jobs to the worker pool and follow them: the place in the queue while waiting, the live chart
    from the rows the workers send. Stop or a change of settings reruns the script, which leaves this loop at
    its next bar update; a rerun keeps the runs for a while (it may ask for them again), a closed tab does not.
    """
    lease = pool.subscribe(session, [(job.key, job.label, job.run) for job in pending])
    drawn = 0  # rows on the chart: it is redrawn only with new ones
    try:
        while True:
            statuses = lease.poll()
            if all(s.state in (DONE, FAILED, CANCELLED) for s in statuses):
                break
            done, text = _pool_progress(statuses, view.spec, pool.size)
            view.live.update({s.label: s.result.history for s in statuses if s.state == DONE})
            for s in statuses:
                if s.state in (FAILED, CANCELLED):
                    view.live.pop(s.label, None)
            rows = sum(len(s.rows) for s in statuses)
            if rows != drawn and view.due():  # fewer when a lent worker was taken back and a run starts again
                # the chart's content: stored runs by their keys, a run in flight by its number and rows so far
                shared = ([(job.label, job.key) for job in cached],
                          [(s.label, s.seq, "done" if s.state == DONE else len(s.rows) if s.state == RUNNING else 0)
                           for s in statuses])
                view.draw({s.label: s.rows for s in statuses if s.state == RUNNING}, done, text, shared)
                drawn = rows
            else:
                view.bar.progress(min(done, 1.0), text=text)  # also where a rerun or a closed tab interrupts
            lease.wait(REFRESH_SECONDS)
    except RerunException:
        lease.detach()
        raise
    except BaseException:  # a closed tab (StopException) or a failure here: nobody will read these runs
        lease.release()
        raise
    lease.release()
    return {s.label: s.result if s.state == DONE else s.error for s in statuses if s.state in (DONE, FAILED)}


def _pool_progress(statuses: Sequence[Status], spec: LiveSpec, workers: int) -> tuple[float, str]:
    """Share of a session's runs done (a finished run counts whole, a queued one nothing) and the bar's text:
    the running run's iteration, or the place in the queue while every run waits for a worker."""
    done = sum(1.0 if s.state in (DONE, FAILED, CANCELLED) else
               _progress(s.rows[-1], s.rows[0].get(spec.y), spec) if s.state == RUNNING and s.rows else 0.0
               for s in statuses) / len(statuses)
    running = [s for s in statuses if s.state == RUNNING]
    places = [s.place for s in statuses if s.place is not None]
    if running and running[0].rows:
        return done, f"{running[0].label}: iteration {running[0].rows[-1].get('iter', '?')}"
    if places and not running:
        return done, (f"All {workers} solver processes are busy: you are number {min(places)} in the queue. "
                      "Stop cancels your run.")
    return done, "starting…"


def _show_failure(label: str, kind: str, message: str) -> None:
    """One run's failure, saying what to change."""
    if kind == "input":
        st.error(f"{label}: {message}")
    elif kind == "memory":
        st.error(f"{label} needs more memory than the server can give ({message}). Choose fewer samples, "
                 "features or tasks, or a smaller generator size.")
    elif kind == "died":
        st.error(f"{label} failed: {message}.")
    else:  # the solver raised: lead with what to try, keep the detail for a bug report
        st.error(f"{label} failed on these settings. Change them and press Run again: a smaller step size, fewer "
                 f"iterations, a smaller data set or another method; if it keeps failing, please report it with "
                 f"this page's URL (detail: {message}).")


def summary_table(results: dict[str, Result], measure: str) -> pd.DataFrame:
    """Per run: status, iterations, solver time, final objective and optimality measure."""
    rows = []
    for label, r in results.items():
        last = r.history.iloc[-1] if len(r.history) else {}
        rows.append({"method": label, "status": r.status, "iterations": r.info.get("n_iter"),
                     "time [s]": round(float(r.info.get("time", float("nan"))), 4),
                     "objective": last.get("objective"), measure: last.get(measure)})
    return pd.DataFrame(rows)

"""A grid of runs from a page, on the same executor as ``python -m solvers.sweep``: a Run button, a progress
bar and Stop, a figure refilled live as cells finish, and a sidebar panel for the Dask cluster.

Where the jobs run: the cluster at ``$OPTLAB_SCHEDULER`` when it is set; otherwise in this process, or on
an embedded local cluster when the sidebar's toggle asks for one. The cluster is started once per server
(``st.cache_resource``) and reused by every page and session.
"""
from __future__ import annotations

import os
import time
from contextlib import ExitStack
from typing import Any, Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from solvers.core import InputError, format_bytes
from solvers.sweep import SCHEDULER_ENV, SweepResult, cluster_info, executor, run_sweep

REFRESH_SECONDS = 0.5
FROM_PANEL = object()  # run_grid's default client: whatever the sidebar's panel connects to


@st.cache_resource(show_spinner="Starting the Dask cluster…")
def _connection(workers: int | None, scheduler: str | None) -> ExitStack:
    """A client kept open for the server's lifetime (the local cluster's processes end with the server), held
    in its ExitStack: st.cache_resource refuses to cache a Client itself, which is awaitable."""
    stack = ExitStack()
    stack.client = stack.enter_context(executor(workers=workers, scheduler=scheduler, timeout=5))
    return stack


def cluster_panel(key: str = "sweep"):
    """Sidebar: where sweeps run (workers, threads, memory, a link to the Dask dashboard). Returns the client
    (None: in this process). A scheduler that cannot be reached is reported and the page runs serially."""
    box = st.sidebar.expander("Sweep executor (Dask)", expanded=False)
    scheduler = os.environ.get(SCHEDULER_ENV) or None
    workers = None
    if scheduler is None:
        if not box.toggle("Run sweeps on a local Dask cluster", value=False, key=f"{key}.local",
                          help="Off: the grid runs here, one cell after another. On: one worker process per core."):
            box.caption(f"Sweeps run in this process. Set {SCHEDULER_ENV}=tcp://HOST:PORT to use a cluster.")
            return None
        workers = int(box.number_input("workers", 1, max(1, os.cpu_count() or 1) * 2, os.cpu_count() or 1,
                                       key=f"{key}.workers"))
    try:
        client = _connection(workers, scheduler).client
        info = cluster_info(client)
    except (InputError, OSError) as exc:
        box.error(f"{exc}\n\nSweeps run in this process instead.")
        return None
    box.markdown(f"**{info['workers']}** workers, **{info['threads']}** threads, "
                 f"{format_bytes(info['memory'])} memory  \n`{info['address']}`")
    if info["dashboard"]:
        box.markdown(f"[Dask dashboard]({info['dashboard']})")
    return client


def run_grid(fn: Callable[[dict, Any], dict], configs: list[dict], **options) -> pd.DataFrame | None:
    """The table of :func:`run_grid_result` (one row per cell), or None before the grid's first run."""
    result = run_grid_result(fn, configs, **options)
    return None if result is None else result.table


def run_grid_result(fn: Callable[[dict, Any], dict], configs: list[dict], *, key: str, cache_key: str,
                    data: Any = None, figure: Callable[[pd.DataFrame], go.Figure] | None = None,
                    label: str | None = None, start: bool | None = None, client: Any = FROM_PANEL,
                    histories: bool = False) -> SweepResult | None:
    """Run button (``{key}_run``), progress bar and Stop for one grid; its result, or None before its first run.

    ``cache_key`` identifies the grid with its data (the result is kept in the session under it).
    ``figure(table)`` is redrawn while the cells finish (unfinished cells are NaN). Stop cancels the jobs
    still pending and keeps the rows that finished (their histories are not kept).
    ``start``: the page's own trigger (a button or a form's submit) instead of this Run button.
    ``client``: where the jobs run; by default the sidebar's :func:`cluster_panel` decides (a page with two
    grids calls the panel once and passes its client to both).
    """
    if client is FROM_PANEL:
        client = cluster_panel()
    store = st.session_state.setdefault("sweep.tables", {})
    partial_key = f"{key}_partial"
    if start is None:
        start = st.button(label or f"Run sweep ({len(configs)} fits)", key=f"{key}_run")
    if start:
        st.session_state[partial_key] = []
        controls = st.empty()
        stop_col, bar_col = controls.container().columns([1, 5])
        stop_col.button("Stop", key=f"{key}_stop", help="Cancel the cells not finished yet; keep the finished ones")
        bar = bar_col.progress(0.0, text=f"{len(configs)} cells queued…")
        live = st.empty()
        last_draw = [0.0]

        def on_row(row: dict, done: int, total: int) -> None:
            st.session_state[partial_key].append(row)
            bar.progress(done / total, text=f"{done} / {total} cells finished")
            if figure is not None and (time.monotonic() - last_draw[0] > REFRESH_SECONDS or done == total):
                last_draw[0] = time.monotonic()
                try:
                    live.plotly_chart(figure(_partial_table(configs, st.session_state[partial_key])),
                                      key=f"{key}_live_{done}")
                except KeyError:  # no cell has its metric yet (only errors so far)
                    pass

        result = run_sweep(fn, configs, client=client, data=data, on_row=on_row, histories=histories)
        controls.empty()
        live.empty()
        store[cache_key] = result
        st.session_state.pop(partial_key, None)
    elif st.session_state.get(partial_key):  # Stop pressed: the script was interrupted mid-sweep
        store[cache_key] = SweepResult(_partial_table(configs, st.session_state.pop(partial_key)), None)
        st.warning("Stopped: the cells that had finished are kept; the others were cancelled.")
    result = store.get(cache_key)
    if result is not None and not result.errors.empty:
        errors = result.errors["error"]
        refused = errors.str.startswith(f"{InputError.__name__}: ")  # bad settings, each cell's own message says why
        if refused.all():
            st.error(f"{len(errors)} of {len(result.table)} cells refused these settings: "
                     f"{errors.iloc[0].removeprefix(f'{InputError.__name__}: ')}")
        else:
            st.error(f"{int((~refused).sum())} of {len(result.table)} cells failed on these settings. Change them "
                     f"(fewer iterations, a smaller problem or another method) and run the sweep again; if it keeps "
                     f"failing, please report it with this page's URL (detail: {errors[~refused].iloc[0]}).")
    return result


def _partial_table(configs: list[dict], rows: list[dict]) -> pd.DataFrame:
    """The grid with the finished rows filled in and the rest marked cancelled (metrics NaN)."""
    done = {row["job"]: row for row in rows}
    return pd.DataFrame([done.get(i, {"job": i, **c, "status": "cancelled"}) for i, c in enumerate(configs)])

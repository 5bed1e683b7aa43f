"""Run a grid of independent jobs on Dask distributed, or serially in this process, streaming rows back.

A job is a pure function of its configuration, ``fn(config, data) -> {metric: value}`` (it may add
``"history"``: a DataFrame kept for Parquet), so the same configuration gives the same row wherever it
ran. Each finished job becomes one row: ``job`` (its index in the grid), the configuration, ``status``
(ok | error | cancelled), ``seconds`` (wall time of the job on its worker), ``error`` and the metrics.
"""
from __future__ import annotations

import os
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..core import InputError

SCHEDULER_ENV = "OPTLAB_SCHEDULER"
WORKER_START_SECONDS = 180
ROW_FIELDS = ("job", "status", "seconds", "error")
Job = Callable[[dict, Any], dict]
OnRow = Callable[[dict, int, int], "bool | None"]


@dataclass
class SweepResult:
    table: pd.DataFrame                 # one row per job, in grid order
    histories: pd.DataFrame | None      # every job's history with its ``job`` index, when asked for

    @property
    def cancelled(self) -> int:
        return int((self.table["status"] == "cancelled").sum())

    @property
    def errors(self) -> pd.DataFrame:
        return self.table[self.table["status"] == "error"]

    def write(self, path: str) -> None:
        """The table as CSV, or as Parquet when ``path`` ends in .parquet."""
        _write(self.table, path)

    def write_histories(self, path: str) -> None:
        if self.histories is None:
            raise InputError("this sweep kept no histories; run it with histories=True (--histories PATH)")
        _write(self.histories, path)


def _write(frame: pd.DataFrame, path: str) -> None:
    if str(path).endswith(".parquet"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


def run_job(fn: Job, index: int, config: dict, data: Any, keep_history: bool) -> tuple[dict, pd.DataFrame | None]:
    """Run one job and turn whatever happens into its row (this is what runs on a worker).

    An exception inside the job becomes an ``error`` row with the message, so the sweep goes on.
    """
    start = time.perf_counter()
    history = None
    try:
        metrics = dict(fn(dict(config), data) or {})
        history = metrics.pop("history", None)
        clash = sorted(set(metrics) & (set(config) | set(ROW_FIELDS)))
        if clash:
            raise ValueError(f"the job returned {', '.join(clash)}, which name(s) the configuration or the row; "
                             "rename the metric")
        outcome = {"status": "ok", "error": "", **metrics}
    except Exception as exc:  # noqa: BLE001 (any failure of one job is reported in its row)
        outcome = {"status": "error", "error": _message(exc)}
    row = {"job": index, **config, "seconds": time.perf_counter() - start, **outcome}
    return row, (history if keep_history and isinstance(history, pd.DataFrame) else None)


def _message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, InputError):  # a bug, not a bad input: say where it happened
        frames = traceback.extract_tb(exc.__traceback__)
        if frames:
            text += f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})"
    return text


def run_sweep(fn: Job, configs: Sequence[dict], *, client=None, data: Any = None, on_row: OnRow | None = None,
              histories: bool = False) -> SweepResult:
    """Run ``fn`` on every configuration; rows stream to ``on_row(row, n_done, n_total)`` as jobs finish.

    ``client``: a ``distributed.Client`` (see :func:`executor`), or None to run serially in this process.
    ``data``: one object every job receives as its second argument, scattered to the cluster once.
    A job whose worker dies is rerun elsewhere by the scheduler (see ``retries`` of :func:`executor`).
    ``on_row`` returning False, or Ctrl-C,
    cancels the jobs still pending and keeps the finished rows (the others get status ``cancelled``).
    """
    configs = [dict(c) for c in configs]
    if not configs:
        raise InputError("the grid is empty: give every axis at least one value")
    if not callable(fn):
        raise InputError(f"the job must be a function of (config, data), got {fn!r}")
    rows: dict[int, dict] = {}
    kept: list[pd.DataFrame] = []

    def accept(row: dict, history: pd.DataFrame | None) -> bool:
        rows[row["job"]] = row
        if history is not None:
            kept.append(history.assign(job=row["job"])[["job", *history.columns]])
        return on_row is None or on_row(row, len(rows), len(configs)) is not False

    try:
        if client is None:
            for i, config in enumerate(configs):
                if not accept(*run_job(fn, i, config, data, histories)):
                    break
        else:
            _run_on_cluster(client, fn, configs, data, histories, accept)
    except KeyboardInterrupt:
        pass  # the finished rows are kept; the rest are marked cancelled below
    return SweepResult(_table(configs, rows), pd.concat(kept, ignore_index=True) if kept else None)


def _run_on_cluster(client, fn: Job, configs: list[dict], data: Any, histories: bool,
                    accept: Callable[[dict, Any], bool]) -> None:
    from distributed import as_completed

    shared = client.scatter([data], broadcast=True, hash=False)[0] if data is not None else None
    futures = {client.submit(run_job, fn, i, config, shared, histories, pure=False): i
               for i, config in enumerate(configs)}
    try:
        for future in as_completed(futures, loop=client.loop):
            i = futures[future]
            try:
                row, history = future.result()
            except Exception as exc:  # noqa: BLE001 (KilledWorker: its workers died more often than retries allow)
                row, history = {"job": i, **configs[i], "seconds": np.nan, "status": "error",
                                "error": _message(exc)}, None
            if not accept(row, history):
                break
    finally:
        client.cancel(list(futures))  # stops what is pending and frees what is done


def _table(configs: list[dict], rows: dict[int, dict]) -> pd.DataFrame:
    full = [rows.get(i, {"job": i, **config, "seconds": np.nan, "status": "cancelled", "error": ""})
            for i, config in enumerate(configs)]
    table = pd.DataFrame(full)
    config_cols = list(dict.fromkeys(k for c in configs for k in c))
    metric_cols = [c for c in table.columns if c not in (*ROW_FIELDS, *config_cols)]
    return table[["job", *config_cols, "status", "seconds", "error", *metric_cols]]


def check_address(address: str) -> str:
    """A scheduler address Dask can dial ('tcp://host:port' or 'host:port'), or a clear InputError."""
    from distributed.comm.addressing import parse_address, parse_host_port

    text = (address or "").strip()
    try:
        protocol, location = parse_address(text if "://" in text else f"tcp://{text}")
        if protocol in ("tcp", "tls"):
            parse_host_port(location)
            if not location.rsplit(":", 1)[-1].isdigit():
                raise ValueError("no port")
    except (ValueError, TypeError) as exc:
        raise InputError(f"{address!r} is not a Dask scheduler address ({exc}); write it as tcp://HOST:PORT, "
                         "e.g. tcp://10.0.0.5:8786 as printed by `dask scheduler`") from None
    return text if "://" in text else f"tcp://{text}"


@contextmanager
def executor(workers: int | None = None, scheduler: str | None = None, *, retries: int = 2,
             memory_limit: str | float = "auto", dashboard: bool = True, timeout: float = 10.0) -> Iterator[Any]:
    """A Dask ``Client`` for the duration of the block, or None for the in-process serial mode.

    ``workers=0``: serial, in this process (tests, tiny grids). ``scheduler`` (else ``$OPTLAB_SCHEDULER``
    when ``workers`` is not given): connect to that cluster. Otherwise a local cluster (scheduler and
    nannies in subprocesses) of ``workers`` single-threaded workers (default: one per core), closed on exit.

    ``retries``: how many times the local cluster reruns a job on another worker after the worker running
    it died (Dask's ``distributed.scheduler.allowed-failures``); one more death gives the job an error row.
    An existing cluster keeps its scheduler's own setting (``DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES``).
    """
    if workers is not None and (not isinstance(workers, int) or workers < 0):
        raise InputError(f"workers must be a whole number >= 0 (0: run in this process), got {workers!r}")
    if not isinstance(retries, int) or retries < 0:
        raise InputError(f"retries must be a whole number >= 0, got {retries!r}")
    if scheduler and workers:
        raise InputError("give either --workers (a local cluster of that size) or --scheduler (an existing "
                         "cluster, whose own workers run the jobs), not both")
    if workers == 0:
        yield None
        return
    if scheduler is None and workers is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
    from distributed import Client
    from distributed.deploy.subprocess import SubprocessCluster

    if scheduler:
        address = check_address(scheduler)
        try:
            client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"no Dask scheduler answered at {address} within {timeout:g} s ({exc}). Start one with "
                             f"`dask scheduler` and workers with `dask worker {address}`, or leave --scheduler "
                             f"(and ${SCHEDULER_ENV}) out to run on a local cluster") from None
        with client:
            yield client
        return
    # Scheduler and nannies in subprocesses of their own: a nanny in this process would start its worker
    # with multiprocessing's "spawn", which first re-runs this process's __main__ file (under Streamlit,
    # the page script itself), at start and again whenever it restarts a worker that died.
    n_workers = workers or os.cpu_count() or 1
    cluster = SubprocessCluster(n_workers=n_workers, threads_per_worker=1, worker_kwargs={"memory_limit": memory_limit},
                                scheduler_kwargs={"allowed_failures": retries},
                                dashboard_address=":0" if dashboard else None, silence_logs=40)
    with cluster, Client(cluster, set_as_default=False) as client:
        try:  # the cluster object is up before its workers have joined
            client.wait_for_workers(n_workers, timeout=WORKER_START_SECONDS)
        except TimeoutError:
            raise InputError(f"the local cluster's {n_workers} worker(s) did not start within "
                             f"{WORKER_START_SECONDS} s; the machine may be overloaded or short of memory "
                             "(try fewer --workers)") from None
        yield client


def warm_up(client, modules: Sequence[str]) -> float:
    """Import ``modules`` on every worker now (seconds taken), so the first jobs do not pay for it.

    A fresh worker process imports numpy, scipy, scikit-learn, torch and the lab on its first job; on a
    loaded machine that takes longer than many jobs, and it would be counted in those jobs' seconds.
    """
    import importlib

    start = time.perf_counter()
    if client is not None:
        client.run(lambda names: [importlib.import_module(m) and None for m in names], list(modules))
    return time.perf_counter() - start


def cluster_info(client) -> dict[str, Any]:
    """Workers, threads, memory and the dashboard link of a connected cluster (for a status panel)."""
    info = client.scheduler_info(n_workers=-1)
    workers = info.get("workers", {})
    return {"address": info.get("address", ""), "workers": len(workers),
            "threads": sum(w.get("nthreads", 0) for w in workers.values()),
            "memory": sum(w.get("memory_limit", 0) or 0 for w in workers.values()),
            "dashboard": client.dashboard_link if "dashboard" in info.get("services", {}) else None}

"""The same sweeps on a local cluster of 2 worker processes: identical rows, faults, cancel, shipped data."""
import os
import signal

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from solvers.sweep import cluster_info, executor, expand, run_sweep, solve_job

from .test_tables import (metric_rows_match_the_serial_table, sparse_cells_match_the_serial_tables,
                          table2_cells_match_the_serial_protocol)
from .toy_jobs import fails_on_three, noisy_square, weighted_sum

pytestmark = [pytest.mark.xdist_group("dask-cluster"), pytest.mark.slow, pytest.mark.timeout(300)]


def test_the_cluster_is_two_single_threaded_workers(client):
    info = cluster_info(client)
    assert info["workers"] == 2 and info["threads"] == 2


def test_solve_rows_are_identical_to_the_serial_run(client):
    configs = expand({"dataset": ["iris", "wine"], "method": ["lstsvm", "knpsvc"], "seed": [0, 1]},
                     fixed={"family": "npsvc", "max_iter": 30})
    on_cluster = run_sweep(solve_job, configs, client=client).table
    # Dask starts its workers with one BLAS thread; the serial reference runs with one as well, so every
    # floating-point sum is taken in the same order and the numbers agree to the last bit.
    with threadpool_limits(1):
        serial = run_sweep(solve_job, configs).table
    timing = ["seconds", "solver_seconds"]
    assert (on_cluster["status"] == "ok").all()
    pd.testing.assert_frame_equal(on_cluster.drop(columns=timing), serial.drop(columns=timing))


def test_a_job_that_raises_is_one_error_row(client):
    table = run_sweep(fails_on_three, expand({"x": [1, 2, 3, 4]}), client=client).table
    assert table["status"].tolist() == ["ok", "ok", "error", "ok"]
    assert "x = 3 is refused" in table.loc[2, "error"]


def test_a_missing_dataset_on_the_worker_is_one_error_row(client):
    configs = [{"family": "npsvc", "dataset": name, "method": "lstsvm"} for name in ("iris", "no-such-set")]
    table = run_sweep(solve_job, configs, client=client).table
    assert table["status"].tolist() == ["ok", "error"] and "unknown dataset 'no-such-set'" in table.loc[1, "error"]


def test_shipped_data_is_scattered_once_and_used_by_every_job(client):
    data = np.arange(1.0, 4.0)
    table = run_sweep(weighted_sum, expand({"power": [0, 1, 2]}), client=client, data=data).table
    assert table["value"].tolist() == [6.0, 8.0, 2.0 + 12.0]


def test_cancel_keeps_the_finished_rows(client):
    configs = expand({"x": range(12)}, fixed={"sleep": 0.5})
    finished = []
    result = run_sweep(noisy_square, configs, client=client,
                       on_row=lambda row, done, total: finished.append(row) or done < 2)
    kept = result.table[result.table["status"] == "ok"]
    assert sorted(kept["job"]) == sorted(r["job"] for r in finished) and len(kept) == 2
    assert result.cancelled == 10
    for row in finished:
        assert result.table.loc[row["job"], "value"] == row["value"]


def test_a_worker_killed_mid_sweep_is_retried_and_every_job_finishes_once(client):
    configs = expand({"x": range(10)}, fixed={"sleep": 1.0})
    killed = []

    def kill_one_worker(row, done, total):
        if not killed:  # a job has finished, others are running: kill the worker of one running job
            pids = client.run(os.getpid)
            victim = next(pid for pid in pids.values() if pid != row["pid"]) if len(pids) > 1 else row["pid"]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    result = run_sweep(noisy_square, configs, client=client, on_row=kill_one_worker)  # the fixture's retries: 2
    table = result.table
    assert killed and (table["status"] == "ok").all(), table[["job", "status", "error"]]
    assert table["job"].tolist() == list(range(10))
    serial = run_sweep(noisy_square, [{**c, "sleep": 0.0} for c in configs]).table
    np.testing.assert_array_equal(table["value"], serial["value"])
    client.wait_for_workers(2, timeout=120)  # the nanny restarts the killed worker for the tests after this one


def test_npsvc_table2_on_the_cluster_equals_the_serial_protocol(client):
    table2_cells_match_the_serial_protocol(client)


def test_sparse_tables_on_the_cluster_equal_the_serial_tables(client):
    sparse_cells_match_the_serial_tables(client)


def test_metric_table_on_the_cluster_equals_the_serial_table(client):
    metric_rows_match_the_serial_table(client)


def test_with_no_retries_a_killed_worker_gives_its_job_an_error_row():
    with executor(workers=1, retries=0, memory_limit="768MiB", dashboard=False, timeout=60) as lone:
        lone.wait_for_workers(1, timeout=120)

        def kill_the_worker(row, done, total):
            if done == 1:
                os.kill(row["pid"], signal.SIGKILL)  # job 1 is running there now

        table = run_sweep(noisy_square, expand({"x": range(3)}, fixed={"sleep": 1.0}), client=lone,
                          on_row=kill_the_worker).table
    assert table.loc[0, "status"] == "ok"
    assert table.loc[1, "status"] == "error" and "KilledWorker" in table.loc[1, "error"]


def test_the_app_shows_the_connected_cluster_and_runs_its_grid_there(client, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from app.ui.sweep import _connection

    from .test_app_widget import streaming_page

    address = client.scheduler.address
    monkeypatch.setenv("OPTLAB_SCHEDULER", address)
    at = AppTest.from_function(streaming_page, default_timeout=120).run()
    try:
        panel = " ".join(m.value for m in at.sidebar.markdown)
        assert "**2** workers, **2** threads" in panel and address in panel
        at.session_state["stop_after"] = 2
        at.button(key="t.live_run").click().run()
        assert not at.exception, [e.value for e in at.exception]
        table = at.dataframe[0].value
        assert (table["status"] == "ok").sum() >= 2 and set(table["status"]) <= {"ok", "cancelled"}
        assert set(table.loc[table["status"] == "ok", "pid"]) <= set(client.run(os.getpid).values())
    finally:
        _connection(None, address).close()  # the page keeps its client for the server's life; end it here
        _connection.clear()

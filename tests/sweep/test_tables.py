"""Paper tables through the sweep: the same numbers as the family's serial protocol; the bench flags."""
import socket

import pandas as pd
import pytest

from threadpoolctl import threadpool_limits

from solvers.bench.__main__ import main as bench_main
from solvers.datasets import REAL, load
from solvers.npsvc.bench import BUDGETS, KERNEL_METHODS
from solvers.npsvc.experiments import accuracy_splits
from solvers.sweep import run_sweep
from solvers.metric.bench import parse as parse_metric
from solvers.metric.bench import load_for_bench, method_labels, run_dataset, summarize_trials
from solvers.sparse.bench import parse, run_tables
from solvers.sweep.tables import (metric_method_job, metric_trials, npsvc_split_job, npsvc_table2_configs,
                                  sparse_serial_rows, sparse_table_cell_job, sparse_tables_configs)

pytestmark = pytest.mark.xdist_group("dask-cluster")


def table2_cells_match_the_serial_protocol(client) -> None:
    swept = run_sweep(npsvc_split_job, npsvc_table2_configs(["iris"], splits=2, max_train=1000), client=client).table
    serial = accuracy_splits(load("iris"), KERNEL_METHODS, n_splits=2, problem_params={"max_train": 1000},
                             max_iter=200, budgets=BUDGETS)
    merged = serial.merge(swept, on=["split", "method"], suffixes=("_serial", "_swept"), validate="one_to_one")
    assert len(merged) == len(swept) == 2 * (1 + len(KERNEL_METHODS))
    pd.testing.assert_series_equal(merged["accuracy_serial"], merged["accuracy_swept"], check_names=False)


def test_npsvc_table2_cells_equal_accuracy_splits_serially():
    table2_cells_match_the_serial_protocol(client=None)


def sparse_cells_match_the_serial_tables(client) -> None:
    """Every printed column of ``python -m solvers.bench sparse tables`` but the timing, both losses."""
    if not REAL["colon-cancer"].available():
        pytest.skip("colon-cancer is not in the data directory (SOLVERS_DATA)")
    args = parse(["tables", "--datasets", "colon-cancer", "--kappas", "0.05", "1", "--max-iter", "300"])
    swept = sparse_serial_rows(run_sweep(sparse_table_cell_job, sparse_tables_configs(args), client=client).table)
    with threadpool_limits(1):  # as on a Dask worker: the same summation order, the same last digits
        serial = run_tables(args)
    assert len(serial) == 2 * 2 * 5
    pd.testing.assert_frame_equal(swept.drop(columns="time [s]"), serial.drop(columns="time [s]"))


def test_sparse_tables_cells_equal_the_serial_tables():
    sparse_cells_match_the_serial_tables(client=None)


def test_a_missing_sparse_dataset_gives_error_rows_and_the_others_finish(monkeypatch, tmp_path, capsys):
    if not REAL["colon-cancer"].available():
        pytest.skip("colon-cancer is not in the data directory (SOLVERS_DATA)")
    data = tmp_path / "data"  # a data directory that holds colon-cancer and lacks duke
    for name in REAL["colon-cancer"].files:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).symlink_to(REAL["colon-cancer"].paths()[REAL["colon-cancer"].files.index(name)])
    monkeypatch.setenv("SOLVERS_DATA", str(data))
    out = tmp_path / "rows.csv"
    assert bench_main(["sparse", "tables", "--datasets", "duke", "colon-cancer", "--losses", "ls", "--kappas", "0.05",
                       "--methods", "apg+", "--workers", "0", "--csv", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "1 cell(s) of duke failed" in printed and "not found" in printed and "2 jobs, 1 ok, 1 errors" in printed
    assert pd.read_csv(out)["data"].tolist() == ["colon-cancer"]


def test_bench_workers_0_prints_the_table_through_the_executor(capsys, tmp_path):
    out = tmp_path / "cells.csv"
    assert bench_main(["npsvc", "--part", "accuracy", "--datasets", "iris", "--splits", "2", "--workers", "0",
                       "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "12 jobs, 12 ok, 0 errors" in printed and "| K-NPSVC++ |" in printed
    assert len(pd.read_csv(out)) == 12


def test_bench_flags_fail_clearly(capsys):
    assert bench_main(["smm", "--workers", "0"]) == 2
    assert "no table split into jobs" in capsys.readouterr().err
    assert bench_main(["sparse", "rcv1", "--workers", "0"]) == 2
    assert "only `sparse tables` is split into jobs" in capsys.readouterr().err
    assert bench_main(["npsvc", "--datasets", "iris", "--splits", "2", "--scheduler", "nonsense:abc"]) == 2
    assert "not a Dask scheduler address" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert bench_main(["npsvc", "--datasets", "iris", "--scheduler", f"127.0.0.1:{port}"]) == 2
    assert "no Dask scheduler answered" in capsys.readouterr().err
    assert bench_main(["npsvc", "--datasets", "nope", "--workers", "0"]) == 2


def skip_without_libsvm_wine() -> None:
    """The metric bench's "wine" is LIBSVM's wine.scale (Table 3), a file of the data directory."""
    if load_for_bench("wine") is None:
        pytest.skip("wine.scale (the metric bench's wine) is not in the data directory (SOLVERS_DATA)")


def metric_rows_match_the_serial_table(client) -> None:
    """Every column of the metric table that is not a timing: sizes, #λ, the paper's speedup, max ΔM/M."""
    skip_without_libsvm_wine()
    args = parse_metric(["--datasets", "wine", "--max-samples", "18", "--rho", "0.6", "--max-steps", "5",
                         "--trials", "2"])
    configs = [{"dataset": "wine", "trial": t, "method": m, **vars(args)} for t in range(2) for m in method_labels(args)]
    swept_cells = run_sweep(metric_method_job, configs, client=client).table
    assert (swept_cells["status"] == "ok").all(), swept_cells["error"].tolist()
    assert len(swept_cells) == 2 * 6  # one job per method × trial
    swept = pd.DataFrame(summarize_trials("wine", metric_trials(swept_cells, args), args))
    with threadpool_limits(1):
        serial = pd.DataFrame(run_dataset("wine", args))
    timing = ["time", "time_std", "screen", "speedup", "speedup_std"]
    assert len(serial) == 6
    pd.testing.assert_frame_equal(swept.drop(columns=timing), serial.drop(columns=timing))


def test_metric_table_cells_equal_the_serial_table():
    metric_rows_match_the_serial_table(client=None)


def test_bench_metric_workers_0_prints_the_table_and_an_unknown_dataset_row(capsys):
    skip_without_libsvm_wine()
    assert bench_main(["metric", "--datasets", "wine,nonesuch", "--max-samples", "18", "--rho", "0.6",
                       "--max-steps", "4", "--trials", "2", "--workers", "0"]) == 1
    out = capsys.readouterr().out
    assert "RRPB+PGB" in out and "5.37" in out and "(no trial finished: InputError: unknown dataset 'nonesuch'" in out
    assert "24 jobs, 12 ok, 12 errors" in out

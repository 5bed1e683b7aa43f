"""Paper tables through the sweep: the same numbers as the family's serial protocol; the bench flags."""
import socket

import pandas as pd
import pytest

from solvers.bench.__main__ import main as bench_main
from solvers.datasets import load
from solvers.npsvc.bench import KERNEL_METHODS
from solvers.npsvc.experiments import accuracy_splits
from solvers.sweep import run_sweep
from solvers.sweep.tables import npsvc_split_job, npsvc_table2_configs

pytestmark = pytest.mark.xdist_group("dask-cluster")


def table2_cells_match_the_serial_protocol(client) -> None:
    swept = run_sweep(npsvc_split_job, npsvc_table2_configs(["iris"], splits=2, max_train=1000), client=client).table
    serial = accuracy_splits(load("iris"), KERNEL_METHODS, n_splits=2, problem_params={"max_train": 1000},
                             max_iter=200)
    merged = serial.merge(swept, on=["split", "method"], suffixes=("_serial", "_swept"), validate="one_to_one")
    assert len(merged) == len(swept) == 2 * (1 + len(KERNEL_METHODS))
    pd.testing.assert_series_equal(merged["accuracy_serial"], merged["accuracy_swept"], check_names=False)


def test_npsvc_table2_cells_equal_accuracy_splits_serially():
    table2_cells_match_the_serial_protocol(client=None)


def test_bench_workers_0_prints_the_table_through_the_executor(capsys, tmp_path):
    out = tmp_path / "cells.csv"
    assert bench_main(["npsvc", "--part", "accuracy", "--datasets", "iris", "--splits", "2", "--workers", "0",
                       "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "12 jobs, 12 ok, 0 errors" in printed and "| K-NPSVC++ |" in printed
    assert len(pd.read_csv(out)) == 12


def test_bench_flags_fail_clearly(capsys):
    assert bench_main(["sparse", "tables", "--workers", "0"]) == 2
    assert "no table split into jobs" in capsys.readouterr().err
    assert bench_main(["npsvc", "--datasets", "iris", "--splits", "2", "--scheduler", "nonsense:abc"]) == 2
    assert "not a Dask scheduler address" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert bench_main(["npsvc", "--datasets", "iris", "--scheduler", f"127.0.0.1:{port}"]) == 2
    assert "no Dask scheduler answered" in capsys.readouterr().err
    assert bench_main(["npsvc", "--datasets", "nope", "--workers", "0"]) == 2

"""python -m solvers.sweep: a grid from flags, the table written, errors before any work with exit 2."""
import subprocess
import sys

import pandas as pd
import pytest

from solvers.sweep.__main__ import main

pytestmark = pytest.mark.xdist_group("dask-cluster")


def test_a_grid_from_the_command_line_writes_table_and_histories(tmp_path, capsys):
    table_path, history_path = tmp_path / "t.parquet", tmp_path / "h.csv"
    code = main(["npsvc", "--datasets", "iris", "no-such-set", "--methods", "lstsvm", "--seeds", "0", "1",
                 "--param", "c=0.5,2", "--set", "max_iter=20", "--workers", "0",
                 "--out", str(table_path), "--histories", str(history_path)])
    assert code == 1  # the missing dataset's rows are errors; the others ran
    table = pd.read_parquet(table_path)
    assert len(table) == 8 and (table["status"] == "ok").sum() == 4
    assert set(table.loc[table["status"] == "error", "dataset"]) == {"no-such-set"}
    assert set(pd.read_csv(history_path)["job"]) == set(table.loc[table["status"] == "ok", "job"])
    assert "[8/8]" in capsys.readouterr().err


def test_bad_grids_exit_2_before_any_work(capsys):
    assert main(["npsvc", "--datasets", "iris", "--methods", "nope", "--workers", "0"]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
    assert main(["npsvc", "--datasets", "iris", "--methods", "lstsvm", "--param", "bogus=1,2", "--workers", "0"]) == 2
    assert main(["npsvc", "--datasets", "iris", "--methods", "lstsvm", "--set", "max_iter", "--workers", "0"]) == 2
    assert main(["nofamily", "--datasets", "iris", "--methods", "x", "--workers", "0"]) == 2


def test_help_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "solvers.sweep", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "--scheduler" in done.stdout

"""The sweep's grid, rows and faults in the serial in-process mode (no cluster), and input checks."""
import socket

import pandas as pd
import pytest

from solvers.core import InputError
from solvers.sweep import check_address, check_solve_configs, executor, expand, parse_axis, run_sweep, solve_job

from .toy_jobs import fails_on_three, noisy_square, returns_a_config_name, weighted_sum

pytestmark = pytest.mark.xdist_group("dask-cluster")


def test_expand_is_the_cartesian_product_in_order():
    configs = expand({"a": [1, 2], "b": ["x", "y", "z"]}, fixed={"c": 0})
    assert len(configs) == 6
    assert configs[0] == {"c": 0, "a": 1, "b": "x"} and configs[-1] == {"c": 0, "a": 2, "b": "z"}
    with pytest.raises(InputError, match="no values"):
        expand({"a": []})
    with pytest.raises(InputError, match="both an axis and a fixed"):
        expand({"a": [1]}, fixed={"a": 2})
    with pytest.raises(InputError, match="list of values"):
        expand({"a": "abc"})


def test_parse_axis_reads_numbers_and_words():
    assert parse_axis("c=0.1,1,1e2") == ("c", [0.1, 1, 100.0])
    assert parse_axis("kernel=rbf,linear") == ("kernel", ["rbf", "linear"])
    assert parse_axis("bias=true") == ("bias", [True])
    with pytest.raises(InputError, match="NAME=V1,V2"):
        parse_axis("c")


def test_serial_rows_are_tidy_and_reproducible():
    configs = expand({"x": [1, 2, 3], "seed": [0, 1]})
    first, second = (run_sweep(noisy_square, configs, client=None).table for _ in range(2))
    assert list(first.columns[:6]) == ["job", "x", "seed", "status", "seconds", "error"]
    assert (first["status"] == "ok").all() and first["job"].tolist() == list(range(6))
    pd.testing.assert_series_equal(first["value"], second["value"])  # same seed, same number
    assert first.loc[0, "value"] != first.loc[1, "value"]  # different seeds differ


def test_a_job_that_raises_is_one_error_row_and_the_rest_go_on():
    table = run_sweep(fails_on_three, expand({"x": [1, 2, 3, 4]})).table
    assert table["status"].tolist() == ["ok", "ok", "error", "ok"]
    assert "x = 3 is refused" in table.loc[2, "error"] and table.loc[3, "value"] == 4.0


def test_a_metric_named_like_the_configuration_is_an_error_row():
    table = run_sweep(returns_a_config_name, [{"x": 2}]).table
    assert table.loc[0, "status"] == "error" and "rename the metric" in table.loc[0, "error"]


def test_stop_keeps_the_finished_rows_and_marks_the_rest_cancelled():
    seen = []
    result = run_sweep(noisy_square, expand({"x": range(6)}), on_row=lambda row, done, total: seen.append(row)
                       or done < 2)
    assert result.table["status"].tolist() == ["ok", "ok"] + ["cancelled"] * 4
    assert result.cancelled == 4 and [r["job"] for r in seen] == [0, 1]
    assert result.table.loc[1, "value"] == pytest.approx(seen[1]["value"])


def test_data_shipped_with_the_sweep_reaches_every_job():
    data = [1.0, 2.0, 3.0]
    table = run_sweep(weighted_sum, expand({"power": [0, 1, 2]}), data=data).table
    assert table["value"].tolist() == [6.0, 8.0, 2.0 + 12.0]


def test_csv_and_parquet_round_trip(tmp_path):
    configs = expand({"dataset": ["iris"], "method": ["twsvm", "lstsvm"]}, fixed={"family": "npsvc", "max_iter": 5})
    result = run_sweep(solve_job, configs, histories=True)
    result.write(tmp_path / "t.csv")
    result.write(str(tmp_path / "t.parquet"))
    result.write_histories(str(tmp_path / "h.parquet"))
    back = pd.read_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(back, result.table)
    assert pd.read_csv(tmp_path / "t.csv")["method"].tolist() == ["twsvm", "lstsvm"]
    histories = pd.read_parquet(tmp_path / "h.parquet")
    assert set(histories["job"]) == {0, 1} and "objective" in histories


def test_solve_configs_are_checked_before_any_work():
    good = {"family": "npsvc", "dataset": "iris", "method": "knpsvc"}
    check_solve_configs([good, {**good, "seed": 3, "max_iter": 10}])
    with pytest.raises(InputError, match="lacks method"):
        check_solve_configs([{"family": "npsvc", "dataset": "iris"}])
    with pytest.raises(InputError, match="unknown method"):
        check_solve_configs([{**good, "method": "nope"}])
    with pytest.raises(InputError, match="no parameter 'bogus'"):
        check_solve_configs([{**good, "bogus": 1}])
    with pytest.raises(InputError, match="max_iter"):
        check_solve_configs([{**good, "max_iter": 0}])


def test_a_missing_dataset_is_an_error_row():
    configs = [{"family": "npsvc", "dataset": name, "method": "lstsvm"} for name in ("iris", "no-such-set")]
    table = run_sweep(solve_job, configs).table
    assert table["status"].tolist() == ["ok", "error"] and "unknown dataset 'no-such-set'" in table.loc[1, "error"]


def test_bad_inputs_to_the_executor():
    with pytest.raises(InputError, match="grid is empty"):
        run_sweep(noisy_square, [])
    with pytest.raises(InputError, match="retries"):
        with executor(workers=1, retries=-1):
            pass
    with pytest.raises(InputError, match="not both"):
        with executor(workers=2, scheduler="tcp://127.0.0.1:8786"):
            pass
    with pytest.raises(InputError, match="whole number"):
        with executor(workers=-1):
            pass
    with executor(workers=0) as client:
        assert client is None


@pytest.mark.parametrize("address", ["nonsense:abc", "tcp://", ""])
def test_a_malformed_address_is_refused(address):
    with pytest.raises(InputError, match="not a Dask scheduler address"):
        check_address(address)


def test_an_address_with_no_scheduler_is_a_clear_error_before_any_work():
    with socket.socket() as s:  # a port nobody listens on: bind, note, close
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(InputError, match="no Dask scheduler answered"):
        with executor(scheduler=f"127.0.0.1:{port}", timeout=2):
            pytest.fail("the block must not run")

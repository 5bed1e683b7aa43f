"""The recorder's stopping rules and timing, Param specs, validation messages."""
import argparse
import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

from solvers.core import (HistoryRecorder, InputError, Method, Param, add_cli_flags, as_pm_one, check_array,
                          check_labels, check_memory, params_from_cli, params_markdown, solve_with,
                          validate_params)


def loop(rec, values, measure="residual"):
    for k, v in enumerate(values):
        status = rec.record(k, objective=float(v), **{measure: float(v)})
        if status:
            return status, k
    return None, len(values)


def test_statuses():
    assert loop(HistoryRecorder(tol=1e-3, max_iter=100), [1, 0.1, 1e-4]) == ("converged", 2)
    assert loop(HistoryRecorder(tol=0, max_iter=3), [1, 1, 1, 1, 1]) == ("max_iter", 3)
    assert loop(HistoryRecorder(tol=0, max_iter=10), [1, math.nan]) == ("diverged", 1)
    assert loop(HistoryRecorder(tol=0, max_iter=10), [1, 2, 1e14]) == ("diverged", 2)
    assert loop(HistoryRecorder(tol=0, max_iter=10, callback=lambda row: row["iter"] < 2), [1] * 9) == ("stopped", 2)


def test_per_iteration_arrays_of_info_become_history_columns():
    rec = HistoryRecorder(tol=0.0, max_iter=2)
    for k in range(3):
        if rec.record(k, objective=float(k), residual=1.0):
            break
    rows = np.arange(6.0).reshape(3, 2)
    res = rec.result({}, logged={"a": rows, "short": np.zeros((2, 2))}, b=rows[:, :1], flat=np.zeros(3), n=4)
    assert set(res.per_iteration_arrays()) == {"a", "b"}
    table = res.history_with_arrays()
    np.testing.assert_array_equal(table[["a_1", "a_2", "b_1"]].to_numpy(), np.c_[rows, rows[:, 0]])
    assert list(table.columns[:len(res.history.columns)]) == list(res.history.columns)
    plain = rec.result({})
    assert plain.history_with_arrays() is plain.history


def test_time_limit_and_callback_time_is_excluded():
    rec = HistoryRecorder(tol=0, max_iter=10**6, time_limit=0.05)
    status = None
    while not status:
        time.sleep(0.01)
        status = rec.record(len(rec.rows), objective=1.0, residual=1.0)
    assert status == "time_limit"

    slow = HistoryRecorder(tol=0, max_iter=3, callback=lambda row: time.sleep(0.05))
    loop(slow, [1, 1, 1, 1])
    with slow.excluded():
        time.sleep(0.05)
    result = slow.result({})
    assert result.info["time"] < 0.05  # 0.2 s of callbacks and 0.05 s of excluded work are not solver time
    assert list(result.history.columns[:3]) == ["iter", "time", "objective"]
    assert result.history["time"].is_monotonic_increasing


def test_params_validate_coerce_and_refuse():
    specs = [Param("s", 5, int, low=1), Param("lam", 0.1, float, low=0, low_strict=True, log=True),
             Param("loss", "ls", str, choices=("ls", "logistic")), Param("warm", False, bool)]
    assert validate_params(specs, {"s": "7", "warm": "yes"}) == {"s": 7, "lam": 0.1, "loss": "ls", "warm": True}
    for bad in ({"s": 0}, {"s": 2.5}, {"lam": 0}, {"lam": math.inf}, {"loss": "hinge"}, {"nope": 1}):
        with pytest.raises(InputError):
            validate_params(specs, bad)
    with pytest.raises(InputError, match="0 < lam"):
        validate_params(specs, {"lam": -1})
    parser = argparse.ArgumentParser()
    add_cli_flags(parser, specs)
    assert params_from_cli(parser.parse_args(["--s", "3", "--loss", "logistic"]), specs)["s"] == 3
    assert "`lam`" in params_markdown(specs) and "log scale" in params_markdown(specs)
    with pytest.raises(TypeError):
        Param("x", -1.0, log=True, low=-2)


def test_solve_with_checks_method_params_and_stopping():
    seen = {}
    run = lambda problem, **kw: seen.update(kw)
    methods = {"m": Method("m", "M", run, (Param("step", 1.0, low=0, low_strict=True),))}
    solve_with(methods, None, "m", tol=1e-6, max_iter=10)
    assert seen["step"] == 1.0 and seen["max_iter"] == 10
    with pytest.raises(InputError, match="unknown method"):
        solve_with(methods, None, "x", tol=1e-6, max_iter=10)
    with pytest.raises(InputError):
        solve_with(methods, None, "m", tol=-1, max_iter=10)
    with pytest.raises(InputError):
        solve_with(methods, None, "m", tol=1e-6, max_iter=10, step=0)


def test_validation_messages():
    with pytest.raises(InputError, match="NaN"):
        check_array([[1.0, np.nan]])
    with pytest.raises(InputError, match="2-D"):
        check_array(np.ones(3))
    with pytest.raises(InputError, match="sparse"):
        check_array(sp.eye(3))
    assert sp.issparse(check_array(sp.eye(3), allow_sparse=True))
    with pytest.raises(InputError, match="exactly 2"):
        check_labels([0, 1, 2], n_classes=2)
    with pytest.raises(InputError, match="continuous"):
        check_labels([0.5, 1.0])
    with pytest.raises(InputError, match="at least 2 per class"):
        check_labels([0, 0, 1], min_per_class=2)
    assert list(as_pm_one(["b", "a", "b"])[1]) == [1, -1, 1]
    for bad in (np.array(["a", None], dtype=object), np.array([1, "a"], dtype=object), np.array([1.5, 2.0], dtype=object)):
        with pytest.raises(InputError, match="labels"):
            check_labels(bad)
    with pytest.raises(InputError, match="GiB"):
        check_memory(3 * 2**30, "the kernel matrix", budget=2**30)
    # a footprint just over the budget is never reported as equal to it
    with pytest.raises(InputError, match=r"about 11\.84 GiB, more than the 11\.76 GiB budget"):
        check_memory(11.84 * 2**30, "the kernel matrix", budget=int(11.76 * 2**30))

"""The switchable clock: wall seconds by default, this process's CPU seconds inside use_clock("cpu")."""
import time

import pytest

from solvers.core import HistoryRecorder, clock_name, use_clock


def _recorded_seconds_around_a_sleep(seconds: float) -> float:
    rec = HistoryRecorder(tol=0.0, max_iter=10)
    rec.restart_clock()
    time.sleep(seconds)
    rec.record(0, objective=1.0)
    return rec.rows[-1]["time"]


def test_wall_clock_counts_waiting():
    assert clock_name() == "wall"
    assert _recorded_seconds_around_a_sleep(0.2) >= 0.2


def test_cpu_clock_does_not_count_waiting():
    # Sleeping uses no CPU: the recorder must see far less than the wall time.
    with use_clock("cpu"):
        assert clock_name() == "cpu"
        assert _recorded_seconds_around_a_sleep(0.3) < 0.15
    assert clock_name() == "wall"


def test_clock_restored_after_an_error_and_unknown_names_rejected():
    with pytest.raises(RuntimeError), use_clock("cpu"):
        raise RuntimeError("boom")
    assert clock_name() == "wall"
    with pytest.raises(ValueError, match="unknown clock"):
        with use_clock("gpu"):
            pass

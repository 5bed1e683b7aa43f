"""The clock that solver histories and benchmarks read.

Wall seconds are what a user waits for and stay the default. On a shared,
loaded machine the wall clock also counts the time other jobs hold the cores,
so benchmarks can switch to this process's CPU seconds (with one BLAS thread,
the work done) for the duration of a block::

    with use_clock("cpu"):
        result = solve(...)

Every ``HistoryRecorder`` and benchmark timer calls :func:`now`, so the switch
reaches them all without patching the ``time`` module.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}

_current = ["wall"]


def now() -> float:
    """Seconds on the clock in use (only differences are meaningful)."""
    return CLOCKS[_current[0]]()


def clock_name() -> str:
    """``"wall"`` or ``"cpu"``: the clock :func:`now` reads."""
    return _current[0]


@contextmanager
def use_clock(name: str) -> Iterator[None]:
    """Read ``name`` ("wall" or "cpu") inside the block; restore the previous clock after."""
    if name not in CLOCKS:
        raise ValueError(f"unknown clock {name!r}; expected one of {sorted(CLOCKS)}")
    previous = _current[0]
    _current[0] = name
    try:
        yield
    finally:
        _current[0] = previous

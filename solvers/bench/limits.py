"""A hard wall-time cap for a benchmark command, so that a run on a borrowed machine (a GPU lease) ends in time
even inside a solve that checks its own time limit only between iterations."""
from __future__ import annotations

import signal
from contextlib import contextmanager


@contextmanager
def hard_cap(seconds: float):
    """Raise TimeoutError in the main thread once ``seconds`` of wall time have passed (SIGALRM; at least 1 ms,
    since a zero timer would be no timer)."""
    def interrupt(signum, frame):
        raise TimeoutError(f"stopped by the hard cap of {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

"""Memory: giving what a process frees back to the operating system (glibc's ``malloc_trim``), and sizing what a
cache holds (``approx_bytes``).

glibc keeps what a process frees in its heaps for later use: a lecture server and its workers, which unpickle and
free a class's arrays all day (an SMM problem is 22 MB), then hold hundreds of MB that no session uses. Trimming
after a run, and in the server now and then, returns the free pages (in the middle of a heap too) for a few ms.
Elsewhere (macOS, musl) there is nothing to call and the functions do nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import itertools
import sys
from typing import Any

import pandas as pd
import scipy.sparse as sp


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> bool:
    """True when the C library gave memory back to the operating system."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def approx_bytes(obj: Any, depth: int = 6) -> int:
    """About how many bytes ``obj`` holds, for bounding a cache: arrays and tensors by their buffers, data frames
    by pandas' deep count, containers and plain objects by their contents (``depth`` levels down). A long list of
    numbers (a Plotly figure's coordinates) counts 32 bytes an item, a float object and its pointer, unvisited."""
    if isinstance(obj, (str, bytes, bytearray)):
        return sys.getsizeof(obj)
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True).sum())
    if isinstance(obj, pd.Series):
        return int(obj.memory_usage(deep=True))
    nbytes = getattr(obj, "nbytes", None)  # numpy arrays, torch tensors
    if isinstance(nbytes, int):
        return nbytes + 128
    if sp.issparse(obj):
        return sum(approx_bytes(getattr(obj, name, None), 0) for name in ("data", "indices", "indptr", "row", "col"))
    if depth <= 0:
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(approx_bytes(k, depth - 1) + approx_bytes(v, depth - 1)
                                        for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        if len(obj) > 64 and all(isinstance(v, (int, float)) for v in itertools.islice(obj, 8)):
            return sys.getsizeof(obj) + 32 * len(obj)
        return sys.getsizeof(obj) + sum(approx_bytes(v, depth - 1) for v in obj)
    fields = getattr(obj, "__dict__", None)
    if fields is not None and not isinstance(obj, type):
        return sys.getsizeof(obj) + approx_bytes(fields, depth - 1)
    return sys.getsizeof(obj)

"""Giving freed memory back to the operating system (glibc's ``malloc_trim``).

glibc keeps what a process frees in its heaps for later use: a lecture server and its workers, which unpickle and
free a class's arrays all day (an SMM problem is 22 MB), then hold hundreds of MB that no session uses. Trimming
after a run, and in the server now and then, returns the free pages (in the middle of a heap too) for a few ms.
Elsewhere (macOS, musl) there is nothing to call and the functions do nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


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

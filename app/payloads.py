"""Runs shipped to worker processes without their large arrays, which each worker receives once.

A page's run is a closure over its problem, and its samples (21.6 MB for SMM's default 3000 × 30 × 30) went to
a worker with every run: pickled, sent and unpickled on each notch of a slider that changed only C. Here each
C-contiguous numeric array of at least ``SHARED_ARRAY_BYTES`` is pickled as a token naming its content (SHA-256
of its bytes, its dtype and shape) and returned beside the payload; the pool sends a worker the arrays it does
not hold yet, and the worker's unpickler puts the array it holds back, read-only (``hold``), not a copy: no
solver writes into its data (tests/app/test_payloads.py runs every method on read-only arrays), and a copy of
SMM's samples cost each run 21.6 MB of fresh pages, 0.04–0.08 CPU s before its first iteration.
"""
from __future__ import annotations

import hashlib
import io
import pickle
import threading
import weakref
from typing import Any, Callable

import cloudpickle
import numpy as np

SHARED_ARRAY_BYTES = 1 << 20  # smaller arrays travel inside the payload


class _TokenMemo:
    """Tokens of the arrays hashed lately, by identity, so that a page's several runs over the same problem hash
    its samples once. An entry ends with its array (a weak reference), so an id reused later cannot match."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[int, tuple[weakref.ref, str]] = {}

    def token(self, array: np.ndarray) -> str:
        with self._lock:
            hit = self._tokens.get(id(array))
            if hit is not None and hit[0]() is array:
                return hit[1]
        digest = hashlib.sha256(array).hexdigest()  # the C-contiguous buffer itself, no copy
        token = f"{digest}:{array.dtype.str}:{'x'.join(map(str, array.shape))}"
        with self._lock:
            key = id(array)
            self._tokens[key] = (weakref.ref(array, lambda _, key=key: self._forget(key)), token)
        return token

    def _forget(self, key: int) -> None:
        with self._lock:
            self._tokens.pop(key, None)


_memo = _TokenMemo()


def shareable(obj: Any) -> bool:
    return (type(obj) is np.ndarray and obj.nbytes >= SHARED_ARRAY_BYTES and obj.flags.c_contiguous
            and not obj.dtype.hasobject)


class _SharingPickler(cloudpickle.Pickler):
    def __init__(self, file: io.BytesIO, arrays: dict[str, np.ndarray]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays = arrays

    def persistent_id(self, obj: Any) -> str | None:
        if not shareable(obj):
            return None
        token = _memo.token(obj)
        self.arrays[token] = obj
        return token


def dumps(run: Callable) -> tuple[bytes, dict[str, np.ndarray]]:
    """The pickled run without its large arrays, and those arrays by token."""
    buffer, arrays = io.BytesIO(), {}
    _SharingPickler(buffer, arrays).dump(run)
    return buffer.getvalue(), arrays


def hold(array: np.ndarray) -> np.ndarray:
    """``array`` as a worker keeps it for the runs that refer to it: read-only, so that a run cannot change what
    the next run of the same worker reads."""
    array.flags.writeable = False
    return array


class _SharingUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, held: dict[str, np.ndarray]) -> None:
        super().__init__(file)
        self.held = held

    def persistent_load(self, token: str) -> np.ndarray:
        return self.held[token]


def loads(payload: bytes, held: dict[str, np.ndarray]) -> Any:
    """The run, its large arrays those of ``held`` (token → array, what this worker was sent and keeps)."""
    return _SharingUnpickler(io.BytesIO(payload), held).load()

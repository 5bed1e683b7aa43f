"""The lab's in-memory caches (finished runs, prepared figures, live frames): least recently used entries dropped
beyond a number of entries and beyond a number of bytes.

A count alone let one student's heavy configuration grow the server for good: a Multi-task run of 5000 iterations
holds ≈ 2 MB and its figures ≈ 6 MB, against ≈ 0.1 MB a run at the lesson's settings, so 96 of them fitted in the
run store and their figures in the figure store long after the class had moved on (docs/serving.md). Each entry is
sized once, when stored; the newest entry stays even when it alone exceeds the bound (a page that just computed it
is about to read it back).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from app.memory import approx_bytes


class LRUStore(MutableMapping):
    """A thread-safe mapping (sessions' script threads and the worker pool's reader thread share it) bounded by
    ``max_items`` entries and ``max_bytes`` bytes, each entry's size given by ``size``. Reading an entry
    (``store[key]``, ``get``) makes it the most recently used."""

    def __init__(self, max_items: int, max_bytes: int, size: Callable[[Any], int] = approx_bytes) -> None:
        self.max_items, self.max_bytes, self._size = max_items, max_bytes, size
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0

    def __getitem__(self, key: Any) -> Any:
        with self._lock:
            value, _ = self._entries[key]
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key: Any, value: Any) -> None:
        size = self._size(value)  # outside the lock: sizing a large result takes a few ms
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._entries[key] = (value, size)
            self.nbytes += size
            while len(self._entries) > 1 and (len(self._entries) > self.max_items or self.nbytes > self.max_bytes):
                self.nbytes -= self._entries.popitem(last=False)[1][1]

    def __delitem__(self, key: Any) -> None:
        with self._lock:
            self.nbytes -= self._entries.pop(key)[1]

    def __iter__(self) -> Iterator[Any]:
        with self._lock:
            return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries  # no reordering: asking is not using

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.nbytes = 0

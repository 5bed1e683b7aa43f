"""app/ui/lru.py and app/memory.approx_bytes: the lab's caches forget their least recently used entries beyond a
count and beyond a size, and sizes are what the entries' buffers hold."""
import threading

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from app.memory import approx_bytes
from app.ui.lru import LRUStore
from solvers.core import Result

MB = 1 << 20


def test_the_least_recently_used_entry_goes_first_and_reading_counts_as_use():
    store = LRUStore(max_items=3, max_bytes=10**9)
    for key in "abc":
        store[key] = key
    assert store["a"] == "a"  # now b is the least recently used
    store["d"] = "d"
    assert list(store) == ["c", "a", "d"]
    assert "b" not in store and store.get("b") is None


def test_the_byte_bound_drops_old_entries_and_keeps_the_count_of_bytes():
    store = LRUStore(max_items=100, max_bytes=10, size=len)
    store["a"], store["b"] = "xxxx", "yyyy"
    assert store.nbytes == 8
    store["c"] = "zzzz"  # 12 > 10: a goes
    assert list(store) == ["b", "c"] and store.nbytes == 8
    store["b"] = "y"  # replacing an entry counts its new size only
    assert store.nbytes == 5
    del store["c"]
    assert store.nbytes == 1 and len(store) == 1
    store.clear()
    assert store.nbytes == 0 and len(store) == 0


def test_an_entry_larger_than_the_bound_stays_alone_until_the_next_one():
    """The page that just computed it reads it back on its next rerun: dropping it at once would compute it again."""
    store = LRUStore(max_items=100, max_bytes=10, size=len)
    store["small"] = "ab"
    store["huge"] = "x" * 50
    assert list(store) == ["huge"] and store.nbytes == 50
    store["next"] = "cd"
    assert list(store) == ["next"] and store.nbytes == 2


def test_threads_storing_at_once_leave_a_consistent_count():
    store = LRUStore(max_items=50, max_bytes=400, size=len)

    def fill(offset):
        for i in range(500):
            store[(offset, i)] = "x" * (1 + i % 7)
            store.get((offset, i - 3))

    threads = [threading.Thread(target=fill, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) <= 50 and store.nbytes <= 400
    assert store.nbytes == sum(len(store[k]) for k in list(store))


def test_sizes_are_the_buffers_an_object_holds():
    array = np.zeros((1000, 125))  # 1 MB
    assert array.nbytes <= approx_bytes(array) <= array.nbytes + 1024
    frame = pd.DataFrame({"a": np.arange(131072, dtype=float)})
    assert approx_bytes(frame) == frame.memory_usage(deep=True).sum()
    matrix = sp.random(1000, 1000, density=0.01, format="csr", random_state=0)
    held = matrix.data.nbytes + matrix.indices.nbytes + matrix.indptr.nbytes
    assert held <= approx_bytes(matrix) <= held + 1024
    numbers = [float(i) for i in range(10_000)]  # float objects and their pointers
    assert 24 * len(numbers) <= approx_bytes(numbers) <= 48 * len(numbers)
    result = Result({"W": array}, frame, "converged", {"spectra": {"eig": array}})
    assert approx_bytes(result) == pytest.approx(2 * array.nbytes + approx_bytes(frame), rel=0.01)


def test_the_run_store_counts_what_each_run_holds():
    """A heavy configuration's runs push older ones out instead of growing the server (docs/serving.md)."""
    from app.ui import runs

    store = runs._run_store()
    store.clear()
    try:
        heavy = runs.STORE_BYTES // 3 + MB
        for i in range(4):
            runs.store_result(f"heavy{i}", Result({"w": np.zeros(heavy // 8)}, pd.DataFrame(), "converged"))
        assert list(store) == ["heavy2", "heavy3"] and store.nbytes <= runs.STORE_BYTES
        assert runs.cached_result("heavy0") is None and runs.cached_result("heavy3") is not None
    finally:
        store.clear()

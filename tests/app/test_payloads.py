"""Runs pickled without their large arrays (app/payloads.py): what travels, what comes back, and that a token
names content, not an object."""
from __future__ import annotations

import numpy as np

from app import payloads

BIG = payloads.SHARED_ARRAY_BYTES // 8  # float64 elements of the smallest shared array


def test_a_large_array_travels_beside_the_payload_and_comes_back_as_one_copy():
    X = np.arange(2 * BIG, dtype=float)
    small = np.arange(10.0)
    pair = {"X": X, "again": X, "small": small}
    payload, arrays = payloads.dumps(pair)
    assert len(payload) < X.nbytes // 100 and list(arrays.values())[0] is X
    back = payloads.loads(payload, dict(arrays))
    assert back["X"] is back["again"] and back["X"] is not X  # one copy, shared as in the original
    np.testing.assert_array_equal(back["X"], X)
    np.testing.assert_array_equal(back["small"], small)


def test_tokens_name_the_bytes_dtype_and_shape():
    a = np.ones(BIG)
    (token_a,) = payloads.dumps(a)[1]
    (token_copy,) = payloads.dumps(a.copy())[1]
    (token_shape,) = payloads.dumps(a.reshape(2, -1))[1]
    (token_dtype,) = payloads.dumps(a.view(np.int64))[1]
    b = a.copy()
    b[-1] = 2.0
    (token_b,) = payloads.dumps(b)[1]
    assert token_a == token_copy
    assert len({token_a, token_shape, token_dtype, token_b}) == 4


def test_small_strided_and_object_arrays_stay_inside_the_payload():
    strided = np.ones((BIG, 2))[:, 0]
    objects = np.empty(BIG, dtype=object)
    for value in (np.ones(BIG // 2), strided, objects):
        assert payloads.dumps(value)[1] == {}

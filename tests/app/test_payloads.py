"""Runs pickled without their large arrays (app/payloads.py): what travels, what comes back, and that a token
names content, not an object."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from app import payloads
from solvers.cli import build_parser, load_data, split_params
from solvers.core import params_from_cli, stopping_params
from tests.test_cli_every_method import CASES, TINY_DATA, TINY_PROBLEM

BIG = payloads.SHARED_ARRAY_BYTES // 8  # float64 elements of the smallest shared array


def test_a_large_array_travels_beside_the_payload_and_comes_back_as_the_one_held():
    X = np.arange(2 * BIG, dtype=float)
    small = np.arange(10.0)
    pair = {"X": X, "again": X, "small": small}
    payload, arrays = payloads.dumps(pair)
    assert len(payload) < X.nbytes // 100 and list(arrays.values())[0] is X
    held = {token: array.copy() for token, array in arrays.items()}  # what the worker received
    back = payloads.loads(payload, held)
    assert back["X"] is back["again"] is held[next(iter(held))]  # one array, shared as in the original
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


def test_a_run_gets_the_array_its_worker_holds_read_only_not_a_copy():
    X = np.arange(2 * BIG, dtype=float)
    payload, arrays = payloads.dumps({"X": X})
    held = {token: payloads.hold(array.copy()) for token, array in arrays.items()}
    back = payloads.loads(payload, held)
    assert back["X"] is next(iter(held.values()))
    with pytest.raises(ValueError, match="read-only"):
        back["X"][0] = 1.0


@pytest.mark.parametrize(("family", "method"), CASES)
def test_every_method_solves_from_read_only_arrays_as_from_its_own(family, method, monkeypatch):
    """A worker hands a run the arrays it holds, read-only: no solver may write into its data. Every array of the
    problem is shared here (``SHARED_ARRAY_BYTES`` = 0), and the run must finish as the same run on writable
    arrays does."""
    fam = importlib.import_module(f"solvers.{family}")
    parser = build_parser(fam, family, method)
    args, extra = parser.parse_known_args([*TINY_PROBLEM.get(family, []), "--max-iter", "5", *TINY_DATA[family]])
    problem_params, method_params = split_params(args, fam, method)
    problem = fam.make_problem(load_data(args, extra, family, parser), **problem_params)
    stopping = params_from_cli(args, stopping_params(fam.METHODS[method]))

    def run(callback):
        return fam.solve(problem, method, callback=callback, **stopping, **method_params)

    monkeypatch.setattr(payloads, "SHARED_ARRAY_BYTES", 0)
    payload, arrays = payloads.dumps(run)
    assert arrays  # the problem's arrays travel beside the payload, so the run reads them read-only
    held = {token: payloads.hold(array.copy()) for token, array in arrays.items()}
    shared = payloads.loads(payload, held)(lambda row: None)
    own = run(lambda row: None)
    assert shared.status == own.status
    np.testing.assert_allclose(shared.history["objective"].to_numpy(), own.history["objective"].to_numpy(),
                               rtol=1e-9)

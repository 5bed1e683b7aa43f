"""AS+ALM (Algorithm 3) against Warm+ALM: the same solution at every C, full-data KKT certificates."""
from __future__ import annotations

import numpy as np
import pytest

from solvers.core import InputError
from solvers.smm.path import solve_path
from solvers.smm.problem import build_problem
from solvers.smm.synthetic import make_smm_synthetic


@pytest.fixture(scope="module")
def synthetic_problem():
    ds = make_smm_synthetic(n_train=400, p=5, q=6, seed=3)
    train = ~ds.test_mask
    return build_problem(ds.X[train], ds.y[train], C=1.0, tau=0.05), ds


@pytest.mark.parametrize("eps_hat,d_max", [(0.05, 500), (0.0, 1)])
def test_as_path_equals_warm_path_at_every_C(synthetic_problem, eps_hat, d_max):
    problem, ds = synthetic_problem
    Cs = np.logspace(-1, 2, 6)
    tol = 1e-7
    test = ds.test_mask
    warm = solve_path(problem, Cs, method="warm", tol=tol, X_test=ds.X[test], y_test=ds.y[test])
    sieved = solve_path(problem, Cs, method="as", tol=tol, eps_hat=eps_hat, d_max=d_max, max_rounds=1000,
                        X_test=ds.X[test], y_test=ds.y[test])
    tw, ta = warm.table, sieved.table
    assert len(tw) == len(ta) == len(Cs)
    rel = np.abs(tw["objective"] - ta["objective"]) / (1 + np.abs(tw["objective"]))
    assert rel.max() <= 10 * tol
    for (Ww, _), (Wa, _) in zip(warm.solutions, sieved.solutions):
        assert np.linalg.norm(Ww - Wa) / (1 + np.linalg.norm(Ww)) <= 1e-4
    assert ta["kkt_full"].max() <= 10 * tol and tw["kkt_full"].max() <= 10 * tol
    assert (ta["n_reduced"].iloc[1:] < problem.n).all()  # the sieve really reduced the problem
    assert (ta["rounds"] >= 1).all()
    np.testing.assert_allclose(ta["test_acc"], tw["test_acc"], atol=0.01)


def test_sieve_adds_violators_until_none_is_left():
    """Noisy labels and ε̂ = 0, d_max = 1: left-out samples do violate (44), rounds add them one at a
    time, and the accepted solution still equals the full-data one (Theorem 5.1)."""
    from .conftest import make_instance

    X, y = make_instance(100, 4, 5, seed=0, flip=0.2)
    problem = build_problem(X, y, C=1.0, tau=0.1)
    grid = [0.05, 0.5, 5.0, 50.0]
    sieved = solve_path(problem, grid, method="as", tol=1e-8, eps_hat=0.0, d_max=1, max_rounds=500).table
    warm = solve_path(problem, grid, method="warm", tol=1e-8).table
    assert sieved["rounds"].iloc[1:].max() >= 3
    assert (sieved["max_reduced"] - sieved["n_reduced"] > 0).any()  # the set grew within a grid point
    assert sieved["kkt_full"].max() <= 1e-7
    rel = np.abs(sieved["objective"] - warm["objective"]) / (1 + warm["objective"])
    assert rel.max() <= 1e-7


def test_path_columns_and_support_counts(synthetic_problem):
    problem, _ = synthetic_problem
    table = solve_path(problem, [0.1, 1.0, 10.0], method="as", tol=1e-6).table
    for col in ("C", "time", "cum_time", "rounds", "n_reduced", "j1", "n_sm", "n_asm", "n_nsm", "rank",
                "sm_frac_reduced", "sm_frac_full", "train_acc", "kkt_full"):
        assert col in table
    assert (table["n_sm"] + table["n_nsm"] == problem.n).all()
    assert (table["n_asm"] <= table["n_sm"]).all()
    assert table["n_sm"].is_monotonic_decreasing  # Fig. 1: #SM falls as C grows


def test_path_refuses_bad_grids(synthetic_problem):
    problem, _ = synthetic_problem
    for grid in ([1.0, 0.5], [], [0.0, 1.0], [1.0, np.nan]):
        with pytest.raises(InputError):
            solve_path(problem, grid)
    with pytest.raises(InputError):
        solve_path(problem, [1.0], method="cold")


def test_path_callback_stops():
    X = np.random.default_rng(0).standard_normal((30, 2, 3))
    y = np.where(X[:, 0, 0] > 0, 1.0, -1.0)
    result = solve_path(build_problem(X, y), [0.1, 1, 10], callback=lambda row: False)
    assert result.status == "stopped" and len(result.table) == 1


def test_the_margin_of_a_zero_W_is_infinite_not_2e300():
    from solvers.smm.path import margin_width

    assert margin_width(np.zeros((3, 2))) == np.inf
    assert margin_width(np.array([[3.0, 4.0]])) == pytest.approx(0.4)

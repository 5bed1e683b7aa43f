"""Bad input is refused before any work, and the stopping limits hold exactly (GUIDE: contracts)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from solvers import metric
from solvers.core import InputError, clock
from solvers.metric.problem import MAX_FULL_DIM_CPU, make_triplet_problem


@pytest.mark.parametrize("max_iter, refresh", [(5, 10), (3, 7)])
def test_active_set_stops_exactly_at_max_iter(iris_tiny, max_iter, refresh):
    res = metric.solve(iris_tiny, "active-set", tol=1e-15, max_iter=max_iter, lam=10.0, refresh=refresh)
    assert res.status == "max_iter"
    assert res.info["n_iter"] == res.history["iter"].iloc[-1] == max_iter


def test_active_set_confirms_optimality_when_its_working_set_converges(iris_tiny):
    """Sec. 5.3: the full pass that confirms optimality comes when the working set's problem is solved, not at
    the next refresh; the gap it confirms is the whole reduced problem's."""
    res = metric.solve(iris_tiny, "active-set", tol=1e-6, max_iter=10_000, lam=10.0, refresh=1000)
    assert res.status == "converged"
    assert res.info["n_iter"] < 1000
    plain = metric.solve(iris_tiny, "pg", tol=1e-6, max_iter=10_000, lam=10.0)
    assert res.history["gap"].iloc[-1] <= 1e-6
    assert res.history["objective"].iloc[-1] == pytest.approx(plain.history["objective"].iloc[-1], rel=1e-5)


def test_active_set_time_limit_holds_between_refreshes(iris_tiny, monkeypatch):
    ticks = itertools.count()
    monkeypatch.setitem(clock.CLOCKS, "wall", lambda: float(next(ticks)))  # every clock reading is 1 s later
    res = metric.solve(iris_tiny, "active-set", tol=1e-15, max_iter=10_000, time_limit=20.0, lam=10.0, refresh=1000)
    assert res.status == "time_limit"
    assert res.info["n_iter"] < 20  # not the next refresh at iteration 1000


def test_a_lambda_whose_radii_overflow_is_refused(iris_tiny):
    with pytest.raises(InputError, match="lam = 1e-300 is too small"):
        metric.solve(iris_tiny, "pg", max_iter=5, lam=1e-300, bounds="pgb")
    with pytest.raises(InputError, match="lam"):
        metric.TripletMetricLearner(lam=1e-300, k=None).fit(iris_tiny.X, iris_tiny.codes)


def test_a_tiny_lambda_above_the_floor_runs(iris_tiny):
    for bounds in ("gb", "pgb", "dgb", "cdgb"):
        res = metric.solve(iris_tiny, "pg", max_iter=5, lam=1e-140, bounds=bounds)
        assert np.isfinite(res.history["objective"]).all()


def test_a_full_metric_on_too_many_features_is_refused_with_advice():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((8, MAX_FULL_DIM_CPU + 1)), np.repeat([0, 1], 4)
    with pytest.raises(InputError, match="diagonal=True"):
        make_triplet_problem(X, y, k=None)
    assert make_triplet_problem(X, y, k=None, diagonal=True).dim == MAX_FULL_DIM_CPU + 1


def test_a_full_metric_beyond_the_memory_budget_is_refused(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(10**6))
    X, y = np.random.default_rng(0).standard_normal((8, 200)), np.repeat([0, 1], 4)
    with pytest.raises(InputError, match="200 × 200 metric"):
        make_triplet_problem(X, y, k=None)

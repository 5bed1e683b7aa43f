"""TripletMetricLearner and the bad-input errors (raised before any work, with actionable messages)."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import MinMaxScaler

from solvers import datasets, metric
from solvers.core import InputError
from solvers.metric import TripletMetricLearner


@pytest.fixture(scope="module")
def wine():
    ds = datasets.load("wine")
    return MinMaxScaler((-1, 1)).fit_transform(ds.X), ds.y


def test_fit_transform_score(wine):
    X, y = wine
    est = TripletMetricLearner(lam=10.0, k=3).fit(X, y)
    M, L = est.metric_, est.components_
    np.testing.assert_allclose(L.T @ L, M, atol=1e-10)  # M = LᵀL
    assert np.linalg.eigvalsh(M).min() >= -1e-10
    Z = est.transform(X)
    # distances in the embedding are the learned Mahalanobis distances
    d2 = (X[0] - X[5]) @ M @ (X[0] - X[5])
    assert np.sum((Z[0] - Z[5]) ** 2) == pytest.approx(d2)
    assert est.score(X, y) >= 0.9 and est.status_ == "converged"
    assert 0 <= est.screened_fraction_ <= 1


def test_screening_does_not_change_the_fit(wine):
    X, y = wine
    a = TripletMetricLearner(lam=5.0, k=3, bound="none", tol=1e-10).fit(X, y)
    b = TripletMetricLearner(lam=5.0, k=3, bound="pgb", rule="linear", tol=1e-10).fit(X, y)
    assert np.linalg.norm(a.metric_ - b.metric_) <= 1e-4 * np.linalg.norm(a.metric_)
    assert b.screened_fraction_ > 0


def test_diagonal_metric(wine):
    X, y = wine
    est = TripletMetricLearner(lam=10.0, k=2, diagonal=True).fit(X, y)
    assert np.count_nonzero(est.metric_ - np.diag(np.diag(est.metric_))) == 0


@pytest.mark.parametrize("X, y, match", [
    (np.ones((6, 2)), np.zeros(6), "at least 2"),
    (np.arange(12.0).reshape(6, 2), np.array([0, 0, 0, 1, 1, 2]), "1 sample"),
    (np.array([[0.0, np.nan], [1, 2], [3, 4], [5, 6]]), np.array([0, 0, 1, 1]), "NaN"),
    (np.ones((4, 2)), np.array([0, 0, 1]), "inconsistent numbers of samples"),
])
def test_bad_data_is_refused(X, y, match):
    with pytest.raises(InputError, match=match):
        TripletMetricLearner().fit(X, y)


@pytest.mark.parametrize("params, match", [({"lam": 0.0}, "lam"), ({"lam": -1.0}, "lam"), ({"gamma": 1.0}, "gamma"),
                                           ({"bound": "xyz"}, "bound"), ({"rule": "xyz"}, "rule"), ({"k": 0}, "k")])
def test_bad_parameters_are_refused(wine, params, match):
    X, y = wine
    with pytest.raises(InputError, match=match):
        TripletMetricLearner(**params).fit(X, y)


def test_memory_budget_names_the_triplet_count(monkeypatch, wine):
    X, y = wine
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(10**6))
    with pytest.raises(InputError, match=r"[\d,]+ triplets .* budget"):
        TripletMetricLearner(k=None).fit(X, y)


def test_transform_before_fit_and_wrong_width(wine):
    X, y = wine
    with pytest.raises(NotFittedError):
        TripletMetricLearner().transform(X)
    est = TripletMetricLearner(lam=10.0, k=2).fit(X, y)
    with pytest.raises(InputError, match="features"):
        est.transform(X[:, :3])


def test_solve_and_make_problem_errors():
    ds = datasets.load("diabetes")
    with pytest.raises(InputError, match="classification"):
        metric.make_problem(ds)
    p = metric.make_problem(datasets.load("iris"), k=2)
    with pytest.raises(InputError, match="unknown method"):
        metric.solve(p, "newton", lam=1.0)
    with pytest.raises(InputError, match="lam"):
        metric.solve(p, "pg", lam=0.0)
    with pytest.raises(InputError, match="bound"):
        metric.regularization_path(p, bounds=("xyz",))
    with pytest.raises(InputError, match="rho"):
        metric.regularization_path(p, rho=1.5)


def test_synthetic_blobs_are_deterministic():
    a = datasets.generate("metric-blobs", seed=3)
    b = datasets.generate("metric-blobs", seed=3)
    np.testing.assert_array_equal(a.X, b.X)
    assert len(np.unique(a.y)) == 3

"""Bad input fails early with actionable messages; the estimator's three layouts; the data adapters."""
import io

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.metrics import r2_score

from solvers import datasets
from solvers import multitask as mt
from solvers.core import InputError

from .conftest import tiny_problem


def test_bad_problem_parameters():
    data = tiny_problem().data
    with pytest.raises(InputError, match="between 0 and d"):
        mt.make_problem(data, h=data.n_features + 1)
    with pytest.raises(InputError, match="between 0 and d"):
        mt.make_problem(data, h=-1)
    with pytest.raises(InputError, match="alpha must be a positive"):
        mt.make_problem(data, alpha=0.0)
    with pytest.raises(InputError, match="beta must be a positive"):
        mt.make_problem(data, beta=-1.0)
    with pytest.raises(InputError, match="unknown loss"):
        mt.make_problem(data, loss="huber")
    with pytest.raises(InputError, match="rebuild them"):
        mt.make_problem(data, loss="hinge")
    with pytest.raises(InputError, match="unknown method"):
        mt.solve(mt.make_problem(data), "newton", tol=1e-6, max_iter=10)
    with pytest.raises(InputError, match="L0"):
        mt.solve(mt.make_problem(data), "apg", tol=1e-6, max_iter=10, L0=-1)


def test_bad_task_data(rng):
    X1, X2 = rng.standard_normal((5, 3)), rng.standard_normal((5, 4))
    with pytest.raises(InputError, match="same features"):
        mt.from_tasks([(X1, np.ones(5)), (X2, np.ones(5))])
    with pytest.raises(InputError, match="1 class"):
        mt.from_tasks([(X1, np.ones(5)), (X1, np.r_[1, 1, -1, -1, 1])], loss="hinge")
    with pytest.raises(InputError, match="rows but"):
        mt.from_tasks([(X1, np.ones(4))])
    with pytest.raises(InputError, match="NaN"):
        mt.from_tasks([(np.full((2, 2), np.nan), np.ones(2))])
    with pytest.raises(InputError, match="no tasks"):
        mt.from_tasks([])
    with pytest.raises(InputError, match="hinge loss of Eq. \\(64\\) always has a bias"):
        mt.make_problem(mt.from_tasks([(X1, np.r_[1, 1, -1, -1, 1])], loss="hinge"), loss="hinge", intercept=False)


def test_estimator_layouts_agree(rng):
    X = rng.standard_normal((30, 5))
    Y = X @ rng.standard_normal((5, 3)) + 0.01 * rng.standard_normal((30, 3))
    shared = mt.MultiTaskSubspace(alpha=1, beta=0.1, h=2).fit(X, Y)
    listed = mt.MultiTaskSubspace(alpha=1, beta=0.1, h=2).fit([(X, Y[:, l]) for l in range(3)])
    groups = np.repeat(np.arange(3), 30)
    stacked = mt.MultiTaskSubspace(alpha=1, beta=0.1, h=2).fit(np.vstack([X] * 3), Y.T.ravel(), groups=groups)
    np.testing.assert_allclose(shared.coef_, listed.coef_, atol=1e-8)
    np.testing.assert_allclose(shared.coef_, stacked.coef_, atol=1e-8)
    assert shared.predict(X).shape == (30, 3)
    np.testing.assert_allclose(stacked.predict(np.vstack([X] * 3), groups=groups), shared.predict(X).T.ravel())
    assert shared.score(X, Y) > 0.95
    assert listed.score([(X, Y[:, l]) for l in range(3)]) == pytest.approx(shared.score(X, Y))
    assert shared.theta_.shape == (2, 5) and shared.V_.shape == (2, 3)
    with pytest.raises(InputError, match="features"):
        shared.predict(X[:, :4])
    with pytest.raises(NotFittedError):
        mt.MultiTaskSubspace().predict(X)
    with pytest.raises(InputError, match="requires y"):
        mt.MultiTaskSubspace().fit(X)
    with pytest.raises(InputError, match="one target per row"):
        mt.MultiTaskSubspace().fit(np.vstack([X] * 3), np.vstack([Y] * 3), groups=groups)


def test_single_y_is_one_task_and_matches_ridge(rng):
    """With one task, tr(uᵀ(ηI + M)⁻¹u) is minimised by M putting eigenvalue 1 on u (any h ≥ 1), so rASO is
    ridge regression with penalty c/(1 + η)·‖u‖² = β‖u‖² on the 1/n-averaged squared loss (Eq. (8))."""
    X = rng.standard_normal((40, 6))
    y = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(40)
    est = mt.MultiTaskSubspace(alpha=1.0, beta=0.5, tol=1e-10).fit(X, y)
    assert est.layout_ == "single" and est.predict(X).shape == (40,) and est.coef_.shape == (1, 6)
    Xc, yc = X - X.mean(0), y - y.mean()  # the unpenalised intercept centres the data
    u = np.linalg.solve(Xc.T @ Xc / 40 + 0.5 * np.eye(6), Xc.T @ yc / 40)
    np.testing.assert_allclose(est.coef_[0], u, atol=1e-6)
    column = mt.MultiTaskSubspace(alpha=1.0, beta=0.5, tol=1e-10).fit(X, y[:, None])
    assert column.predict(X).shape == (40, 1)
    np.testing.assert_allclose(column.predict(X)[:, 0], est.predict(X))
    assert est.score(X, y) == pytest.approx(r2_score(y, est.predict(X)))


def test_default_h_fits_one_feature_and_a_set_h_is_still_checked(rng):
    X = rng.standard_normal((20, 1))
    assert mt.MultiTaskSubspace().fit(X, X[:, 0]).M_.shape == (1, 1)  # h=None: min(2, d)
    with pytest.raises(InputError, match="between 0 and d"):
        mt.MultiTaskSubspace(h=2).fit(X, X[:, 0])


def test_decision_function_only_for_classification_losses(rng):
    X = rng.standard_normal((30, 3))
    assert not hasattr(mt.MultiTaskSubspace(), "decision_function")
    clf = mt.MultiTaskSubspace(loss="logistic").fit(X, np.where(X[:, 0] > 0, "a", "b"))
    assert clf.decision_function(X).shape == (30,) and set(clf.predict(X)) <= {"a", "b"}
    assert list(clf.classes_) == ["a", "b"]


def test_classifier_keeps_each_tasks_labels(rng):
    X = rng.standard_normal((40, 4))
    y1 = np.where(X[:, 0] > 0, "cat", "dog")
    y2 = np.where(X[:, 0] + 0.1 * X[:, 1] > 0, 7, 3)
    est = mt.MultiTaskSubspace(loss="hinge", h=1, alpha=1, beta=0.1, method="bcd").fit([(X, y1), (X, y2)])
    pred = est.predict([X, X])
    assert set(pred[0]) <= {"cat", "dog"} and set(pred[1]) <= {3, 7}
    assert est.score([(X, y1), (X, y2)]) > 0.9


def test_synthetic_subspace_is_recovered():
    ds = datasets.generate("multitask-subspace", d=15, m=20, n_per_task=30, h_true=2, tau=0.01, noise=0.01, seed=4)
    problem = mt.make_problem(ds, alpha=10.0, beta=0.01, h=2, intercept=False)
    res = mt.solve(problem, "bcd", tol=1e-8, max_iter=500)
    Theta, Theta_true = res.solution["Theta"], ds.meta["Theta_true"]
    cosines = np.linalg.svd(Theta @ Theta_true.T, compute_uv=False)
    assert np.degrees(np.arccos(np.clip(cosines.min(), -1, 1))) < 5  # largest principal angle


def test_digits_tasks_and_shared_layout():
    ds = datasets.generate("multitask-digits", n_train=50, seed=0)
    problem = mt.make_problem(ds, loss="logistic", h=3)
    assert problem.m == 10 and problem.d == 64 and problem.data.X.shape[0] == 10 * 50
    assert ds.image_shape == (8, 8) and ds.test_mask.sum() == 1797 - 50


def test_one_vs_rest_from_a_classification_dataset_and_single_target_refused():
    data = mt.from_dataset(datasets.load("wine"), "hinge")
    assert data.n_tasks == 3
    with pytest.raises(InputError, match="single target"):
        mt.from_dataset(datasets.load("diabetes"))


def test_uploaded_multi_output_csv():
    csv = "a,b,y_1,y_2\n" + "\n".join(f"{i},{i % 3},{2 * i},{i + 1}" for i in range(12))
    ds = datasets.parse_upload("multi.csv", csv.encode())
    problem = mt.make_problem(ds, h=1)
    assert problem.m == 2 and problem.d == 2


def test_school_tasks():
    if not datasets.REAL["school"].available():
        pytest.skip("school.mat is not in the data directory (SOLVERS_DATA)")
    ds = datasets.load("school")
    train, test = mt.split_rows(ds, 0.3, seed=0)
    problem = mt.make_problem(ds, rows=train, h=2)
    assert problem.m == 139 and problem.d == 28
    assert mt.task_index(ds, problem.data, test).max() == 138


def test_held_out_errors_and_baselines():
    from solvers.multitask import metrics
    ds = datasets.generate("multitask-subspace", d=6, m=3, n_per_task=10, n_test=7, seed=2)
    train, test = mt.split_rows(ds)
    problem = mt.make_problem(ds, rows=train, h=2)
    sol = mt.solve(problem, "bcd", tol=1e-8, max_iter=500).solution
    err = metrics.per_task_error(sol, ds, problem.data, test, "least_squares")
    for ell in range(3):  # by hand: RMSE over the task's test rows
        rows = test[ds.groups[test] == ell]
        pred = ds.X[rows] @ sol["U"][:, ell] + sol["b"][ell]
        assert err[ell] == pytest.approx(np.sqrt(np.mean((pred - ds.y[rows]) ** 2)))
    pooled = metrics.pooled(problem)
    assert np.allclose(pooled["U"], pooled["U"][:, :1]) and np.allclose(pooled["b"], pooled["b"][0])
    stl = metrics.single_task(problem)
    np.testing.assert_allclose(stl["M"], 0.0, atol=1e-12)


def test_label_matrix_classes_and_a_multiclass_y_refused(rng):
    X = rng.standard_normal((40, 3))
    Y = (X[:, :2] > 0).astype(int)  # two 0/1 tasks: one shared pair of labels
    clf = mt.MultiTaskSubspace(loss="logistic").fit(X, Y)
    assert clf.classes_.tolist() == [0, 1] and clf.predict(X).dtype.kind == "i"
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(clf.decision_function(X) >= 0).astype(int)])
    with pytest.raises(InputError, match="Only binary classification is supported"):
        mt.MultiTaskSubspace(loss="logistic").fit(X, np.arange(40) % 3)

"""SupportMatrixMachine where scikit-learn's checks (tests/test_sklearn_checks.py runs them for every estimator)
do not reach: 2-D X read as rows that are 1 × d matrices (‖W‖_* = ‖w‖₂) against cvxpy, shape=(p, q), and
GridSearchCV, cross_val_score and joblib on 3-D data.
"""
from __future__ import annotations

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

from solvers.core import InputError
from solvers.smm import SupportMatrixMachine

from .conftest import make_instance


def test_rows_as_1xd_matrices_are_an_l2_penalised_hinge_svm():
    """2-D X with shape=None: ‖w‖_* of a 1 × d matrix is ‖w‖₂, so the fit is the SVM with ½‖w‖² + τ‖w‖₂,
    solved independently by cvxpy."""
    import cvxpy as cp

    X3, y = make_instance(50, 1, 7, seed=3)
    X = X3[:, 0, :]
    clf = SupportMatrixMachine(C=1.0, tau=0.5, tol=1e-9).fit(X, y)
    assert clf.coef_.shape == (1, 7) and clf.n_features_in_ == 7 and clf.matrix_shape_ == (1, 7)
    w, b = cp.Variable(7), cp.Variable()
    hinge = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + 0.5 * cp.norm(w, 2) + hinge))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    ours = 0.5 * clf.coef_.ravel() @ clf.coef_.ravel() + 0.5 * np.linalg.norm(clf.coef_) + np.maximum(
        0, 1 - y * clf.decision_function(X)).sum()
    assert ours == pytest.approx(prob.value, rel=1e-6)
    np.testing.assert_allclose(clf.coef_.ravel(), w.value, atol=1e-4)


def test_shape_parameter_unflattens_rows_like_the_3d_stack():
    X, y = make_instance(40, 3, 4, seed=1)
    flat = X.reshape(40, 12)
    stacked = SupportMatrixMachine(tau=0.5, tol=1e-9).fit(X, y)
    unflattened = SupportMatrixMachine(tau=0.5, tol=1e-9, shape=(3, 4)).fit(flat, y)
    np.testing.assert_allclose(unflattened.coef_, stacked.coef_, atol=1e-7)
    np.testing.assert_allclose(unflattened.decision_function(flat), stacked.decision_function(X), atol=1e-6)
    assert stacked.n_features_in_ == 12 and stacked.matrix_shape_ == (3, 4)
    with pytest.raises(InputError, match="p·q = 12"):
        SupportMatrixMachine(shape=(5, 5)).fit(flat, y)
    with pytest.raises(InputError, match="fit on 3×4"):
        stacked.decision_function(np.swapaxes(X, 1, 2))


def test_grid_search_cross_validation_and_joblib_on_3d_data(tmp_path):
    X, y = make_instance(60, 3, 4, seed=2)
    search = GridSearchCV(SupportMatrixMachine(tol=1e-6), {"C": [0.1, 1.0], "tau": [0.1, 1.0]}, cv=3).fit(X, y)
    assert set(search.best_params_) == {"C", "tau"} and 0.5 <= search.best_score_ <= 1.0
    scores = cross_val_score(SupportMatrixMachine(tol=1e-6), X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    path = tmp_path / "smm.joblib"
    joblib.dump(search.best_estimator_, path)
    again = joblib.load(path)
    np.testing.assert_array_equal(again.decision_function(X), search.best_estimator_.decision_function(X))

"""scikit-learn estimators over the sparse solvers: best-subset LS (3) and logistic regression (23).

No intercept, as in the paper: centre y (or add a constant column) yourself if you need one.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError, check_labels
from .methods import METHODS
from .problem import SparseProblem


class _SparseBase(BaseEstimator):
    _loss = "ls"

    def __init__(self, s=10, method="apg+", tol=1e-6, max_iter=10_000, mu=1e-10, time_limit=None, params=None):
        self.s = s
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.mu = mu
        self.time_limit = time_limit
        self.params = params

    def _fit_problem(self, X, y) -> None:
        from . import solve  # the package's solve (late import: the package imports this module)

        if self.method not in METHODS:
            raise InputError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        problem = SparseProblem(X, y, loss=self._loss, s=self.s, mu=self.mu)
        result = solve(problem, self.method, tol=self.tol, max_iter=self.max_iter, time_limit=self.time_limit,
                       **(self.params or {}))
        self.coef_ = result.solution["w"]
        self.support_ = result.solution["support"]
        self.history_ = result.history
        self.status_ = result.status
        self.n_iter_ = result.info["n_iter"]
        self.info_ = result.info

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return np.asarray(X @ self.coef_).ravel()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class SparseLinearRegression(RegressorMixin, _SparseBase):
    """min ½‖y − Xw‖² s.t. ‖w‖₀ ≤ s (problem (3)); ``method`` is any key of `METHODS`.

    Attributes: coef_, support_, history_ (one row per iteration), status_, n_iter_, info_.
    """

    _loss = "ls"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", y_numeric=True)
        self._fit_problem(X, y)
        return self

    def predict(self, X):
        return self._decision(X)


class SparseLogisticRegression(ClassifierMixin, _SparseBase):
    """min Σ log(1 + exp(−yᵢxᵢᵀw)) + μ‖w‖²/2 s.t. ‖w‖₀ ≤ s (problem (23)), two classes.

    Attributes: classes_ (the larger label is the positive class), coef_, support_, history_, status_.
    """

    _loss = "logistic"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr")
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise InputError(f"Only binary classification is supported. The type of the target is {y_type}; "
                             "the logistic loss (23) needs exactly two classes (use a one-vs-rest relabelling).")
        self.classes_, codes = check_labels(y, n_classes=2, what="SparseLogisticRegression")
        self._fit_problem(X, np.where(codes == 1, 1.0, -1.0))
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # the loss (23) is binary
        return tags

    def decision_function(self, X):
        return self._decision(X)

    def predict_proba(self, X):
        p = expit(self._decision(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        score = self._decision(X)
        return self.classes_[(score >= 0).astype(int)]  # sign(0) counts as +1 (digest §8 m)

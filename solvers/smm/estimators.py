"""scikit-learn estimator over the SMM solvers."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..core import InputError, check_array
from .problem import build_problem


class SupportMatrixMachine(ClassifierMixin, BaseEstimator):
    """Model (1): ½‖W‖_F² + τ‖W‖_* + C Σ hinge on (n, p, q) matrix samples and two classes.

    ``method`` is any key of `METHODS` (default ALM-SNCG). Attributes: ``coef_`` (the p×q matrix W),
    ``intercept_`` (b), ``classes_``, ``dual_coef_`` (−λ ∈ [0, C]^n), ``rank_``, ``history_``, ``status_``.
    ``predict`` uses sign(⟨W, X⟩ + b) with sign(0) = +1 (eq. (48)).
    """

    def __init__(self, C=1.0, tau=1.0, method="alm-sncg", tol=1e-6, max_iter=500, time_limit=None, params=None):
        self.C = C
        self.tau = tau
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.params = params

    def fit(self, X, y):
        from . import METHODS, solve  # late import: the package imports this module

        if self.method not in METHODS:
            raise InputError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        problem = build_problem(X, y, C=self.C, tau=self.tau)
        result = solve(problem, self.method, tol=self.tol, max_iter=self.max_iter, time_limit=self.time_limit,
                       **(self.params or {}))
        self.classes_ = np.asarray(problem.classes)
        self.coef_ = np.asarray(result.solution["W"])
        self.intercept_ = float(result.solution["b"])
        self.dual_coef_ = -np.asarray(result.solution["lam"])
        self.rank_ = int(np.linalg.matrix_rank(result.solution["U"])) if result.solution["U"] is not None else 0
        self.history_ = result.history
        self.status_ = result.status
        self.n_iter_ = result.info["n_iter"]
        return self

    def decision_function(self, X):
        """⟨W, X_i⟩ + b for (n, p, q) samples."""
        check_is_fitted(self, "coef_")
        X = check_array(X, "X", ndim=3)
        if X.shape[1:] != self.coef_.shape:
            raise InputError(f"samples are {X.shape[1]}×{X.shape[2]} but the model was fit on "
                             f"{self.coef_.shape[0]}×{self.coef_.shape[1]} matrices")
        return np.einsum("ipq,pq->i", X, self.coef_, optimize=True) + self.intercept_

    def predict(self, X):
        return self.classes_[(self.decision_function(X) >= 0).astype(int)]

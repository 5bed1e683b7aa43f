"""scikit-learn estimator over the SMM solvers.

Samples are matrices. The natural input is a 3-D stack X of shape (n, p, q). A 2-D X of shape (n, d)
is accepted honestly in one of two ways:

* ``shape=None`` (default): each row is a 1 × d matrix. Its only singular value is the row's ℓ2 norm,
  so ‖W‖_* = ‖w‖₂ and model (1) becomes a hinge-loss SVM with the elastic penalty ½‖w‖² + τ‖w‖₂;
* ``shape=(p, q)``: each row is unflattened (C order) into a p × q matrix, p·q = d.

Internally every input is flattened to (n, p·q) for scikit-learn's validation, so ``n_features_in_``
is p·q, and ``matrix_shape_`` keeps the (p, q) the model was fitted on.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError
from .problem import build_problem


class SupportMatrixMachine(ClassifierMixin, BaseEstimator):
    """Model (1): ½‖W‖_F² + τ‖W‖_* + C Σ hinge on matrix samples and two classes.

    ``method`` is any key of `METHODS` (default ALM-SNCG); ``shape`` unflattens 2-D input (see the
    module docstring). Attributes: ``coef_`` (the p×q matrix W), ``intercept_`` (b), ``classes_``,
    ``dual_coef_`` (−λ ∈ [0, C]^n), ``rank_``, ``matrix_shape_``, ``n_features_in_`` (p·q),
    ``history_``, ``status_``, ``n_iter_``.
    ``predict`` uses sign(⟨W, X⟩ + b) with sign(0) = +1 (eq. (48)).
    """

    def __init__(self, C=1.0, tau=1.0, method="alm-sncg", tol=1e-6, max_iter=500, time_limit=None, params=None,
                 shape=None):
        self.C = C
        self.tau = tau
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.params = params
        self.shape = shape

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.three_d_array = True  # (n, p, q) stacks are the natural input
        tags.classifier_tags.multi_class = False  # model (1) separates exactly two classes
        return tags

    # -- input --------------------------------------------------------------------
    def _flatten(self, X):
        """(n, p·q) validated by scikit-learn, and the sample shape (p, q) the rows stand for."""
        sample_shape = None
        if not hasattr(X, "tocsr") and not hasattr(X, "iloc"):  # sparse and frames go to validate_data as they are
            try:
                arr = np.asarray(X)
            except ValueError:
                raise InputError("samples have different shapes; every X_i must be the same p×q matrix") from None
            if arr.ndim == 3:
                sample_shape = arr.shape[1:]
                X = arr.reshape(arr.shape[0], -1)
            elif arr.ndim > 3:
                raise InputError(f"X must be an (n, p, q) stack of matrices or an (n, d) array, got shape {arr.shape}")
        return X, sample_shape

    def _matrices(self, X2, sample_shape) -> np.ndarray:
        d = X2.shape[1]
        if sample_shape is None and self.shape is not None:
            try:
                p, q = (int(s) for s in self.shape)
            except (TypeError, ValueError):
                raise InputError(f"shape must be a pair (p, q), got {self.shape!r}") from None
            if p < 1 or q < 1 or p * q != d:
                raise InputError(f"shape={self.shape!r} needs {p * q} columns per row, X has {d}; "
                                 f"choose p·q = {d} or pass X as an (n, p, q) stack")
            sample_shape = (p, q)
        if sample_shape is None:
            sample_shape = (1, d)  # a row is a 1 × d matrix: ‖W‖_* = ‖w‖₂
        return X2.reshape(X2.shape[0], *sample_shape)

    def _validated(self, X, y=None, *, training: bool = False):
        X2, sample_shape = self._flatten(X)
        if not training and sample_shape is not None and tuple(sample_shape) != self.matrix_shape_:
            raise InputError(f"samples are {sample_shape[0]}×{sample_shape[1]} but the model was fit on "
                             f"{self.matrix_shape_[0]}×{self.matrix_shape_[1]} matrices")
        try:
            if not training:
                return validate_data(self, X2, reset=False, dtype=np.float64), sample_shape
            return validate_data(self, X2, y, ensure_min_samples=2, dtype=np.float64), sample_shape
        except InputError:
            raise
        except ValueError as exc:  # scikit-learn's own messages, as the family's error type
            raise InputError(str(exc)) from None

    # -- the estimator --------------------------------------------------------------
    def fit(self, X, y):
        from . import METHODS, solve  # late import: the package imports this module

        if self.method not in METHODS:
            raise InputError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        (X2, y), sample_shape = self._validated(X, y, training=True)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise InputError(f"Only binary classification is supported. The type of the target is {y_type}; "
                             "SMM separates two classes (pick a one-vs-rest task)")
        matrices = self._matrices(X2, sample_shape)
        problem = build_problem(matrices, y, C=self.C, tau=self.tau)
        result = solve(problem, self.method, tol=self.tol, max_iter=self.max_iter, time_limit=self.time_limit,
                       **(self.params or {}))
        self.classes_ = np.asarray(problem.classes)
        self.coef_ = np.asarray(result.solution["W"])
        self.intercept_ = float(result.solution["b"])
        self.dual_coef_ = -np.asarray(result.solution["lam"])
        self.rank_ = int(np.linalg.matrix_rank(result.solution["U"])) if result.solution["U"] is not None else 0
        self.matrix_shape_ = tuple(matrices.shape[1:])
        self.history_ = result.history
        self.status_ = result.status
        self.n_iter_ = result.info["n_iter"]
        return self

    def decision_function(self, X):
        """⟨W, X_i⟩ + b for every sample (same layout as in ``fit``)."""
        check_is_fitted(self, "coef_")
        X2, _ = self._validated(X)
        return X2 @ self.coef_.ravel() + self.intercept_

    def predict(self, X):
        scores = self.decision_function(X)  # checks fitted first
        return self.classes_[(scores >= 0).astype(int)]

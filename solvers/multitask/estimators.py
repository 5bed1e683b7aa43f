"""scikit-learn style estimator for rASO.

    est = MultiTaskSubspace(alpha=0.1, beta=0.01, h=3).fit([(X1, y1), (X2, y2), ...])   # a list of tasks
    est = MultiTaskSubspace(loss="hinge").fit(X, Y)                                  # shared X, label matrix
    est = MultiTaskSubspace().fit(X, y, groups=task_of_row)                          # stacked rows (School)

``predict`` takes the same layout it was fitted on: a list of X_ℓ (returns a list), an X (returns n × m:
every task on every row) or X with ``groups`` (returns one prediction per row, by its task).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..core import InputError, check_array
from .data import CLASSIFICATION_LOSSES, from_groups, from_shared, from_tasks
from .methods import solve
from .problem import MultiTaskProblem


class MultiTaskSubspace(BaseEstimator):
    """Learn m linear predictors u_ℓ that share an h-dimensional subspace Θ (convex rASO, Eq. (8)).

    Attributes after ``fit``: ``coef_`` (m × d, row ℓ = u_ℓ), ``intercept_`` (m,), ``M_`` (d × d),
    ``theta_`` (h × d, the shared subspace), ``V_`` (h × m = ΘU), ``result_`` (the solver's Result),
    ``task_names_`` and, for classification losses, ``classes_`` (per task, the (negative, positive) labels).
    """

    def __init__(self, alpha: float = 0.1, beta: float = 0.01, h: int = 2, loss: str = "least_squares",
                 method: str = "bcd", intercept: bool = True, tol: float = 1e-6, max_iter: int = 2000):
        self.alpha = alpha
        self.beta = beta
        self.h = h
        self.loss = loss
        self.method = method
        self.intercept = intercept
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X, y=None, groups=None):
        if y is None:
            data, layout = from_tasks(X, self.loss), "tasks"
        elif np.ndim(y) == 2:
            data, layout = from_shared(X, y, self.loss), "shared"
        elif groups is not None:
            data, layout = from_groups(X, y, groups, self.loss), "groups"
        else:
            raise InputError("give several tasks: a list of (X, y) pairs, a label matrix Y (n × m), or groups=")
        problem = MultiTaskProblem(data, self.loss, self.alpha, self.beta, self.h, self.intercept)
        self.result_ = solve(problem, self.method, tol=self.tol, max_iter=self.max_iter)
        sol = self.result_.solution
        self.coef_, self.intercept_, self.M_ = sol["U"].T, sol["b"], sol["M"]
        self.theta_, self.V_ = sol["Theta"], sol["V"]
        self.task_names_, self.classes_ = data.task_names, data.classes
        self.n_features_in_, self.layout_ = data.n_features, layout
        return self

    # -- prediction -----------------------------------------------------------
    def _check(self, X, what="X"):
        X = check_array(X, what)
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"{what} has {X.shape[1]} features; the model was fitted with {self.n_features_in_}")
        return X

    def _task_positions(self, groups) -> np.ndarray:
        position = {name: ell for ell, name in enumerate(self.task_names_)}
        unknown = sorted(set(np.unique(groups).tolist()) - set(position))
        if unknown:
            raise InputError(f"unknown task(s) {unknown[:5]}; the model knows {self.task_names_[:10]}")
        return np.array([position[g] for g in np.asarray(groups).tolist()], dtype=np.intp)

    def decision_function(self, X, groups=None):
        """Scores x_iᵀu_ℓ + b_ℓ in the layout of the fit (list, n × m, or one per row with ``groups``)."""
        if not hasattr(self, "coef_"):
            raise InputError("this estimator is not fitted yet; call fit first")
        if self.layout_ == "tasks" and groups is None:
            if len(X) != len(self.coef_):
                raise InputError(f"give one X per task: {len(self.coef_)} tasks, got {len(X)}")
            return [self._check(Xl, f"X of task {ell}") @ self.coef_[ell] + self.intercept_[ell]
                    for ell, Xl in enumerate(X)]
        X = self._check(X)
        if groups is None:
            return X @ self.coef_.T + self.intercept_
        ell = self._task_positions(groups)
        if len(ell) != X.shape[0]:
            raise InputError(f"X has {X.shape[0]} rows but groups has {len(ell)} entries")
        return np.einsum("ij,ij->i", X, self.coef_[ell]) + self.intercept_[ell]

    def _labels(self, scores, ell):
        table = np.empty((len(self.classes_), 2), dtype=object)  # tasks may use labels of different types
        table[:] = self.classes_
        return np.where(scores >= 0, table[ell, 1], table[ell, 0])

    def predict(self, X, groups=None):
        scores = self.decision_function(X, groups)
        if self.loss not in CLASSIFICATION_LOSSES:
            return scores
        if isinstance(scores, list):
            return [self._labels(s, np.full(len(s), ell)) for ell, s in enumerate(scores)]
        if groups is not None:
            return self._labels(scores, self._task_positions(groups))
        return self._labels(scores, np.arange(scores.shape[1])[None, :])

    def score(self, X, y=None, groups=None) -> float:
        """Accuracy (classification) or R² (regression) over every (sample, task) pair of the layout."""
        if self.layout_ == "tasks" and groups is None:
            if y is not None:
                raise InputError("with a list of tasks, pass the (X, y) pairs as X and no y")
            pairs = [(np.ravel(p), np.ravel(np.asarray(t[1], dtype=object)))
                     for p, t in zip(self.predict([t[0] for t in X]), X)]
            pred = np.concatenate([p.astype(object) for p, _ in pairs])  # tasks may use labels of different types
            truth = np.concatenate([t for _, t in pairs])
        else:
            pred, truth = np.ravel(self.predict(X, groups)), np.ravel(np.asarray(y))
        if pred.shape != truth.shape:
            raise InputError(f"y has {truth.size} values but the predictions have {pred.size}")
        if self.loss in CLASSIFICATION_LOSSES:
            return float(np.mean(pred == truth))
        pred, truth = pred.astype(float), truth.astype(float)
        return float(1.0 - np.sum((truth - pred) ** 2) / max(np.sum((truth - truth.mean()) ** 2), 1e-300))

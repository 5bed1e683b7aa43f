"""scikit-learn style estimator for rASO.

    est = MultiTaskSubspace(alpha=0.1, beta=0.01, h=3).fit([(X1, y1), (X2, y2), ...])   # a list of tasks
    est = MultiTaskSubspace(loss="hinge").fit(X, Y)                                  # shared X, label matrix
    est = MultiTaskSubspace().fit(X, y, groups=task_of_row)                          # stacked rows (School)
    est = MultiTaskSubspace().fit(X, y)                                              # one task

``predict`` takes the same layout it was fitted on: a list of X_ℓ (returns a list), an X (returns n × m:
every task on every row; n values for a single 1-D y, as any scikit-learn regressor) or X with ``groups``
(returns one prediction per row, by its task).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._tags import ClassifierTags, RegressorTags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError, check_array
from .data import CLASSIFICATION_LOSSES, from_groups, from_shared, from_tasks
from .methods import solve
from .problem import MultiTaskProblem

DEFAULT_H = 2  # h=None: min(DEFAULT_H, n_features), so the default fits data with a single feature


def _is_task_list(X) -> bool:
    """True for a list of (X_ℓ, y_ℓ) pairs; False for a matrix, also one given as nested lists."""
    if isinstance(X, np.ndarray) or not isinstance(X, (list, tuple)) or not X:
        return False
    first = X[0]
    return isinstance(first, (list, tuple)) and len(first) == 2 and np.ndim(first[0]) == 2


def _is_classifier(est: "MultiTaskSubspace") -> bool:
    return est.loss in CLASSIFICATION_LOSSES


class MultiTaskSubspace(BaseEstimator):
    """Learn m linear predictors u_ℓ that share an h-dimensional subspace Θ (convex rASO, Eq. (8)).

    Parameters: ``alpha``, ``beta`` (η = β/α), ``h`` (dimension of the shared subspace, 0 ≤ h ≤ d; None
    means min(2, d)), ``loss`` (least_squares: a regressor; logistic or hinge: a binary classifier per task),
    ``method`` (apg, pg, bcd, cvxpy), ``intercept``, ``tol``, ``max_iter``.

    Attributes after ``fit``: ``coef_`` (m × d, row ℓ = u_ℓ), ``intercept_`` (m,), ``M_`` (d × d),
    ``theta_`` (h × d, the shared subspace), ``V_`` (h × m = ΘU), ``result_`` (the solver's Result),
    ``task_names_``, ``layout_`` (tasks, shared, single or groups) and, for classification losses,
    ``classes_``: an array of the two labels (negative, positive) when every task uses the same two (a single
    y, a 0/1 label matrix), otherwise a list with each task's pair.
    """

    def __init__(self, alpha: float = 0.1, beta: float = 0.01, h: int | None = None, loss: str = "least_squares",
                 method: str = "bcd", intercept: bool = True, tol: float = 1e-6, max_iter: int = 2000):
        self.alpha = alpha
        self.beta = beta
        self.h = h
        self.loss = loss
        self.method = method
        self.intercept = intercept
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.single_output = True  # a 1-D y is one task
        tags.target_tags.multi_output = True  # a label matrix Y (n × m) is m tasks on a shared X
        if _is_classifier(self):
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=False)  # each task is binary (±1, Eq. (64))
            tags.regressor_tags = None
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        return tags

    def _validate(self, X, y=None, reset=False):
        """scikit-learn's validation (its messages, n_features_in_, feature names), raised as InputError."""
        try:
            if y is None:
                return validate_data(self, X, reset=reset, dtype=np.float64)
            return validate_data(self, X, y, reset=reset, dtype=np.float64, multi_output=True,
                                 y_numeric=not _is_classifier(self))
        except ValueError as error:
            raise InputError(str(error)) from error

    def fit(self, X, y=None, groups=None):
        """Fit on a list of (X_ℓ, y_ℓ) pairs (y None), a label matrix Y (n × m), a single y (one task),
        or stacked rows with the task of each row in ``groups``."""
        if y is None:
            if not _is_task_list(X):
                raise InputError(f"{type(self).__name__} requires y to be passed, but the target y is None; give y, "
                                 "a label matrix Y (n × m), or a list of (X, y) task pairs as X")
            data, layout = from_tasks(X, self.loss), "tasks"
        else:
            X, y = self._validate(X, y, reset=True)
            if groups is not None:
                if y.ndim != 1:
                    raise InputError(f"with groups, y holds one target per row (1-D), got shape {y.shape}")
                data, layout = from_groups(X, y, groups, self.loss), "groups"
            elif y.ndim == 2:
                data, layout = from_shared(X, y, self.loss), "shared"
            else:
                if _is_classifier(self) and type_of_target(y) == "multiclass":
                    raise InputError("Only binary classification is supported. The type of the target is multiclass: "
                                     "each task of MultiTaskSubspace is binary (Eq. (64)); for K classes give a label "
                                     "matrix of K one-vs-rest columns")
                data, layout = from_shared(X, y[:, None], self.loss), "single"
        h = min(DEFAULT_H, data.n_features) if self.h is None else self.h
        problem = MultiTaskProblem(data, self.loss, self.alpha, self.beta, h, self.intercept)
        self.result_ = solve(problem, self.method, tol=self.tol, max_iter=self.max_iter)
        sol = self.result_.solution
        self.coef_, self.intercept_, self.M_ = sol["U"].T, sol["b"], sol["M"]
        self.theta_, self.V_ = sol["Theta"], sol["V"]
        self.task_names_, self.n_features_in_, self.layout_ = data.task_names, data.n_features, layout
        self.n_iter_ = int(self.result_.info["n_iter"])
        if _is_classifier(self):
            same = all(pair == data.classes[0] for pair in data.classes)
            self.classes_ = np.asarray(data.classes[0]) if same else data.classes
        return self

    # -- prediction -----------------------------------------------------------
    def _check(self, X, what):
        X = check_array(X, what)
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"{what} has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def _task_positions(self, groups) -> np.ndarray:
        position = {name: ell for ell, name in enumerate(self.task_names_)}
        unknown = sorted(set(np.unique(groups).tolist()) - set(position))
        if unknown:
            raise InputError(f"unknown task(s) {unknown[:5]}; the model knows {self.task_names_[:10]}")
        return np.array([position[g] for g in np.asarray(groups).tolist()], dtype=np.intp)

    def _scores(self, X, groups=None):
        """x_iᵀu_ℓ + b_ℓ in the layout of the fit (list, n × m, n for a single task, or one per row)."""
        check_is_fitted(self)
        if self.layout_ == "tasks" and groups is None:
            if len(X) != len(self.coef_):
                raise InputError(f"give one X per task: {len(self.coef_)} tasks, got {len(X)}")
            return [self._check(Xl, f"X of task {ell}") @ self.coef_[ell] + self.intercept_[ell]
                    for ell, Xl in enumerate(X)]
        X = self._validate(X)
        if groups is None:
            scores = X @ self.coef_.T + self.intercept_
            return scores[:, 0] if self.layout_ == "single" else scores
        ell = self._task_positions(groups)
        if len(ell) != X.shape[0]:
            raise InputError(f"X has {X.shape[0]} rows but groups has {len(ell)} entries")
        return np.einsum("ij,ij->i", X, self.coef_[ell]) + self.intercept_[ell]

    @available_if(_is_classifier)
    def decision_function(self, X, groups=None):
        """Scores x_iᵀu_ℓ + b_ℓ (classification losses; positive means the task's positive class)."""
        return self._scores(X, groups)

    def _labels(self, scores, ell):
        if isinstance(self.classes_, np.ndarray):  # every task has the same two labels
            return np.where(scores >= 0, self.classes_[1], self.classes_[0])
        table = np.empty((len(self.task_names_), 2), dtype=object)  # tasks may use labels of different types
        table[:] = self.classes_
        return np.where(scores >= 0, table[ell, 1], table[ell, 0])

    def predict(self, X, groups=None):
        """Predictions in the layout of the fit: real values (least squares) or each task's labels."""
        scores = self._scores(X, groups)
        if not _is_classifier(self):
            return scores
        if isinstance(scores, list):
            return [self._labels(s, np.full(len(s), ell)) for ell, s in enumerate(scores)]
        if groups is not None:
            return self._labels(scores, self._task_positions(groups))
        return self._labels(scores, np.arange(scores.shape[-1])[None, :] if scores.ndim == 2 else 0)

    def score(self, X, y=None, groups=None) -> float:
        """One number over every (sample, task) pair of the layout, as used by GridSearchCV by default.

        Classification losses: the accuracy, the fraction of pairs whose label is predicted right.
        Least squares: R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² pooled over all pairs, ȳ the mean of all targets. With
        one task this is scikit-learn's ``r2_score``; with several it weighs every pair alike (scikit-learn's
        ``r2_score`` on a label matrix averages the tasks' own R² instead: pass ``scoring="r2"`` for that).
        With a list of tasks, pass the (X_ℓ, y_ℓ) pairs as X and no y.
        """
        if self.layout_ == "tasks" and groups is None and y is None:
            pairs = [(np.ravel(p), np.ravel(np.asarray(t[1], dtype=object)))
                     for p, t in zip(self.predict([t[0] for t in X]), X)]
            pred = np.concatenate([p.astype(object) for p, _ in pairs])  # tasks may use labels of different types
            truth = np.concatenate([t for _, t in pairs])
        else:
            if y is None:
                raise InputError("score needs the true targets y (or, for a model fitted on a list of tasks, "
                                 "the (X, y) pairs as X)")
            pred, truth = np.ravel(self.predict(X, groups)), np.ravel(np.asarray(y))
        if pred.shape != truth.shape:
            raise InputError(f"y has {truth.size} values but the predictions have {pred.size}")
        if _is_classifier(self):
            return float(np.mean(pred == truth))
        pred, truth = pred.astype(float), truth.astype(float)
        return float(1.0 - np.sum((truth - pred) ** 2) / max(np.sum((truth - truth.mean()) ** 2), 1e-300))

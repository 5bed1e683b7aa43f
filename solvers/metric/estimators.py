"""scikit-learn style estimator: learn M ⪰ O by RTLM with safe screening, embed x ↦ L x (M = LᵀL)."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.neighbors import KNeighborsClassifier

from ..core import InputError, check_array
from .bounds import DYNAMIC_BOUNDS
from .problem import lambda_max, make_triplet_problem
from .projected_gradient import Screening, minimize
from .rules import RULES


class TripletMetricLearner(TransformerMixin, BaseEstimator):
    """Regularised triplet metric learning (Yoshida et al., Sec. 2) solved by projected gradient with screening.

    Features are used as given (scale them first, e.g. to [−1, 1]); ``k=None`` uses all triplets.
    After ``fit``: ``metric_`` (d×d M), ``components_`` (L with M = LᵀL), ``n_iter_``, ``screened_fraction_``.
    ``score`` is the k-NN accuracy (``n_neighbors``) in the learned metric against the training data.
    """

    def __init__(self, lam: float = 1.0, k: int | None = 3, gamma: float = 0.05, diagonal: bool = False,
                 bound: str = "pgb", rule: str = "sphere", screening_period: int = 10, tol: float = 1e-6,
                 max_iter: int = 5000, n_neighbors: int = 3):
        self.lam = lam
        self.k = k
        self.gamma = gamma
        self.diagonal = diagonal
        self.bound = bound
        self.rule = rule
        self.screening_period = screening_period
        self.tol = tol
        self.max_iter = max_iter
        self.n_neighbors = n_neighbors

    def fit(self, X, y):
        if not (np.isscalar(self.lam) and self.lam > 0 and np.isfinite(self.lam)):
            raise InputError(f"lam = {self.lam} must be a positive number")
        if self.bound not in ("none",) + DYNAMIC_BOUNDS:
            raise InputError(f"bound = {self.bound!r}; choose none or one of {', '.join(DYNAMIC_BOUNDS)}")
        if self.rule not in RULES:
            raise InputError(f"rule = {self.rule!r}; choose one of {', '.join(RULES)}")
        X = check_array(X, "X")
        problem = make_triplet_problem(X, y, k=self.k, gamma=self.gamma, diagonal=self.diagonal, scale=False)
        lam_L, K = lambda_max(problem)
        screening = Screening(() if self.bound == "none" else (self.bound,), self.rule, self.screening_period)
        result = minimize(problem, self.lam, K / max(self.lam, lam_L), tol=self.tol, max_iter=self.max_iter,
                          screening=screening)
        M = problem.as_matrix(result.solution["M"])
        w, V = np.linalg.eigh(M)
        self.metric_ = M
        self.components_ = np.sqrt(np.maximum(w, 0.0))[:, None] * V.T  # rows of L, so that M = LᵀL
        self.n_iter_ = result.info["n_iter"]
        self.status_ = result.status
        self.screened_fraction_ = float(result.history["screened"].iloc[-1])
        self.n_features_in_ = X.shape[1]
        self._knn = KNeighborsClassifier(n_neighbors=min(self.n_neighbors, X.shape[0])).fit(self.transform(X), y)
        return self

    def _check_fitted(self, X) -> np.ndarray:
        if not hasattr(self, "metric_"):
            raise InputError("this TripletMetricLearner is not fitted yet; call fit(X, y) first")
        X = check_array(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"X has {X.shape[1]} features; the metric was learned on {self.n_features_in_}")
        return X

    def transform(self, X) -> np.ndarray:
        return self._check_fitted(X) @ self.components_.T

    def predict(self, X) -> np.ndarray:
        return self._knn.predict(self.transform(X))

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))

"""scikit-learn style estimator: learn M ⪰ O by RTLM with safe screening, embed x ↦ L x (M = LᵀL)."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError
from .bounds import DYNAMIC_BOUNDS
from .problem import check_lambda, lambda_max, make_triplet_problem
from .projected_gradient import Screening, minimize
from .rules import RULES


class TripletMetricLearner(TransformerMixin, BaseEstimator):
    """Regularised triplet metric learning (Yoshida et al., Sec. 2) solved by projected gradient with screening.

    Features are used as given (scale them first, e.g. to [−1, 1]); ``k=None`` uses all triplets.
    After ``fit``: ``metric_`` (d×d M), ``components_`` (L with M = LᵀL), ``n_iter_``, ``screened_fraction_``.
    ``score`` is the k-NN accuracy (``n_neighbors``) in the learned metric against the training data.
    When no triplet can reach a positive margin under K = [Σ_t H_t]_+ (λ_max = 0), K/λ is optimal at every λ
    (every α_t = 1 in eq. (9)) and is returned as is. Computation is in float64, so ``transform`` returns float64.
    """

    def __init__(self, lam: float = 1.0, k: int | None = 3, gamma: float = 0.05, diagonal: bool = False,
                 bound: str = "pgb", rule: str = "sphere", screening_period: int = 10, tol: float = 1e-6,
                 max_iter: int = 5000, n_neighbors: int = 3, device: str = "numpy"):
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
        self.device = device

    def fit(self, X, y):
        if not (np.isscalar(self.lam) and self.lam > 0 and np.isfinite(self.lam)):
            raise InputError(f"lam = {self.lam} must be a positive number")
        if self.bound not in ("none",) + DYNAMIC_BOUNDS:
            raise InputError(f"bound = {self.bound!r}; choose none or one of {', '.join(DYNAMIC_BOUNDS)}")
        if self.rule not in RULES:
            raise InputError(f"rule = {self.rule!r}; choose one of {', '.join(RULES)}")
        X, y = _validated(self, X, y, fit=True)
        problem = make_triplet_problem(X, y, k=self.k, gamma=self.gamma, diagonal=self.diagonal, scale=False,
                                       device=self.device)
        check_lambda(problem, self.lam)
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
        self._knn = KNeighborsClassifier(n_neighbors=min(self.n_neighbors, X.shape[0])).fit(self.transform(X), y)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # triplets come from the class labels
        return tags

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "metric_")
        return _validated(self, X) @ self.components_.T

    def predict(self, X) -> np.ndarray:
        Z = self.transform(X)
        return self._knn.predict(Z)

    def score(self, X, y) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))


def _validated(est: TripletMetricLearner, X, y=None, *, fit: bool = False):
    """scikit-learn's validation and messages (as InputError); at fit, y is required and ``n_features_in_`` set."""
    try:
        if not fit:
            return validate_data(est, X, reset=False, dtype=np.float64)
        if y is None:
            raise InputError(f"{type(est).__name__} requires y to be passed, but the target y is None: the triplets "
                             "are built from the class labels")
        return validate_data(est, X, y, ensure_min_samples=2, dtype=np.float64)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(exc)) from None

"""scikit-learn estimators over the sparse solvers: best-subset LS (3) and logistic regression (23).

Two ways to run them, and the difference matters:

* the paper's exact method: ``method="apg+", fit_intercept=False, normalize=False, warm_path=False,
  greedy=False, polish=False, lipschitz="paper"``
  is Algorithm 2 from w⁰ = 0 on the raw X with L = σ_max(X)², as in the paper's tables (and the
  benchmark `tables`);
* our defaults (``fit_intercept=True, normalize=True, warm_path=True, greedy=True, polish=True``)
  solve the same ℓ0 problem (plus an unpenalised intercept) in unit-norm column coordinates from
  up to three starts: w⁰ = 0; for 1 < s ≤ POLISH_MAX_S also a greedy forward support (OMP on
  unit-norm columns for LS; path.py) and, when those two end at different objectives, a
  warm-started path s' = 1 … s. Each fit is followed by the swap polish of polish.py and the best
  is kept (on the gene sets no start wins everywhere): better subsets than a local method from 0
  alone (docs/benchmarks/sparse.md, peers), for two solves, or about s + 2 when the path runs, instead of one. ``warm_path=False, greedy=False`` is the fast variant (one solve and its polish).
  The step's L is backtracked (``lipschitz="backtrack"``, problem.py) from max_j ‖x̃_j‖² = 1 instead
  of computed up front: σ_max(X)² by Lanczos cost 5–7× the iterations on a dense 2000 × 20000 X.
  ``lipschitz_`` is the L the fit ended with; pass it as ``L`` to later fits on the same X.

``s=None`` picks ⌈n/10⌉ features, at most ⌊m/2⌋ (beyond that an LS subset fit starts to
interpolate), at least 1. A user-set s that cannot hold raises InputError. The path estimators
fit every s up to s_max in one call (SparseLinearRegressionPath, SparseLogisticRegressionPath) and
keep the s with the best BIC.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError, check_labels
from .design import Design
from .methods import METHODS
from .path import Fit, fit_greedy, fit_one, fit_path, polished
from .polish import POLISH_MAX_S
from .problem import SparseProblem


def default_s(m: int, n: int) -> int:
    """⌈n/10⌉ features, at most ⌊m/2⌋, at least 1 (the rule behind s=None)."""
    return max(1, min(math.ceil(n / 10), m // 2))


class _SparseBase(BaseEstimator):
    _loss = "ls"

    def __init__(self, s=None, method="apg+", fit_intercept=True, normalize=True, warm_path=True, greedy=True,
                 polish=True, tol=1e-6, max_iter=10_000, mu=1e-10, L=None, lipschitz="backtrack", time_limit=None,
                 params=None):
        self.s = s
        self.method = method
        self.fit_intercept = fit_intercept
        self.normalize = normalize
        self.warm_path = warm_path
        self.greedy = greedy
        self.polish = polish
        self.tol = tol
        self.max_iter = max_iter
        self.mu = mu
        self.L = L
        self.lipschitz = lipschitz
        self.time_limit = time_limit
        self.params = params

    def _method(self) -> str:
        key = str(self.method).lower()
        if key not in METHODS:
            raise InputError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)} (any case)")
        return key

    def _problem(self, X, y, s: int, mu: float) -> tuple[SparseProblem, Design]:
        design = Design.build(X, normalize=self.normalize, fit_intercept=self.fit_intercept)
        problem = SparseProblem(design.X, y, loss=self._loss, s=s, mu=mu, L=self.L, lipschitz=self.lipschitz,
                                n_free=design.n_free)
        return problem, design

    def _fit_problem(self, X, y) -> None:
        method = self._method()
        s = default_s(*X.shape) if self.s is None else self.s
        problem, design = self._problem(X, y, s, self.mu)
        options = dict(polish=self.polish, tol=self.tol, max_iter=self.max_iter, time_limit=self.time_limit,
                       params=self.params)
        fits = [fit_one(problem, method, **{**options, "polish": False})]
        if 1 < problem.s <= POLISH_MAX_S and self.greedy:
            fits.append(fit_greedy(problem, method, **{**options, "polish": False}))
        if self.polish:  # once per distinct support: the two starts often end on the same one
            done: dict[bytes, Fit] = {}
            for k, fit in enumerate(fits):
                key = np.flatnonzero(fit.w).tobytes()
                fits[k] = done[key] = done[key] if key in done else polished(problem, fit)
        if 1 < problem.s <= POLISH_MAX_S:  # no start dominates on the gene sets: keep the best
            agree = len(fits) == 2 and np.isclose(fits[0].objective, fits[1].objective, rtol=1e-9, atol=0.0)
            if self.warm_path and not agree:  # the path costs s solves: only when the cheap starts disagree
                fits.append(fit_path(problem, problem.s, method, **options)[-1])
        fit = min(fits, key=lambda f: f.objective)
        self.coef_, self.intercept_ = design.unscale(fit.w)
        self.s_ = problem.s
        self.support_ = np.flatnonzero(self.coef_)
        self.objective_ = fit.objective
        self.history_ = fit.history
        self.status_ = fit.status
        self.n_iter_ = fit.n_iter
        self.swaps_ = fit.swaps
        self.info_ = fit.info
        self.lipschitz_ = problem.L_now  # pass as L to later fits on the same X (CV folds need their own)

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class SparseLinearRegression(RegressorMixin, _SparseBase):
    """min ½‖y − Xw − b‖² s.t. ‖w‖₀ ≤ s (problem (3), b = 0 when fit_intercept=False).

    ``method`` is any key of `METHODS` (case-insensitive). Attributes: coef_, intercept_, support_,
    s_, objective_ (f at the returned point, scaled coordinates), history_ (one row per solver
    iteration), status_, n_iter_, swaps_ (accepted polish swaps), lipschitz_, info_.
    """

    _loss = "ls"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", y_numeric=True, dtype="numeric")
        self._fit_problem(X, y)
        return self

    def predict(self, X):
        return self._decision(X)


class _PathMixin:
    """Every s = 1 … s_max in one call (warm-started, one L; path.py), then the s with the smallest BIC
    for predict. Path attributes: s_path_, coef_path_ (s_max × n), intercept_path_, objective_path_,
    bic_path_; coef_, intercept_ and s_ are the chosen fit. ``s_max=None`` uses the rule of ``s=None``.
    A subclass gives ``_bic(objective_path, m)``, the criterion without its s·log(m) term."""

    def _fit_problem(self, X, y) -> None:
        method = self._method()
        m, n = X.shape
        s_max = default_s(m, n) if self.s_max is None else self.s_max
        problem, design = self._problem(X, y, s_max, getattr(self, "mu", 0.0))  # validates s_max against n
        fits = fit_path(problem, problem.s, method, polish=self.polish, tol=self.tol, max_iter=self.max_iter,
                        time_limit=self.time_limit, params=self.params)
        coefs = [design.unscale(f.w) for f in fits]
        self.s_path_ = np.arange(1, len(fits) + 1)
        self.coef_path_ = np.array([c for c, _ in coefs])
        self.intercept_path_ = np.array([b for _, b in coefs])
        self.objective_path_ = np.array([f.objective for f in fits])
        self.bic_path_ = self._bic(self.objective_path_, m) + self.s_path_ * np.log(m)
        best = int(np.argmin(self.bic_path_))
        chosen = fits[best]
        self.coef_, self.intercept_ = coefs[best]
        self.s_ = int(self.s_path_[best])
        self.support_ = np.flatnonzero(self.coef_)
        self.objective_ = chosen.objective
        self.history_ = chosen.history
        self.status_ = chosen.status
        self.n_iter_ = int(sum(f.n_iter for f in fits))
        self.swaps_ = int(sum(f.swaps for f in fits))
        self.info_ = chosen.info
        self.lipschitz_ = problem.L_now


class SparseLinearRegressionPath(_PathMixin, SparseLinearRegression):
    """The LS path (see `_PathMixin`); BIC = m·log(RSS/m) + s·log(m)."""

    def __init__(self, s_max=None, method="apg+", fit_intercept=True, normalize=True, polish=True, tol=1e-6,
                 max_iter=10_000, L=None, lipschitz="backtrack", time_limit=None, params=None):  # no s, no μ
        self.s_max = s_max
        self.method = method
        self.fit_intercept = fit_intercept
        self.normalize = normalize
        self.polish = polish
        self.tol = tol
        self.max_iter = max_iter
        self.L = L
        self.lipschitz = lipschitz
        self.time_limit = time_limit
        self.params = params

    def _bic(self, objective: np.ndarray, m: int) -> np.ndarray:
        return m * np.log(np.maximum(2 * objective, np.finfo(float).tiny) / m)


class SparseLogisticRegression(ClassifierMixin, _SparseBase):
    """min Σ log(1 + exp(−yᵢ(xᵢᵀw + b))) + μ‖w̃‖²/2 s.t. ‖w‖₀ ≤ s (problem (23)), two classes.

    Attributes: classes_ (the larger label is the positive class), coef_, intercept_, support_, s_,
    history_, status_, swaps_, lipschitz_. With normalize=True the ridge μ acts on the scaled
    coefficients (and on the intercept); μ = 1e-10 by default, as in the paper.
    """

    _loss = "logistic"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype="numeric")
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


class SparseLogisticRegressionPath(_PathMixin, SparseLogisticRegression):
    """The logistic path (see `_PathMixin`): s = 1 … s_max of (23), BIC = 2f + s·log(m) (2f is the
    deviance up to the tiny ridge μ‖w̃‖²)."""

    def __init__(self, s_max=None, method="apg+", fit_intercept=True, normalize=True, polish=True, tol=1e-6,
                 max_iter=10_000, mu=1e-10, L=None, lipschitz="backtrack", time_limit=None, params=None):
        self.s_max = s_max
        self.method = method
        self.fit_intercept = fit_intercept
        self.normalize = normalize
        self.polish = polish
        self.tol = tol
        self.max_iter = max_iter
        self.mu = mu
        self.L = L
        self.lipschitz = lipschitz
        self.time_limit = time_limit
        self.params = params

    def _bic(self, objective: np.ndarray, m: int) -> np.ndarray:
        return 2 * objective

"""Best-subset solvers from elsewhere, run on the same objective for side-by-side comparisons.

Every entry takes (X, y∈{−1,+1} or real, loss, s) and returns coefficients (no intercept; the
objective is recomputed from them by the caller). OMP comes with scikit-learn; abess is an
optional peer (``pip install -e ".[peers]"``): `available()` says which are installed, and the
core install never imports it.
"""
from __future__ import annotations

import importlib.util

import numpy as np
from sklearn.linear_model import OrthogonalMatchingPursuit

from .polish import column_norms


def available() -> dict[str, bool]:
    return {"abess": importlib.util.find_spec("abess") is not None}


def omp(X, y, loss: str, s: int, normalize: bool = False) -> np.ndarray:
    """scikit-learn's greedy OrthogonalMatchingPursuit (LS only), on raw or unit-norm columns."""
    if loss != "ls":
        raise ValueError("OMP minimises least squares only")
    X = X.toarray() if hasattr(X, "toarray") else X
    scale = np.where(column_norms(X) > 0, column_norms(X), 1.0) if normalize else np.ones(X.shape[1])
    model = OrthogonalMatchingPursuit(n_nonzero_coefs=s, fit_intercept=False).fit(X / scale, y)
    return model.coef_ / scale


def abess_fit(X, y, loss: str, s: int) -> np.ndarray:
    """abess (Zhu et al., PNAS 2020): splicing best-subset selection at exactly s, no intercept."""
    import abess  # optional peer

    if loss == "ls":
        model = abess.LinearRegression(support_size=[s], fit_intercept=False)
        model.fit(X, y)
    else:
        model = abess.LogisticRegression(support_size=[s], fit_intercept=False)
        model.fit(X, (np.asarray(y) > 0).astype(float))
    return np.asarray(model.coef_, dtype=float).ravel()

"""Best-subset solvers from elsewhere, run on the same objective for side-by-side comparisons.

Every entry takes (X, y∈{−1,+1} or real, loss, s) and returns coefficients (no intercept; the
objective is recomputed from them by the caller). OMP comes with scikit-learn; abess and skscope
are optional peers (``pip install -e ".[peers]"``): `available()` says which are installed, and the
core install never imports them.
"""
from __future__ import annotations

import importlib.util

import numpy as np
from sklearn.linear_model import OrthogonalMatchingPursuit

from .design import column_norms


def available() -> dict[str, bool]:
    return {name: importlib.util.find_spec(name) is not None for name in ("abess", "skscope")}


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


def skscope_fit(X, y, loss: str, s: int) -> np.ndarray:
    """skscope (Wang et al., JMLR 2024): splicing on an autodiff objective (jax, in float64), exactly s."""
    import jax  # optional peer (skscope depends on it)

    jax.config.update("jax_enable_x64", True)  # jax computes in float32 by default
    import jax.numpy as jnp
    from skscope import ScopeSolver

    Xj = jnp.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=jnp.float64)
    yj = jnp.asarray(y, dtype=jnp.float64)
    if loss == "ls":
        def objective(w):
            return 0.5 * jnp.sum((yj - Xj @ w) ** 2)
    else:
        def objective(w):
            return jnp.sum(jnp.logaddexp(0.0, -yj * (Xj @ w)))
    return np.asarray(ScopeSolver(X.shape[1], sparsity=s).solve(objective, jit=True), dtype=float)

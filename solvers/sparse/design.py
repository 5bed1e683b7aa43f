"""The matrix the estimators hand to the solvers: optional unit-norm columns and an intercept column.

Scaling the columns, X̃ = X D⁻¹ with D = diag(‖x_j‖) (1 for an all-zero column), leaves the ℓ0
problem unchanged (the same supports are feasible, w = D⁻¹w̃; only the tiny ridge μ of (23)
is measured in scaled units) but changes the path a local method takes: the gradient step and
hard thresholding compare |w̃_j| = ‖x_j‖|w_j| rather than raw magnitudes (issue 10: this alone
found better subsets in 10 of 14 real cases). The intercept is a last column c·1 that the
projection never drops (SparseProblem.n_free = 1); c = 1/√m in scaled coordinates.
Building X̃ costs one copy of X when either option is on (two when X is sparse and both are on).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .polish import column_norms


@dataclass
class Design:
    X: np.ndarray | sp.csr_matrix  # what the solver sees
    scale: np.ndarray  # x̃_j = x_j / scale_j for the n original columns
    intercept_value: float | None  # the constant of the last column, None without an intercept

    @classmethod
    def build(cls, X, *, normalize: bool, fit_intercept: bool) -> "Design":
        m, n = X.shape
        scale = np.ones(n)
        if normalize:
            norms = column_norms(X)
            scale = np.where(norms > 0, norms, 1.0)
        value = (1.0 / np.sqrt(m) if normalize else 1.0) if fit_intercept else None
        if sp.issparse(X):
            if normalize:
                X = sp.csr_matrix(X @ sp.diags(1.0 / scale))
            if fit_intercept:
                X = sp.hstack([X, sp.csr_matrix(np.full((m, 1), value))], format="csr")
        elif normalize or fit_intercept:  # one dense copy, scaled in place
            out = np.empty((m, n + int(fit_intercept)))
            np.divide(X, scale, out=out[:, :n])
            if fit_intercept:
                out[:, n] = value
            X = out
        return cls(X, scale, value)

    @property
    def n_free(self) -> int:
        return int(self.intercept_value is not None)

    def unscale(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """(coef, intercept) in the units of the original X."""
        n = self.scale.size
        return w[:n] / self.scale, (float(w[n] * self.intercept_value) if self.n_free else 0.0)

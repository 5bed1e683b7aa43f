"""Sparse family (seed 001, Alcantara & Lee, NeurIPS 2022): accelerated projected gradient
for ℓ0-constrained least squares and logistic regression.

    from solvers import sparse
    problem = sparse.make_problem(dataset, loss="ls", s=5)
    result = sparse.solve(problem, "apg+", tol=1e-6, max_iter=10_000)
"""
from __future__ import annotations

from ..core import Result, solve_with
from . import synthetic  # noqa: F401  (registers the family's generators)
from .estimators import (SparseLinearRegression, SparseLinearRegressionPath, SparseLogisticRegression,
                         SparseLogisticRegressionPath)
from .methods import METHODS
from .problem import PROBLEM_PARAMS, SparseProblem, make_problem, sparsity_from_ratio, prediction_score, train_test

TITLE = "Sparse best subset: accelerated projected gradient for ℓ0-constrained LS and logistic regression"
PAPER = ("R. J. Alcantara and C.-p. Lee, \"Accelerated Projected Gradient Algorithms for Sparsity Constrained "
         "Optimization Problems\", NeurIPS 2022")


def solve(problem: SparseProblem, method: str, *, tol: float = 1e-6, max_iter: int = 10_000,
          time_limit: float | None = None, callback=None, **params) -> Result:
    """Run one method of `METHODS` on ``problem``; the history has iter, time, objective, residual (24),
    grad_evals (GE), hess_vec (CG), support size and changes, extrapolation and Newton events."""
    return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit,
                      callback=callback, **params)


__all__ = ["solve", "METHODS", "PROBLEM_PARAMS", "make_problem", "SparseProblem", "sparsity_from_ratio",
           "prediction_score", "train_test", "SparseLinearRegression", "SparseLinearRegressionPath",
           "SparseLogisticRegression", "SparseLogisticRegressionPath", "TITLE", "PAPER"]

"""Held-out evaluation per task, and the baselines the paper compares with (single-task and pooled)."""
from __future__ import annotations

import numpy as np

from ..core import InputError
from .data import TaskData, from_tasks, task_index
from .methods import solve
from .problem import MultiTaskProblem, make_problem


def predictions(U: np.ndarray, b: np.ndarray, X: np.ndarray, tasks: np.ndarray | None) -> np.ndarray:
    """Scores for held-out rows: n × m (every task on every row) when ``tasks`` is None, else one per row."""
    if tasks is None:
        return X @ U + b
    return np.einsum("ij,ji->i", X, U[:, tasks]) + b[tasks]


def per_task_error(solution: dict, dataset, train: TaskData, test_rows: np.ndarray, loss: str) -> np.ndarray:
    """Test RMSE (least squares) or error rate (classification losses) per task; NaN for a task without test rows."""
    if len(test_rows) == 0:
        raise InputError("no test rows: lower the training share or pick a dataset with a test part")
    ds = dataset.subset(test_rows)
    tasks = task_index(dataset, train, test_rows)
    scores = predictions(solution["U"], solution["b"], ds.dense(), tasks)
    if tasks is None:  # shared X: every task on every row
        Y = ds.y if np.ndim(ds.y) == 2 else np.where(ds.y[:, None] == np.array(train.task_names)[None, :], 1.0, -1.0)
        columns = np.broadcast_to(np.arange(train.n_tasks), Y.shape)
    else:
        Y, columns = ds.y, tasks
    if loss == "least_squares":
        err = (scores - np.asarray(Y, float)) ** 2
    else:  # the task's own positive label, as the training data mapped it to +1
        positive = np.array([c[1] for c in train.classes], dtype=object)[columns]
        err = ((scores >= 0) != (np.asarray(Y, dtype=object) == positive)).astype(float)
    if tasks is None:
        out = err.mean(axis=0)
    else:
        counts = np.bincount(tasks, minlength=train.n_tasks)
        with np.errstate(invalid="ignore"):
            out = np.bincount(tasks, weights=err, minlength=train.n_tasks) / counts
    return np.sqrt(out) if loss == "least_squares" else out


def single_task(problem: MultiTaskProblem, tol: float = 1e-8) -> dict:
    """Independent tasks: h = 0 forces M = 0 and the coupling becomes (α+β)‖U‖² (digest §1.4)."""
    return solve(problem.with_params(h=0), "bcd", tol=tol, max_iter=200).solution


def pooled(problem: MultiTaskProblem, tol: float = 1e-8) -> dict:
    """One predictor for all tasks: every row in one task, the same ridge weight α + β."""
    data = problem.data
    one = from_tasks([(data.X, data.y)], problem.loss)  # labels are already ±1 for classification losses
    sol = solve(make_problem(one, loss=problem.loss, alpha=problem.alpha, beta=problem.beta, h=0,
                             intercept=problem.intercept), "bcd", tol=tol, max_iter=200).solution
    return {"U": np.repeat(sol["U"], data.n_tasks, axis=1), "b": np.repeat(sol["b"], data.n_tasks)}

"""Multi-task data in one stacked layout: rows of every task one after another.

Task ℓ owns rows ``starts[ℓ]:starts[ℓ+1]`` of X (N × d, one sample per row; the paper stores samples as
columns, X_ℓ ∈ R^{d×n_ℓ}) and of y. A shared design with a label matrix Y (n × m, the multi-label case
of §1.1 of the digest) is stacked by repeating X once per task, so every solver has one code path.

Everything a solver does with the data goes through three vectorised maps:
``scores(U, b)`` (x_iᵀu_{ℓ(i)} + b_ℓ for every row), ``back(r)`` (Σ_{i∈ℓ} r_i x_i for every task, a d × m
matrix) and ``bias_back(r)`` (Σ_{i∈ℓ} r_i).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..core import InputError, as_pm_one, check_array, check_finite, check_memory, check_same_length

CLASSIFICATION_LOSSES = ("logistic", "hinge")


@dataclass
class TaskData:
    X: np.ndarray  # (N, d), rows grouped by task
    y: np.ndarray  # (N,): real targets, or ±1 labels for classification losses
    starts: np.ndarray  # (m + 1,) row offsets, starts[0] = 0, starts[m] = N
    task_names: list = field(default_factory=list)
    classes: list = field(default_factory=list)  # per task, the original (negative, positive) labels

    def __post_init__(self) -> None:
        self.sizes = np.diff(self.starts)  # n_ℓ
        self.task_of_row = np.repeat(np.arange(self.n_tasks), self.sizes)
        self.row_weights = 1.0 / self.sizes[self.task_of_row]  # 1/n_ℓ: the per-task averaging of Eq. (8)

    @property
    def n_tasks(self) -> int:
        return len(self.starts) - 1

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def task(self, ell: int) -> tuple[np.ndarray, np.ndarray]:
        rows = slice(self.starts[ell], self.starts[ell + 1])
        return self.X[rows], self.y[rows]

    # -- the three maps every solver uses -----------------------------------
    def scores(self, U: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
        s = np.einsum("ij,ij->i", self.X, U.T[self.task_of_row])
        return s if b is None else s + b[self.task_of_row]

    def back(self, r: np.ndarray) -> np.ndarray:
        """Σ_{i in task ℓ} r_i x_i as column ℓ of a d × m matrix."""
        return np.add.reduceat(self.X * r[:, None], self.starts[:-1], axis=0).T

    def bias_back(self, r: np.ndarray) -> np.ndarray:
        return np.add.reduceat(r, self.starts[:-1])


def _finish(Xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], loss: str, names: list) -> TaskData:
    if not Xs:
        raise InputError("no tasks given; multi-task learning needs at least one task")
    d = Xs[0].shape[1]
    for ell, X in enumerate(Xs):
        if X.shape[1] != d:
            raise InputError(f"task {names[ell]} has {X.shape[1]} features but task {names[0]} has {d}; "
                             "every task must use the same features")
    N = sum(len(y) for y in ys)
    check_memory(8.0 * N * (d + 4), "the stacked multi-task data")
    classes, labels = [], []
    for ell, y in enumerate(ys):
        check_finite(y, f"y (the targets) of task {names[ell]}")  # a NaN target would only show up as "diverged"
        if loss in CLASSIFICATION_LOSSES:
            cls, pm = as_pm_one(y, what=f"task {names[ell]} under the {loss} loss (two classes per task)")
            classes.append(tuple(cls.tolist()))
            labels.append(pm)
        else:
            y = np.asarray(y)
            if y.dtype.kind not in "iuf":
                raise InputError(f"task {names[ell]} has non-numeric targets; least squares needs numbers")
            labels.append(y.astype(float))
    starts = np.concatenate([[0], np.cumsum([len(y) for y in ys])]).astype(np.intp)
    return TaskData(np.vstack(Xs), np.concatenate(labels), starts, list(names), classes)


def from_tasks(tasks: Sequence[tuple], loss: str = "least_squares") -> TaskData:
    """A list of (X_ℓ with samples as rows, y_ℓ) pairs."""
    Xs, ys = [], []
    for ell, pair in enumerate(tasks):
        if len(pair) != 2:
            raise InputError(f"task {ell} must be a pair (X, y), got {len(pair)} items")
        X = check_array(pair[0], f"X of task {ell}")
        y = np.asarray(pair[1])
        if y.ndim != 1:
            raise InputError(f"y of task {ell} must be 1-D, got shape {y.shape}")
        check_same_length(X, y, (f"X of task {ell}", f"y of task {ell}"))
        Xs.append(X)
        ys.append(y)
    return _finish(Xs, ys, loss, list(range(len(Xs))))


def from_shared(X, Y, loss: str = "least_squares", names: list | None = None) -> TaskData:
    """One design X (n × d) and a label matrix Y (n × m): task ℓ has labels Y[:, ℓ] on every row."""
    X = check_array(X, "X")
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise InputError(f"the label matrix must be 2-D (samples × tasks), got shape {Y.shape}")
    check_same_length(X, Y, ("X", "the label matrix"))
    names = list(range(Y.shape[1])) if names is None else list(names)
    return _finish([X] * Y.shape[1], [Y[:, ell] for ell in range(Y.shape[1])], loss, names)


def from_groups(X, y, groups, loss: str = "least_squares") -> TaskData:
    """Stacked rows with the task of each row in ``groups`` (School's layout)."""
    X = check_array(X, "X")
    y = np.asarray(y)
    groups = np.asarray(groups)
    check_same_length(X, y)
    check_same_length(X, groups, ("X", "groups"))
    names = list(np.unique(groups))
    order = [np.flatnonzero(groups == g) for g in names]
    return _finish([X[r] for r in order], [y[r] for r in order], loss, names)


def from_dataset(dataset, loss: str = "least_squares", rows: np.ndarray | None = None) -> TaskData:
    """Tasks from a platform Dataset: a label matrix (n × m), a task column (``groups``), or one-vs-rest
    tasks on a shared X for a classification dataset. ``rows`` picks the (training) rows."""
    ds = dataset if rows is None else dataset.subset(rows)
    X, y = ds.dense(), ds.y
    if y is None:
        raise InputError(f"{ds.name} has no targets")
    if np.ndim(y) == 2:
        return from_shared(X, y, loss, names=ds.meta.get("task_names"))
    if ds.groups is not None:
        return from_groups(X, y, ds.groups, loss)
    if ds.task == "classification" and len(ds.classes) > 2:
        Y = np.where(y[:, None] == ds.classes[None, :], 1.0, -1.0)
        return from_shared(X, Y, loss, names=ds.classes.tolist())
    raise InputError(f"{ds.name} has a single target; multi-task learning needs several tasks: a label matrix "
                     "(CSV columns y_* or task_*), a task column, or a classification set with ≥ 3 classes (one-vs-rest)")


def task_index(dataset, data: TaskData, rows: np.ndarray) -> np.ndarray | None:
    """For each of ``rows``, the index of its task in ``data`` (None for shared-X layouts: every task)."""
    if np.ndim(dataset.y) == 2 or dataset.groups is None:
        return None
    position = {name: ell for ell, name in enumerate(data.task_names)}
    groups = dataset.groups[rows]
    unknown = set(np.unique(groups).tolist()) - set(position)
    if unknown:
        raise InputError(f"task(s) {sorted(unknown)[:5]} have no training rows")
    return np.array([position[g] for g in groups.tolist()], dtype=np.intp)


def split_rows(dataset, test_fraction: float = 0.3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Train/test rows: the dataset's own ``test_mask`` if it has one, else a random split within each task."""
    n = dataset.n_samples
    if dataset.test_mask is not None:
        return np.flatnonzero(~dataset.test_mask), np.flatnonzero(dataset.test_mask)
    if not 0 <= test_fraction < 1:
        raise InputError(f"test fraction must be in [0, 1), got {test_fraction}")
    rng = np.random.default_rng(seed)
    groups = dataset.groups if dataset.groups is not None else np.zeros(n, dtype=int)
    train, test = [], []
    for g in np.unique(groups):
        rows = rng.permutation(np.flatnonzero(groups == g))
        n_test = min(int(round(test_fraction * rows.size)), rows.size - 1)
        test.append(rows[:n_test])
        train.append(rows[n_test:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))

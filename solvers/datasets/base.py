"""The `Dataset` every loader, generator and upload returns."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..core.errors import InputError
from ..core.validation import check_memory

TASKS = ("classification", "regression", "multitask")


@dataclass
class Dataset:
    """Samples and targets with what a page or solver needs to know about them.

    ``X`` is (n, d) dense or CSR, or (n, p, q) for matrix-valued samples.
    ``y`` is (n,) labels or targets, or (n, m) for several outputs.
    ``groups`` gives the task of each row when several tasks are stacked (School).
    ``image_shape`` says how a row of X reshapes into a picture (digits: (8, 8)).
    ``test_mask`` marks a predefined test part (pendigits, dna), else ``None``.
    ``meta["memory_budget"]`` (uploads set it) caps what densifying a sparse X may allocate.
    """

    name: str
    X: Any
    y: np.ndarray | None
    task: str
    description: str = ""
    source: str = ""
    groups: np.ndarray | None = None
    image_shape: tuple[int, int] | None = None
    test_mask: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}")

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return int(np.prod(self.X.shape[1:]))

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    @property
    def classes(self) -> np.ndarray:
        if self.task != "classification" or self.y is None:
            return np.empty(0)
        return np.unique(self.y)

    def summary(self) -> str:
        shape = " × ".join(map(str, self.X.shape))
        kind = "sparse" if self.is_sparse else "dense"
        extra = f", {len(self.classes)} classes" if self.task == "classification" else ""
        if self.groups is not None:
            extra += f", {len(np.unique(self.groups))} tasks"
        return f"{self.name}: {shape} ({kind}{extra})"

    def as_vectors(self) -> Any:
        """X with one row per sample (matrix samples flattened, C order)."""
        return self.X.reshape(self.X.shape[0], -1) if self.X.ndim == 3 else self.X

    def as_matrices(self) -> np.ndarray:
        """X as an (n, p, q) array of matrix samples, from ``image_shape`` when stored flat."""
        if self.X.ndim == 3:
            return np.asarray(self.X)
        if self.image_shape is None:
            raise InputError(f"{self.name} has vector samples with no image shape; pick a matrix dataset")
        return self.dense().reshape(self.X.shape[0], *self.image_shape)

    def dense(self) -> np.ndarray:
        X = self.as_vectors()
        if not sp.issparse(X):
            return np.asarray(X)
        check_memory(8.0 * X.shape[0] * X.shape[1], f"{self.name} as a dense {X.shape[0]} × {X.shape[1]} array",
                     budget=self.meta.get("memory_budget"))
        return X.toarray()

    def binary_task(self, positive: Any) -> "Dataset":
        """One-vs-rest relabelling: ``positive`` → +1, every other class → −1."""
        if self.task != "classification":
            raise InputError(f"{self.name} is not a classification dataset")
        if positive not in set(self.classes.tolist()):
            raise InputError(f"class {positive!r} is not in {self.name}; classes are {self.classes.tolist()}")
        y = np.where(self.y == positive, 1.0, -1.0)
        return Dataset(f"{self.name} ({positive} vs rest)", self.X, y, "classification", self.description,
                       self.source, self.groups, self.image_shape, self.test_mask, dict(self.meta))

    def subset(self, rows: np.ndarray, name: str | None = None) -> "Dataset":
        rows = np.asarray(rows)
        pick = (lambda a: None if a is None else a[rows])
        return Dataset(name or self.name, self.X[rows], pick(self.y), self.task, self.description, self.source,
                       pick(self.groups), self.image_shape, pick(self.test_mask), dict(self.meta))

"""Validation helpers: every check raises `InputError` with a message a user can act on."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import scipy.sparse as sp

from .errors import InputError

#: Default share of the machine's memory one problem may claim (override: SOLVERS_MEMORY_BUDGET in bytes).
MEMORY_SHARE = 0.5


def check_finite(a: Any, name: str = "X") -> None:
    data = a.data if sp.issparse(a) else np.asarray(a)
    if data.dtype.kind in "fc" and not np.isfinite(data).all():
        bad = int(np.size(data) - np.isfinite(data).sum())
        raise InputError(f"{name} has {bad} NaN or infinite value(s); remove or impute them first")


def check_array(
    a: Any,
    name: str = "X",
    *,
    ndim: int | tuple[int, ...] = 2,
    allow_sparse: bool = False,
    min_rows: int = 1,
    dtype=np.float64,
) -> np.ndarray | sp.csr_matrix:
    """A finite float array (or CSR matrix) of the given number of dimensions."""
    kind = getattr(getattr(a, "dtype", None), "kind", "")
    if kind == "c":
        raise InputError(f"{name} has complex values; these methods need real numbers (take .real or abs first)")
    if kind in ("S", "U", "V"):
        raise InputError(f"{name} must be numeric, got {a.dtype} values (encode text columns as numbers first)")
    if sp.issparse(a):
        if not allow_sparse:
            raise InputError(f"{name} is a sparse matrix; this method needs a dense array")
        a = sp.csr_matrix(a, dtype=dtype)
    else:
        try:
            a = np.asarray(a, dtype=dtype)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be numeric (encode text columns as numbers first)") from None
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if a.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise InputError(f"{name} must be {want}, got shape {a.shape}")
    if a.shape[0] < min_rows:
        raise InputError(f"{name} needs at least {min_rows} row(s), got {a.shape[0]}")
    if 0 in a.shape:
        raise InputError(f"{name} is empty (shape {a.shape})")
    check_finite(a, name)
    return a


def check_same_length(X: Any, y: Any, names: tuple[str, str] = ("X", "y")) -> None:
    if X.shape[0] != len(y):
        raise InputError(f"{names[0]} has {X.shape[0]} rows but {names[1]} has {len(y)} entries; they must match")


def check_labels(
    y: Any,
    *,
    n_classes: int | None = None,
    min_classes: int = 2,
    min_per_class: int = 1,
    what: str = "this method",
) -> tuple[np.ndarray, np.ndarray]:
    """Return (classes, codes) with codes in 0..K-1; refuse NaN, floats that are not integers, too few classes."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"labels must be 1-D, got shape {y.shape}")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise InputError("labels contain NaN or infinite values")
        if not np.all(y == np.round(y)):
            raise InputError("labels look continuous (non-integer values); classification needs class labels")
    elif y.dtype.kind == "O":
        kinds = {type(v) for v in y.tolist()}
        if not all(issubclass(k, (str, int, np.integer)) and k is not bool for k in kinds):
            names = ", ".join(sorted(k.__name__ for k in kinds))
            raise InputError(f"labels must be integers or strings, got values of type {names}")
        if len(kinds) > 1 and str in kinds:
            raise InputError("labels mix strings and numbers; use one kind")
    elif y.dtype.kind not in "iubUS":
        raise InputError(f"labels must be integers or strings, got dtype {y.dtype}")
    classes, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
    if n_classes is not None and len(classes) != n_classes:
        raise InputError(f"y has {len(classes)} class(es) {list(classes)[:10]}; {what} needs exactly {n_classes}")
    if len(classes) < min_classes:
        raise InputError(f"y has {len(classes)} class(es); {what} needs at least {min_classes}")
    if counts.min() < min_per_class:
        small = classes[counts.argmin()]
        raise InputError(f"class {small!r} has {counts.min()} sample(s); {what} needs at least {min_per_class} per class")
    return classes, codes


def as_pm_one(y: Any, what: str = "this method") -> tuple[np.ndarray, np.ndarray]:
    """Binary labels mapped to −1/+1 (the larger label is +1). Returns (classes, y_pm)."""
    classes, codes = check_labels(y, n_classes=2, what=what)
    return classes, np.where(codes == 1, 1.0, -1.0)


def memory_budget() -> int:
    """Bytes one problem may use: SOLVERS_MEMORY_BUDGET, else half of physical memory."""
    env = os.environ.get("SOLVERS_MEMORY_BUDGET")
    if env:
        return int(float(env))
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 * 2**30
    return int(total * MEMORY_SHARE)


def format_bytes(n: float, decimals: int = 1) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.{decimals}f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError("unreachable")


def check_memory(n_bytes: float, what: str, budget: int | None = None) -> None:
    """Refuse work whose estimated footprint exceeds the budget, naming both numbers."""
    budget = memory_budget() if budget is None else budget
    if n_bytes > budget:
        # as many decimals as it takes for the two numbers to differ (a9a's 19 536 rows: "11.8 GiB, more than the
        # 11.8 GiB budget" read as a contradiction; now 11.84 and 11.76)
        decimals = next((k for k in range(1, 6) if format_bytes(n_bytes, k) != format_bytes(budget, k)), 6)
        raise InputError(
            f"{what} needs about {format_bytes(n_bytes, decimals)}, more than the {format_bytes(budget, decimals)} "
            "budget; use fewer samples or features (or raise SOLVERS_MEMORY_BUDGET)"
        )

"""Validated uploads: CSV, LIBSVM, .npz and .mat. Nothing uploaded is executed or unpickled."""
from __future__ import annotations

import io
from pathlib import PurePath

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..core.errors import InputError
from ..core.validation import check_finite, format_bytes
from .base import Dataset
from .readers import read_mat, read_npz, read_svmlight

MAX_UPLOAD_BYTES = 50 * 2**20
LABEL_NAMES = ("y", "label", "labels", "target", "class")
FORMATS = {".csv": "csv", ".libsvm": "libsvm", ".svm": "libsvm", ".svmlight": "libsvm", ".txt": "libsvm",
           ".npz": "npz", ".mat": "mat"}


def _infer_task(y: np.ndarray) -> str:
    if y.ndim == 2:
        return "multitask"
    if y.dtype.kind in "OUSb":
        return "classification"
    values = np.unique(y)
    integral = y.dtype.kind in "iu" or np.all(values == np.round(values))
    return "classification" if integral and len(values) <= max(20, int(0.05 * len(y))) else "regression"


def _finish(name: str, X, y, groups=None) -> Dataset:
    if X.ndim not in (2, 3) or X.shape[0] == 0 or 0 in X.shape:
        raise InputError(f"features must be a non-empty 2-D table or a stack of matrices, got shape {X.shape}")
    check_finite(X, "the features")
    if y is None:
        raise InputError("no label column found; name it one of " + ", ".join(LABEL_NAMES))
    y = np.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise InputError(f"{X.shape[0]} samples but {y.shape[0]} labels; they must match")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise InputError("the labels contain NaN or infinite values")
    task = "multitask" if groups is not None else _infer_task(y)
    return Dataset(name, X, y, task, "uploaded file", "upload", groups=groups)


def _parse_csv(name: str, raw: bytes, label_column: str | None) -> Dataset:
    try:
        df = pd.read_csv(io.BytesIO(raw))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"not a readable CSV file: {exc}") from None
    if df.shape[1] < 2:
        raise InputError("a CSV upload needs at least one feature column and one label column")
    lower = {c.lower(): c for c in map(str, df.columns)}
    if label_column is not None:
        if label_column not in df.columns:
            raise InputError(f"label column {label_column!r} not in the file; columns: {list(df.columns)[:20]}")
        label_cols = [label_column]
    else:
        label_cols = [c for c in df.columns if str(c).lower().startswith(("y_", "task_"))]
        if not label_cols:
            named = [lower[n] for n in LABEL_NAMES if n in lower]
            label_cols = named[:1] or [df.columns[-1]]
    groups = None
    if "task" in lower and lower["task"] not in label_cols:
        groups = df.pop(lower["task"]).to_numpy()
    y = df[label_cols].to_numpy()
    y = y[:, 0] if len(label_cols) == 1 else y.astype(float)
    features = df.drop(columns=label_cols)
    bad = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
    if bad:
        raise InputError(f"feature column(s) {bad[:5]} are not numeric; encode them first")
    if features.isna().any().any():
        raise InputError(f"{int(features.isna().sum().sum())} missing value(s) in the features; fill or drop them")
    return _finish(name, features.to_numpy(dtype=float), y, groups)


def _parse_arrays(name: str, arrays: dict) -> Dataset:
    keys = {k.split("/")[-1].lower(): k for k in arrays}
    xk = next((keys[k] for k in ("x", "data", "features") if k in keys), None)
    yk = next((keys[k] for k in LABEL_NAMES if k in keys), None)
    if xk is None:
        raise InputError(f"no feature array named X found; the file holds {sorted(arrays)[:10]}")
    X = arrays[xk]
    X = sp.csr_matrix(X, dtype=float) if sp.issparse(X) else np.asarray(X, dtype=float)
    y = None if yk is None else np.ravel(arrays[yk]) if np.ndim(arrays[yk]) == 2 and 1 in np.shape(arrays[yk]) else arrays[yk]
    return _finish(name, X, y)


def parse_upload(filename: str, raw: bytes, *, label_column: str | None = None,
                 max_bytes: int = MAX_UPLOAD_BYTES) -> Dataset:
    """Turn an uploaded file into a Dataset, or raise InputError saying what is wrong."""
    if len(raw) > max_bytes:
        raise InputError(f"{filename} is {format_bytes(len(raw))}; uploads are limited to {format_bytes(max_bytes)}")
    if not raw:
        raise InputError(f"{filename} is empty")
    suffix = PurePath(filename).suffix.lower()
    fmt = FORMATS.get(suffix)
    name = PurePath(filename).stem
    if fmt is None:
        raise InputError(f"{filename}: unsupported file type {suffix!r}; upload one of {', '.join(sorted(FORMATS))}")
    if fmt == "csv":
        return _parse_csv(name, raw, label_column)
    if fmt == "libsvm":
        X, y = read_svmlight(io.BytesIO(raw))
        return _finish(name, X, y)
    if fmt == "npz":
        return _parse_arrays(name, read_npz(io.BytesIO(raw)))
    return _parse_arrays(name, read_mat(io.BytesIO(raw)))

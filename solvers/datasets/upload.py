"""Validated uploads: CSV, LIBSVM, .npz and .mat. Nothing uploaded is executed, unpickled or opened by name.

The upload's file name is only shown (its extension picks the reader); the bytes go to
the readers in `untrusted`, which check every declared size against the upload budget
before anything is decompressed or allocated.
"""
from __future__ import annotations

import io
import unicodedata
from pathlib import PureWindowsPath
from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..core.errors import InputError
from ..core.validation import check_finite, format_bytes
from .base import Dataset
from .limits import upload_budget
from .untrusted import check_csv_size, read_mat_upload, read_npz_upload, read_svmlight_upload

MAX_UPLOAD_BYTES = 50 * 2**20
FEATURE_NAMES = ("x", "data", "features")
LABEL_NAMES = ("y", "label", "labels", "target", "class")
FORMATS = {".csv": "csv", ".libsvm": "libsvm", ".svm": "libsvm", ".svmlight": "libsvm", ".txt": "libsvm",
           ".npz": "npz", ".mat": "mat"}
MAX_NAME_CHARS = 80
NAME_PUNCTUATION = " ._-+()"


def display_name(filename: str) -> str:
    """The upload's name for titles: its last component, without directories, extension, control characters
    or markdown/HTML punctuation (pages put dataset names into markdown)."""
    stem = PureWindowsPath(filename).stem  # splits on both / and \
    shown = "".join(c for c in stem if (c.isalnum() or c in NAME_PUNCTUATION) and unicodedata.category(c)[0] != "C")
    return shown.strip()[:MAX_NAME_CHARS] or "upload"


def _infer_task(y: np.ndarray) -> str:
    if y.ndim == 2:
        return "multitask"
    if y.dtype.kind in "OUSb":
        return "classification"
    values = np.unique(y)
    integral = y.dtype.kind in "iu" or np.all(values == np.round(values))
    return "classification" if integral and len(values) <= max(20, int(0.05 * len(y))) else "regression"


def _finish(filename: str, X, y, groups=None) -> Dataset:
    if X.ndim not in (2, 3) or X.shape[0] == 0 or 0 in X.shape:
        raise InputError(f"{filename}: features must be a non-empty 2-D table or a stack of matrices, "
                         f"got shape {X.shape}")
    check_finite(X, f"{filename}: the features")
    if y is None:
        raise InputError(f"{filename}: no label column found; name it one of " + ", ".join(LABEL_NAMES))
    y = np.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise InputError(f"{filename}: {X.shape[0]} samples but {y.shape[0]} labels; they must match")
    if y.dtype.kind == "c" or y.dtype.kind == "f" and not np.isfinite(y).all():
        raise InputError(f"{filename}: the labels contain NaN, infinite or complex values; fix or drop those rows")
    task = "multitask" if groups is not None else _infer_task(y)
    return Dataset(display_name(filename), X, y, task, "uploaded file", "upload", groups=groups,
                   meta={"memory_budget": upload_budget()})


def _parse_csv(filename: str, raw: bytes, label_column: str | None) -> Dataset:
    check_csv_size(filename, raw)
    try:
        df = pd.read_csv(io.BytesIO(raw))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError, ValueError) as exc:
        raise InputError(f"{filename} is not a readable CSV file ({exc}); save it as comma-separated UTF-8 "
                         "text with one header line") from None
    if df.shape[1] < 2:
        raise InputError(f"{filename}: a CSV upload needs at least one feature column and one label column")
    lower = {c.lower(): c for c in map(str, df.columns)}
    if label_column is not None:
        if label_column not in df.columns:
            raise InputError(f"{filename}: label column {label_column!r} not in the file; "
                             f"columns: {list(df.columns)[:20]}")
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
    bad = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])
           or pd.api.types.is_complex_dtype(features[c])]
    if bad:
        raise InputError(f"{filename}: feature column(s) {bad[:5]} are not numeric; encode them first")
    if features.isna().any().any():
        raise InputError(f"{filename}: {int(features.isna().sum().sum())} missing value(s) in the features; "
                         "fill or drop them")
    return _finish(filename, features.to_numpy(dtype=float), y, groups)


def _array_chooser(filename: str):
    """Picks the feature array (X, data or features) and the label array (y, label, ...) by name."""
    def choose(names: Sequence[str]) -> list[str]:
        keys = {str(n).split("/")[-1].lower(): n for n in names}
        xk = next((keys[k] for k in FEATURE_NAMES if k in keys), None)
        if xk is None:
            raise InputError(f"{filename}: no feature array named X found; the file holds {sorted(names)[:10]}")
        yk = next((keys[k] for k in LABEL_NAMES if k in keys), None)
        return [xk] if yk is None else [xk, yk]
    return choose


def _parse_arrays(filename: str, arrays: dict) -> Dataset:
    xk, *rest = arrays  # the chooser's order: features, then labels when present
    X = arrays[xk]
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=float)
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            raise InputError(f"{filename}: the features {xk!r} have dtype {X.dtype}; they must be real numbers")
        X = X.astype(float)
    y = None
    if rest:
        y = arrays[rest[0]]
        y = y.toarray() if sp.issparse(y) else np.asarray(y)
        y = np.ravel(y) if y.ndim == 2 and 1 in y.shape else y
    return _finish(filename, X, y)


def parse_upload(filename: str, raw: bytes, *, label_column: str | None = None,
                 max_bytes: int = MAX_UPLOAD_BYTES) -> Dataset:
    """Turn an uploaded file's bytes into a Dataset, or raise InputError saying what is wrong.

    ``filename`` only picks the reader and names the result; it is never opened.
    """
    if len(raw) > max_bytes:
        raise InputError(f"{filename} is {format_bytes(len(raw))}; uploads are limited to {format_bytes(max_bytes)}")
    if not raw:
        raise InputError(f"{filename} is empty")
    suffix = PureWindowsPath(filename).suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None:
        raise InputError(f"{filename}: unsupported file type {suffix!r}; upload one of {', '.join(sorted(FORMATS))}")
    if fmt == "csv":
        return _parse_csv(filename, raw, label_column)
    if fmt == "libsvm":
        return _finish(filename, *read_svmlight_upload(filename, raw))
    reader = read_npz_upload if fmt == "npz" else read_mat_upload
    return _parse_arrays(filename, reader(filename, raw, _array_chooser(filename)))

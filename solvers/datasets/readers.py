"""Readers for the file formats the papers' data come in. None of them unpickles anything.

Each takes a path or a binary file object and raises `InputError` when the
content is not what its name claims.
"""
from __future__ import annotations

import bz2
import gzip
import io
import math
import struct
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ..core.errors import InputError
from ..core.validation import check_memory
from .untrusted import HDF5_SIGNATURE, hdf5_inventory, is_mat_v73, read_npz_upload

__all__ = ["HDF5_SIGNATURE", "is_mat_v73", "open_maybe_compressed", "read_idx", "read_mat", "read_npz", "read_svmlight"]


def open_maybe_compressed(path: str | Path) -> IO[bytes]:
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def read_svmlight(source: str | Path | IO[bytes], n_features: int | None = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """LIBSVM / svmlight text (plain, .gz or .bz2) → (CSR matrix, labels)."""
    try:
        if isinstance(source, (str, Path)):
            with open_maybe_compressed(source) as f:
                X, y = load_svmlight_file(f, n_features=n_features)
        else:
            X, y = load_svmlight_file(source, n_features=n_features)
    except OverflowError:
        raise InputError(f"{_label(source)}: a feature index is too large for any machine; "
                         "LIBSVM indices must number the features 1, 2, ..., d") from None
    except (ValueError, UnicodeDecodeError, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{_label(source)} is not a valid LIBSVM/svmlight file: {exc}") from None
    return sp.csr_matrix(X), y


def read_mat(source: str | Path | IO[bytes]) -> dict[str, Any]:
    """MATLAB .mat: v5 through scipy, v7.3 (HDF5) through h5py. Returns {name: array or h5py object}.

    For v7.3 the datasets are read eagerly into numpy arrays (MATLAB's column-major
    layout shows up as transposed arrays; callers transpose as documented).
    """
    data = Path(source).read_bytes() if isinstance(source, (str, Path)) else source.read()
    if is_mat_v73(data[:1024]):
        import h5py

        try:
            with h5py.File(io.BytesIO(data), "r") as f:
                out: dict[str, Any] = {}
                for name, obj in hdf5_inventory(_label(source), f).items():  # refuses links and external data
                    if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "biuf":
                        check_memory(obj.dtype.itemsize * float(np.prod(obj.shape or ())), f"{_label(source)}: {name}")
                        out[name] = obj[()]
                return out
        except (OSError, ValueError, TypeError, KeyError, RuntimeError) as exc:
            raise InputError(f"{_label(source)} is not a readable MATLAB v7.3 (HDF5) file: {exc}") from None
    try:
        return {k: v for k, v in scipy.io.loadmat(io.BytesIO(data)).items() if not k.startswith("__")}
    except (scipy.io.matlab.MatReadError, ValueError, TypeError, NotImplementedError, OSError, EOFError, IndexError,
            KeyError, OverflowError, struct.error, zlib.error) as exc:
        raise InputError(f"{_label(source)} is not a readable MATLAB .mat file: {exc}") from None


def read_idx(source: str | Path) -> np.ndarray:
    """MNIST IDX (optionally .gz): magic 0x0000 08 NN, then NN big-endian int32 dims, then uint8 data."""
    name = _label(source)
    try:
        with open_maybe_compressed(source) as f:
            raw = f.read()
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(f"{name} is not a readable IDX file: {exc}") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise InputError(f"{name} is not an IDX file of unsigned bytes")
    ndim = raw[3]
    offset = 4 + 4 * ndim
    if len(raw) < offset:
        raise InputError(f"{name}: the IDX header declares {ndim} dimensions but the file ends after {len(raw)} bytes")
    dims = tuple(int(d) for d in np.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    if any(d < 0 for d in dims) or len(raw) - offset != math.prod(dims):
        raise InputError(f"{name}: IDX header says {dims} but the payload has {len(raw) - offset} bytes")
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(dims)


def read_npz(source: str | Path | IO[bytes]) -> dict[str, np.ndarray]:
    """NumPy .npz, never unpickled, with the declared-size checks an upload gets."""
    raw = Path(source).read_bytes() if isinstance(source, (str, Path)) else source.read()
    return read_npz_upload(_label(source), raw, choose=list)


def _label(source: Any) -> str:
    """How messages name a source: the file's name, or what it is when it has none."""
    return Path(source).name if isinstance(source, (str, Path)) else getattr(source, "name", None) or "the file"

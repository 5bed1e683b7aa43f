"""Readers for the file formats the papers' data come in. None of them unpickles anything.

Each takes a path or a binary file object and raises `InputError` when the
content is not what its name claims.
"""
from __future__ import annotations

import bz2
import gzip
import io
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ..core.errors import InputError

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


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
    except (ValueError, UnicodeDecodeError, OSError, EOFError) as exc:
        raise InputError(f"not a valid LIBSVM/svmlight file: {exc}") from None
    return sp.csr_matrix(X), y


def is_mat_v73(head: bytes) -> bool:
    """MATLAB v7.3 files are HDF5 with a 512-byte user block before the signature."""
    return head[:8] == HDF5_SIGNATURE or head[512:520] == HDF5_SIGNATURE


def read_mat(source: str | Path | IO[bytes]) -> dict[str, Any]:
    """MATLAB .mat: v5 through scipy, v7.3 (HDF5) through h5py. Returns {name: array or h5py object}.

    For v7.3 the datasets are read eagerly into numpy arrays (MATLAB's column-major
    layout shows up as transposed arrays; callers transpose as documented).
    """
    data = Path(source).read_bytes() if isinstance(source, (str, Path)) else source.read()
    if is_mat_v73(data[:1024]):
        import h5py

        out: dict[str, Any] = {}
        with h5py.File(io.BytesIO(data), "r") as f:
            def visit(name: str, obj: Any) -> None:
                if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "biuf":
                    out[name] = obj[()]
            f.visititems(visit)
        return out
    try:
        return {k: v for k, v in scipy.io.loadmat(io.BytesIO(data)).items() if not k.startswith("__")}
    except (ValueError, TypeError, NotImplementedError, OSError) as exc:
        raise InputError(f"not a readable MATLAB .mat file: {exc}") from None


def read_idx(source: str | Path) -> np.ndarray:
    """MNIST IDX (optionally .gz): magic 0x0000 08 NN, then NN big-endian int32 dims, then uint8 data."""
    with open_maybe_compressed(source) as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise InputError(f"{source} is not an IDX file of unsigned bytes")
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">i4", count=ndim, offset=4)
    offset = 4 + 4 * ndim
    if len(raw) - offset != int(np.prod(dims)):
        raise InputError(f"{source}: IDX header says {tuple(dims)} but the payload has {len(raw) - offset} bytes")
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(tuple(int(d) for d in dims))


def read_npz(source: str | Path | IO[bytes]) -> dict[str, np.ndarray]:
    """NumPy .npz without pickles: object arrays are refused."""
    try:
        with np.load(source, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except ValueError as exc:
        raise InputError(f"not a plain .npz archive (object arrays are not accepted): {exc}") from None
    except (OSError, EOFError) as exc:
        raise InputError(f"not a readable .npz file: {exc}") from None

"""Readers for uploaded bytes: declared sizes are checked before anything is inflated or allocated.

An upload is hostile until proven otherwise. Each reader here

* works on the bytes it is given (the upload's name is only ever shown, never opened);
* reads the sizes the file declares (zip directory, .npy headers, MATLAB tags and
  dimensions, HDF5 shapes, CSV columns × rows, the largest LIBSVM index) and checks
  them against `limits.upload_budget()` before decompressing or allocating;
* decompresses at most what was declared, so a header that lies cannot grow memory;
* refuses anything that could reach outside the upload (HDF5 external storage,
  external or soft links, virtual datasets) and anything that would be unpickled;
* turns every third-party parser failure (zipfile, zlib, h5py, scipy.io, svmlight)
  into an `InputError` that names the file and the problem.
"""
from __future__ import annotations

import io
import struct
import zipfile
import zlib
from math import prod
from typing import Callable, Sequence

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from ..core.errors import InputError
from ..core.validation import format_bytes
from .limits import check_upload_memory

#: Chooses, from the array names a file holds, the ones to load (features first, then labels).
Chooser = Callable[[Sequence[str]], Sequence[str]]

NPY_MAGIC = b"\x93NUMPY"
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
MAX_ARCHIVE_MEMBERS = 64          # np.savez writes one member per array; X and y need two
MAX_NPY_HEADER = 10_000           # bytes; numpy's own default limit for untrusted headers
MAX_CSV_COLUMNS = 20_000          # pandas spends ~40 µs and several KiB per column
FLOAT_BYTES = 8                   # every feature array ends as float64
WORKING_VECTORS = 32              # length-d vectors a solver keeps (iterates, gradients, momentum, ...)
MAX_HDF5_OBJECTS = 10_000
MAX_HDF5_DEPTH = 16
MAX_ATTRIBUTE_BYTES = 64
MATLAB_NUMERIC = {"double", "single", "logical", "sparse", "int8", "uint8", "int16", "uint16",
                  "int32", "uint32", "int64", "uint64"}
MATLAB_REFUSED = {"cell": "a cell array", "struct": "a struct", "char": "text (a char array)",
                  "object": "a MATLAB object", "function": "a function handle", "opaque": "an opaque object"}
SAVE_NUMERIC = "save X (samples × features) and y as plain numeric arrays"


def is_mat_v73(head: bytes) -> bool:
    """MATLAB v7.3 files are HDF5 with a 512-byte user block before the signature."""
    return head[:8] == HDF5_SIGNATURE or head[512:520] == HDF5_SIGNATURE


def looks_like(raw: bytes) -> str:
    """What the first bytes of a file say it is, for messages about wrong extensions."""
    head = raw[:1024]
    if head.startswith(NPY_MAGIC):
        return "a single .npy array"
    if head.startswith(b"PK"):
        return "a zip archive"
    if head[:1] == b"\x80" and head[1:2] in bytes(range(2, 6)):
        return "a Python pickle"
    if is_mat_v73(head):
        return "an HDF5 file"
    if head.startswith(b"MATLAB"):
        return "a MATLAB file"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file"
    return "something else"


# -- .npz --------------------------------------------------------------------------------------
def _npy_header(member: io.BufferedIOBase, filename: str, name: str) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran_order, dtype, header length) of one .npy member, reading only its header."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(member, max_header_size=MAX_NPY_HEADER)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(member, max_header_size=MAX_NPY_HEADER)
        else:
            raise InputError(f"{filename}: {name} uses .npy format version {version}; save it with numpy.savez")
    except InputError:
        raise
    except (ValueError, EOFError, OSError, SyntaxError, zipfile.BadZipFile, zlib.error) as exc:
        raise InputError(f"{filename}: {name} is corrupt or not a .npy array ({exc}); {SAVE_NUMERIC}") from None
    return tuple(int(s) for s in shape), bool(fortran), dtype, member.tell()


def _check_npy_dtype(filename: str, name: str, dtype: np.dtype) -> None:
    if dtype.hasobject:
        raise InputError(f"{filename}: {name} holds Python objects, which would have to be unpickled; "
                         f"pickles are never loaded: {SAVE_NUMERIC}")
    if dtype.names is not None or dtype.kind not in "biufUS":
        raise InputError(f"{filename}: {name} has dtype {dtype} ({'complex' if dtype.kind == 'c' else 'not numeric'}); "
                         f"{SAVE_NUMERIC}")


def read_npz_upload(filename: str, raw: bytes, choose: Chooser) -> dict[str, np.ndarray]:
    """The chosen arrays of an uploaded .npz, read without pickles and within the upload budget."""
    if not raw.startswith(b"PK"):
        raise InputError(f"{filename} is not a .npz archive (it looks like {looks_like(raw)}); "
                         "save the arrays with numpy.savez(file, X=..., y=...)")
    if raw.count(b"PK\x01\x02") > MAX_ARCHIVE_MEMBERS:  # central-directory entries, counted before zipfile reads them
        raise InputError(f"{filename} holds more than {MAX_ARCHIVE_MEMBERS} members; a .npz upload needs only X and y")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            not_npy = [n for n in infos if not n.endswith(".npy")]
            if not_npy:
                raise InputError(f"{filename} holds {not_npy[0]!r}, which is not a .npy array; "
                                 "save the arrays with numpy.savez(file, X=..., y=...)")
            if any(info.flag_bits & 0x1 for info in infos.values()):
                raise InputError(f"{filename} is encrypted; upload an unencrypted .npz")
            # zipfile bounds what deflate inflates per read, not what bzip2 or lzma do: accept only what numpy writes
            if any(info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED) for info in infos.values()):
                raise InputError(f"{filename} uses a compression numpy does not write; "
                                 "save it with numpy.savez or numpy.savez_compressed")
            check_upload_memory(sum(info.file_size for info in infos.values()), filename,
                                f"the archive's {len(infos)} member(s) (uncompressed sizes from the zip directory)")
            wanted = [n + ".npy" for n in choose([n[:-4] for n in infos])]
            return {name[:-4]: _read_npy_member(archive, infos[name], filename) for name in wanted}
    except InputError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
            NotImplementedError) as exc:
        raise InputError(f"{filename} is not a readable .npz archive (truncated or corrupt: {exc}); "
                         "save it again with numpy.savez") from None


def _read_npy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, filename: str) -> np.ndarray:
    name = info.filename
    with archive.open(info) as member:
        shape, fortran, dtype, header_len = _npy_header(member, filename, name)
        _check_npy_dtype(filename, name, dtype)
        n_bytes = prod(shape) * dtype.itemsize
        if header_len + n_bytes != info.file_size:
            raise InputError(f"{filename}: {name} declares shape {shape} of {dtype} ({format_bytes(n_bytes)}) but "
                             f"stores {format_bytes(max(info.file_size - header_len, 0))}; the file is truncated "
                             "or forged: save it again with numpy.savez")
        check_upload_memory(2 * n_bytes + FLOAT_BYTES * prod(shape), filename, f"{name} of shape {shape}")
        data = member.read(n_bytes)  # reaching the declared end makes zipfile check the CRC
    if len(data) != n_bytes:
        raise InputError(f"{filename}: {name} ends after {len(data)} of {n_bytes} bytes; the file is truncated")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


# -- MATLAB .mat ---------------------------------------------------------------------------------
MI_MATRIX, MI_COMPRESSED = 14, 15
MI_TYPES_IN_MATRIX = {1, 2, 3, 4, 5, 6, 7, 9, 12, 13, MI_MATRIX, 16, 17, 18}  # level-5 data types, table 1-1
MAX_MAT_NESTING = 32


def _mat5_inflate(filename: str, raw: bytes) -> bytes:
    """A MATLAB v5 file with every compressed variable inflated, never past the size its tag declares.

    Level-5 files are a 128-byte header, then one element per variable: an 8-byte tag
    (type, byte count) and the body. A compressed element (type 15) holds a zlib stream
    whose first 8 inflated bytes are the variable's own tag, declaring its inflated size:
    those sizes are checked against the budget before anything else is inflated.
    """
    order = {b"IM": "<", b"MI": ">"}.get(raw[126:128])
    if order is None or len(raw) < 136:
        raise InputError(f"{filename} is not a MATLAB v5 file (bad header); save it with MATLAB's save -v7")
    parts, pos, declared = [raw[:128]], 128, 0
    while pos + 8 <= len(raw):
        mdtype, size = struct.unpack(order + "II", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + size]
        if len(body) < size:
            raise InputError(f"{filename} ends inside a variable (declared {size} bytes, {len(body)} present); "
                             "the file is truncated")
        if mdtype == MI_MATRIX:
            parts.append(raw[pos:pos + 8 + size])
        elif mdtype == MI_COMPRESSED:
            inflater = zlib.decompressobj()
            tag = inflater.decompress(body, 8)
            if len(tag) < 8:
                raise InputError(f"{filename}: a compressed variable is corrupt; save the file again")
            inner_type, inner_size = struct.unpack(order + "II", tag)
            declared += inner_size
            check_upload_memory(3 * declared, filename, f"variables declaring {format_bytes(declared)} uncompressed")
            chunks, have, rest = [tag], 0, inflater.unconsumed_tail
            while have < inner_size and (rest or not inflater.eof):
                chunk = inflater.decompress(rest, inner_size - have)
                rest = inflater.unconsumed_tail
                if not chunk:
                    break
                chunks.append(chunk)
                have += len(chunk)
            if have < inner_size or inner_type != MI_MATRIX:
                raise InputError(f"{filename}: a compressed variable inflates to {have} of its declared "
                                 f"{inner_size} bytes; the file is truncated or corrupt")
            parts.append(b"".join(chunks))
        else:
            raise InputError(f"{filename}: unexpected MATLAB element type {mdtype} at byte {pos}; "
                             "the file is corrupt or not a .mat file")
        pos += 8 + size
    inflated = b"".join(parts)
    _check_mat5_elements(filename, inflated, order, 128, len(inflated), 0)
    return inflated


def _check_mat5_elements(filename: str, body: bytes, order: str, start: int, end: int, depth: int) -> None:
    """Every tag inside [start, end) names a level-5 data type and fits its parent.

    scipy's compiled reader trusts these tags: an unknown type code makes it crash the
    whole process (found by fuzzing), so a bad tag must be refused before it runs.
    """
    if depth > MAX_MAT_NESTING:
        raise InputError(f"{filename}: variables nest deeper than {MAX_MAT_NESTING} levels; {SAVE_NUMERIC}")
    pos = start
    while pos < end:
        if pos + 8 > end:
            raise InputError(f"{filename}: a variable ends inside a tag at byte {pos}; the file is truncated or corrupt")
        word, size = struct.unpack_from(order + "II", body, pos)
        small = word >> 16  # small data element: byte count in the upper half, data in the tag's second word
        mdtype, size = (word & 0xFFFF, small) if small else (word, size)
        if mdtype not in MI_TYPES_IN_MATRIX or (small and size > 4) or (not small and pos + 8 + size > end):
            raise InputError(f"{filename}: bad MATLAB element (type {mdtype}, {size} bytes) at byte {pos}; "
                             "the file is corrupt: save it again")
        if mdtype == MI_MATRIX:
            _check_mat5_elements(filename, body, order, pos + 8, pos + 8 + size, depth + 1)
        step = 8 if small else 8 + size
        pos += step + (-step % 8 if depth else 0)  # sub-elements are padded to 8 bytes, variables are not


def _check_matlab_class(filename: str, name: str, cls: str) -> None:
    if cls in MATLAB_REFUSED:
        raise InputError(f"{filename}: variable {name!r} is {MATLAB_REFUSED[cls]}; {SAVE_NUMERIC}")
    if cls not in MATLAB_NUMERIC:
        raise InputError(f"{filename}: variable {name!r} has MATLAB class {cls!r}; {SAVE_NUMERIC}")


def read_mat_upload(filename: str, raw: bytes, choose: Chooser) -> dict[str, np.ndarray | sp.spmatrix]:
    """The chosen numeric variables of an uploaded .mat (v4, v5/v7 or v7.3), within the upload budget."""
    if is_mat_v73(raw[:1024]):
        return _read_mat_hdf5(filename, raw, choose)
    try:
        major, _ = scipy.io.matlab.matfile_version(io.BytesIO(raw))
    except (scipy.io.matlab.MatReadError, ValueError, TypeError, IndexError, OSError, EOFError) as exc:
        raise InputError(f"{filename} is not a MATLAB .mat file ({exc}; it looks like {looks_like(raw)}); "
                         "save it with MATLAB's save -v7") from None
    try:
        body = _mat5_inflate(filename, raw) if major == 1 else raw
        inventory = {name: (shape, cls) for name, shape, cls in scipy.io.whosmat(io.BytesIO(body))}
        wanted = list(choose(list(inventory)))
        for name in wanted:
            shape, cls = inventory[name]
            _check_matlab_class(filename, name, cls)
            if cls == "sparse":  # its entries are bounded by the bytes checked above, its index arrays by its shape
                check_upload_memory(WORKING_VECTORS * FLOAT_BYTES * sum(shape), filename,
                                    f"sparse variable {name!r} of shape {shape}")
            else:
                check_upload_memory(2 * FLOAT_BYTES * prod(shape), filename, f"variable {name!r} of shape {shape}")
        loaded = scipy.io.loadmat(io.BytesIO(body), variable_names=wanted)
    except InputError:
        raise
    except (scipy.io.matlab.MatReadError, ValueError, TypeError, KeyError, IndexError, NotImplementedError, OSError,
            EOFError, OverflowError, struct.error, zlib.error) as exc:
        raise InputError(f"{filename} is not a readable MATLAB .mat file ({exc}); save it with MATLAB's save -v7") from None
    return {name: loaded[name] for name in wanted if name in loaded}


def _read_mat_hdf5(filename: str, raw: bytes, choose: Chooser) -> dict[str, np.ndarray]:
    """MATLAB v7.3 (HDF5): refuse links, external storage and virtual datasets; check shapes first.

    MATLAB writes column-major, so HDF5 shows every array with its axes reversed; they are
    reversed back, so X saved in MATLAB as samples × features arrives as samples × features.
    """
    import h5py

    try:
        with h5py.File(io.BytesIO(raw), "r") as f:
            inventory = hdf5_inventory(filename, f)
            wanted = list(choose([n for n, obj in inventory.items() if isinstance(obj, h5py.Dataset)]))
            out = {}
            for name in wanted:
                dset = inventory[name]
                _check_matlab_class(filename, name, _matlab_class(filename, dset))
                if dset.dtype.kind not in "biuf" or dset.dtype.names is not None:
                    raise InputError(f"{filename}: variable {name!r} has HDF5 type {dset.dtype}; {SAVE_NUMERIC}")
                n = prod(dset.shape or ())
                check_upload_memory(n * (dset.dtype.itemsize + FLOAT_BYTES), filename,
                                    f"variable {name!r} of shape {tuple(reversed(dset.shape))}")
                out[name] = np.asarray(dset[()]).T
            return out
    except InputError:
        raise
    except (OSError, ValueError, TypeError, KeyError, RuntimeError, OverflowError) as exc:
        raise InputError(f"{filename} is not a readable MATLAB v7.3 (HDF5) file ({exc}); "
                         "save it with MATLAB's save -v7") from None


def _matlab_class(filename: str, dset) -> str:
    """The MATLAB_class attribute MATLAB writes on every variable ("double", "cell", ...), read only if small."""
    import h5py

    if "MATLAB_class" not in dset.attrs:
        return "double"
    attr = h5py.h5a.open(dset.id, b"MATLAB_class")
    if prod(attr.shape or ()) * attr.dtype.itemsize > MAX_ATTRIBUTE_BYTES or attr.dtype.kind not in "SUO":
        raise InputError(f"{filename}: the MATLAB_class attribute of {dset.name!r} is not a short text; {SAVE_NUMERIC}")
    cls = dset.attrs["MATLAB_class"]
    return cls.decode(errors="replace") if isinstance(cls, bytes) else str(cls)


def hdf5_inventory(filename: str, root) -> dict:
    """{path: Dataset or Group} of every object, refusing anything that points outside the file."""
    import h5py

    found: dict = {}
    stack = [(root, "", 0)]
    while stack:
        group, prefix, depth = stack.pop()
        if depth > MAX_HDF5_DEPTH:
            raise InputError(f"{filename}: groups nest deeper than {MAX_HDF5_DEPTH} levels; {SAVE_NUMERIC}")
        for name in group:
            path = prefix + name
            link = group.get(name, getlink=True)
            if isinstance(link, h5py.ExternalLink):
                raise InputError(f"{filename}: {path!r} is an external link to {link.filename!r}; "
                                 "uploads may not refer to other files: save the data itself")
            if isinstance(link, h5py.SoftLink):
                raise InputError(f"{filename}: {path!r} is a soft link; save the data itself")
            obj = group[name]
            if isinstance(obj, h5py.Dataset):
                if obj.is_virtual:
                    raise InputError(f"{filename}: {path!r} is a virtual dataset (its data live in other files); "
                                     "save the data itself")
                if obj.external:
                    raise InputError(f"{filename}: {path!r} uses HDF5 external storage (its data live in "
                                     f"{obj.external[0][0]!r}); uploads may not refer to other files: save the data itself")
            elif isinstance(obj, h5py.Group):
                stack.append((obj, path + "/", depth + 1))
            found[path] = obj
            if len(found) > MAX_HDF5_OBJECTS:
                raise InputError(f"{filename} holds more than {MAX_HDF5_OBJECTS} objects; {SAVE_NUMERIC}")
    return found


# -- LIBSVM / svmlight ---------------------------------------------------------------------------
def read_svmlight_upload(filename: str, raw: bytes) -> tuple[sp.csr_matrix, np.ndarray]:
    """LIBSVM text → (CSR, labels); the parse is sized from the entry count, the width from the largest index."""
    n_entries = raw.count(b":")
    check_upload_memory(2 * n_entries * (FLOAT_BYTES + 8), filename, f"{n_entries:,} LIBSVM entries")
    try:
        X, y = load_svmlight_file(io.BytesIO(raw))
    except OverflowError:
        raise InputError(f"{filename} has a feature index too large for any machine; "
                         "LIBSVM indices must number the features 1, 2, ..., d") from None
    except (ValueError, UnicodeDecodeError, TypeError, RuntimeError) as exc:
        raise InputError(f"{filename} is not a valid LIBSVM/svmlight file ({exc}); "
                         "each line must read 'label index:value index:value ...'") from None
    check_upload_memory(WORKING_VECTORS * FLOAT_BYTES * X.shape[1], filename,
                        f"{X.shape[1]:,} feature columns (the largest LIBSVM index) × {WORKING_VECTORS} working vectors")
    return sp.csr_matrix(X), y


# -- CSV ---------------------------------------------------------------------------------------
def check_csv_size(filename: str, raw: bytes) -> None:
    """Columns (from the header line) and rows (from the line count) before pandas parses anything."""
    first = raw.split(b"\n", 1)[0]
    n_columns = first.count(b",") + 1
    if n_columns > MAX_CSV_COLUMNS:
        raise InputError(f"{filename} has {n_columns:,} columns; CSV uploads are limited to {MAX_CSV_COLUMNS:,}: "
                         "upload wide data as .npz or LIBSVM, or select fewer features")
    n_rows = raw.count(b"\n") + (not raw.endswith(b"\n"))
    check_upload_memory(3 * FLOAT_BYTES * n_rows * n_columns, filename, f"a CSV table of {n_rows:,} × {n_columns:,}")

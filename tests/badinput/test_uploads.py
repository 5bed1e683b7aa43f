"""Bad-input suite, upload layer: corrupt and hostile files, each refused with an InputError that says what to change.

Every hostile file is generated here (none is committed). The bombs are also parsed in a
child process under an address-space limit, which proves they are refused from their
headers: inflating or allocating what they declare would exceed the limit.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import re
import resource
import struct
import subprocess
import sys
import zipfile
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

from solvers.core import InputError
from solvers.datasets import parse_upload
from solvers.datasets.upload import display_name

h5py = pytest.importorskip("h5py")

REPO = Path(__file__).resolve().parents[2]
GiB = 2**30
CHILD_ADDRESS_SPACE = int(1.5 * GiB)     # the whole child process: interpreter, numpy, scipy, h5py, pandas
CHILD_MEMORY_BUDGET = 4e9                # SOLVERS_MEMORY_BUDGET in the child: uploads get 1/8, 500 MB


# -- builders ------------------------------------------------------------------------------------
def npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def good_npz() -> bytes:
    return npz(X=np.arange(12.0).reshape(6, 2), y=np.array([0, 1] * 3))


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()  # magic, length and the header dict


def zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def bzip2_npz() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_BZIP2) as z:
        z.writestr("X.npy", npy(np.ones((3, 2))))
    return buf.getvalue()


def with_bad_crc() -> bytes:
    raw = bytearray(good_npz())  # np.savez stores members uncompressed: flip one payload byte
    raw[raw.find(b"\x93NUMPY") + 130] ^= 0xFF
    return bytes(raw)


@lru_cache(maxsize=1)  # built once for the in-process case and the child process
def deflate_bomb_npz(n_bytes: int = 2 * GiB) -> bytes:
    """A genuine zip bomb: X.npy of n_bytes zeros (a valid header, a correct CRC) in ~2 MB of deflate.

    After a full flush the compressor starts afresh, so the deflate block of one MiB of zeros
    is the same every time: it is produced once and repeated.
    """
    block = bytes(2**20)
    header = npy_header((n_bytes // 8,))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    zeros = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    assert zeros == c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)
    data = head + zeros * (n_bytes // len(block)) + c.flush()
    crc = zlib.crc32(header)
    for _ in range(n_bytes // len(block)):
        crc = zlib.crc32(block, crc)
    size, name = len(header) + n_bytes, b"X.npy"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(data), size, len(name),
                          0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


def mat(variables: dict, **kw) -> bytes:
    buf = io.BytesIO()
    scipy.io.savemat(buf, variables, **kw)
    return buf.getvalue()


def mat_with_dims(rows: int, cols: int) -> bytes:
    """An uncompressed v5 file whose X declares rows × cols but stores 2 × 2 doubles."""
    raw = mat({"X": np.ones((2, 2)), "y": np.arange(2)})
    dims = struct.pack("<IIii", 5, 8, 2, 2)  # miINT32 tag, then the dimensions
    return raw.replace(dims, struct.pack("<IIii", 5, 8, rows, cols), 1)


def sparse_mat_with_rows(rows: int) -> bytes:
    """A v5 file whose sparse X declares rows × 3 (converting it to CSR would allocate rows + 1 pointers)."""
    raw = mat({"X": scipy.sparse.csc_matrix(np.eye(3)), "y": np.arange(3)})
    return raw.replace(struct.pack("<IIii", 5, 8, 3, 3), struct.pack("<IIii", 5, 8, rows, 3), 1)


def mat_with_unknown_element_type() -> bytes:
    """X's data tag names type 37129, which no MATLAB file has: scipy's reader crashed the process on it."""
    raw = mat({"X": np.ones((4, 2)), "y": np.arange(4)})
    tag = struct.pack("<II", 9, 64)  # miDOUBLE, 4 × 2 × 8 bytes
    return raw.replace(tag, struct.pack("<II", 37129, 64), 1)


def mat_declaring_inflated(n_bytes: int) -> bytes:
    """A v5 file whose one compressed variable declares n_bytes once inflated."""
    header = mat({})[:128]
    body = zlib.compress(struct.pack("<II", 14, n_bytes) + bytes(64))
    return header + struct.pack("<II", 15, len(body)) + body


def hdf5(build, *, userblock: bool = True) -> bytes:
    """A MATLAB v7.3-like HDF5 file (512-byte user block) built by ``build(file)``."""
    buf = io.BytesIO()
    with h5py.File(buf, "w", userblock_size=512 if userblock else 0) as f:
        build(f)
    raw = bytearray(buf.getvalue())
    if userblock:
        raw[:19] = b"MATLAB 7.3 MAT-file"
    return bytes(raw)


def secret_file(tmp: Path) -> Path:
    path = tmp / "secret.txt"
    path.write_bytes(b"root:x:0:0:SECRET-CONTENT-OF-A-SERVER-FILE\n" * 4)
    return path


def h5_external_storage(tmp: Path) -> bytes:
    secret = secret_file(tmp)
    return hdf5(lambda f: (f.create_dataset("X", shape=(4, 11), dtype="u1",
                                            external=[(str(secret), 0, 44)]),
                           f.create_dataset("y", data=np.arange(11.0))))


def h5_external_link(tmp: Path) -> bytes:
    other = tmp / "other.h5"
    with h5py.File(other, "w") as g:
        g["X"] = np.ones((3, 4))
    def build(f):
        f["X"] = h5py.ExternalLink(str(other), "/X")
        f["y"] = np.arange(4.0)
    return hdf5(build)


def h5_virtual(tmp: Path) -> bytes:
    other = tmp / "source.h5"
    with h5py.File(other, "w") as g:
        g["data"] = np.ones(8)
    def build(f):
        layout = h5py.VirtualLayout(shape=(2, 4), dtype="f8")
        layout[0] = h5py.VirtualSource(str(other), "data", shape=(8,))[:4]
        layout[1] = h5py.VirtualSource(str(other), "data", shape=(8,))[4:]
        f.create_virtual_dataset("X", layout)
        f["y"] = np.arange(2.0)
    return hdf5(build)


def h5_soft_link(tmp: Path) -> bytes:
    def build(f):
        f["real"] = np.ones((3, 4))
        f["X"] = h5py.SoftLink("/real")
        f["y"] = np.arange(4.0)
    return hdf5(build)


def h5_huge_shape(tmp: Path) -> bytes:
    """X declares 200 000 × 200 000 doubles (298 GiB) and stores none: reading it would fill them in."""
    return hdf5(lambda f: (f.create_dataset("X", shape=(200_000, 200_000), dtype="f8", chunks=(1000, 1000),
                                            compression="gzip"),
                           f.create_dataset("y", data=np.arange(200_000.0))))


def h5_matlab_class(cls: str, dtype) -> bytes:
    def build(f):
        d = f.create_dataset("X", shape=(3, 5), dtype=dtype)
        d.attrs["MATLAB_class"] = np.bytes_(cls)
        f["y"] = np.arange(5.0)
    return hdf5(build)


def libsvm_index(index: int) -> bytes:
    return f"1 1:0.5 {index}:1\n-1 2:1\n".encode()


def wide_csv(n_columns: int) -> bytes:
    return (",".join(f"c{i}" for i in range(n_columns)) + ",y\n" + ",".join(["1"] * (n_columns + 1)) + "\n").encode()


# -- the table -----------------------------------------------------------------------------------
# (case id, file name, builder taking tmp_path, regex the message must match). Every message
# names the file and says what to change; a case that runs in the child process is a bomb.
CASES = [
    ("npy-renamed-npz", "a.npz", lambda t: npy(np.ones((3, 2))), r"a\.npz is not a \.npz.*single \.npy.*numpy\.savez"),
    ("truncated-npz", "t.npz", lambda t: good_npz()[: len(good_npz()) // 2], r"t\.npz.*truncated or corrupt.*save it again"),
    ("bad-crc", "c.npz", lambda t: with_bad_crc(), r"c\.npz.*CRC.*save"),
    ("npz-declares-1e13-elements", "h.npz", lambda t: zip_of({"X.npy": npy_header((10**13,)) + bytes(64)}),
     r"h\.npz: X\.npy declares shape \(10000000000000,\).*truncated or forged"),
    ("npz-object-array-pickle", "o.npz", lambda t: npz(X=np.array([{"a": 1}], dtype=object), y=np.ones(1)),
     r"o\.npz.*Python objects.*pickles are never loaded"),
    ("npz-string-features", "s.npz", lambda t: npz(X=np.array([["a", "b"], ["c", "d"]]), y=np.arange(2)),
     r"s\.npz.*dtype <U1.*must be real numbers"),
    ("npz-complex-features", "j.npz", lambda t: npz(X=np.ones((2, 2)) * 1j, y=np.arange(2)), r"j\.npz.*complex.*numeric"),
    ("npz-structured-dtype", "r.npz", lambda t: npz(X=np.zeros(3, dtype=[("a", "f8")]), y=np.arange(3)),
     r"r\.npz.*not numeric"),
    ("npz-too-many-members", "m.npz", lambda t: npz(**{f"a{i}": np.zeros(1) for i in range(100)}),
     r"m\.npz holds more than 64 members"),
    ("npz-member-not-npy", "x.npz", lambda t: zip_of({"X.npy": npy(np.ones((2, 2))), "evil.sh": b"rm -rf /"}),
     r"x\.npz holds 'evil\.sh'.*not a \.npy"),
    ("npz-bzip2-members", "bz.npz", lambda t: bzip2_npz(), r"bz\.npz uses a compression.*numpy\.savez"),
    ("npz-oversized-npy-header", "b.npz", lambda t: zip_of({"X.npy": b"\x93NUMPY\x01\x00" + struct.pack("<H", 60000)
                                                              + b" " * 60000}), r"b\.npz: X\.npy is corrupt"),
    ("pickle-named-npz", "p.npz", lambda t: pickle.dumps({"X": [1, 2]}), r"p\.npz.*Python pickle"),
    ("npz-without-X", "n.npz", lambda t: npz(features2=np.ones((2, 2))), r"n\.npz: no feature array named X"),
    ("npz-zip-bomb-2GiB", "bomb.npz", lambda t: deflate_bomb_npz(), r"bomb\.npz.*uncompressed.*budget"),
    ("libsvm-index-1e12", "i.libsvm", lambda t: libsvm_index(10**12), r"i\.libsvm.*index too large.*1, 2, \.\.\., d"),
    ("libsvm-index-2-63", "k.libsvm", lambda t: libsvm_index(2**63), r"k\.libsvm.*index too large"),
    ("libsvm-index-3e8", "w.libsvm", lambda t: libsvm_index(3 * 10**8), r"w\.libsvm: 300,000,000 feature columns.*budget"),
    ("libsvm-garbage", "g.txt", lambda t: b"this is not libsvm\n", r"g\.txt is not a valid LIBSVM.*label index:value"),
    ("csv-million-columns", "wide.csv", lambda t: wide_csv(10**6), r"wide\.csv has 1,000,001 columns.*\.npz or LIBSVM"),
    ("csv-not-utf8", "u.csv", lambda t: b"a,b,y\n\xff\xfe,\x80,1\n", r"u\.csv.*"),
    ("mat-cell", "cell.mat", lambda t: mat({"X": np.array([[1, "a"]], dtype=object), "y": np.arange(2)}),
     r"cell\.mat: variable 'X' is a cell array; save X"),
    ("mat-struct", "struct.mat", lambda t: mat({"X": {"a": np.eye(2)}, "y": np.arange(2)}), r"struct\.mat.*'X' is a struct"),
    ("mat-char", "char.mat", lambda t: mat({"X": "hello", "y": np.arange(2)}), r"char\.mat.*'X' is text"),
    ("mat-declares-1e12-elements", "dims.mat", lambda t: mat_with_dims(10**6, 10**6),
     r"dims\.mat.*'X' of shape \(1000000, 1000000\).*budget"),
    ("mat-unknown-element-type-crashes-scipy", "seg.mat", lambda t: mat_with_unknown_element_type(),
     r"seg\.mat: bad MATLAB element \(type 37129.*corrupt"),
    ("mat-sparse-declares-2e9-rows", "sp.mat", lambda t: sparse_mat_with_rows(2 * 10**9),
     r"sp\.mat.*sparse variable 'X' of shape \(2000000000, 3\).*budget"),
    ("hdf5-huge-class-attribute", "attr.mat", lambda t: hdf5(lambda f: (
        f.create_dataset("X", data=np.ones((2, 3))).attrs.create("MATLAB_class", np.zeros(1000, "S8")),
        f.create_dataset("y", data=np.ones(3)))), r"attr\.mat.*MATLAB_class attribute.*not a short text"),
    ("mat-declares-3GB-inflated", "zip.mat", lambda t: mat_declaring_inflated(3 * 10**9), r"zip\.mat.*uncompressed.*budget"),
    ("mat-truncated", "cut.mat", lambda t: mat({"X": np.ones((20, 20)), "y": np.arange(20)})[:600], r"cut\.mat.*truncated"),
    ("pickle-named-mat", "p.mat", lambda t: pickle.dumps([1, 2, 3]), r"p\.mat is not a MATLAB .*Python pickle"),
    ("fake-hdf5-named-mat", "fake.mat", lambda t: b"\x89HDF\r\n\x1a\n" + bytes(600), r"fake\.mat is not a readable MATLAB v7\.3"),
    ("hdf5-external-storage", "ext.mat", h5_external_storage, r"ext\.mat: 'X' uses HDF5 external storage"),
    ("hdf5-external-link", "link.mat", h5_external_link, r"link\.mat: 'X' is an external link"),
    ("hdf5-virtual-dataset", "vds.mat", h5_virtual, r"vds\.mat: 'X' is a virtual dataset"),
    ("hdf5-soft-link", "soft.mat", h5_soft_link, r"soft\.mat: 'X' is a soft link"),
    ("hdf5-declares-298GiB", "huge.mat", h5_huge_shape, r"huge\.mat.*'X' of shape \(200000, 200000\).*budget"),
    ("hdf5-cell-references", "hcell.mat", lambda t: h5_matlab_class("cell", h5py.ref_dtype), r"hcell\.mat.*cell array"),
    ("hdf5-char", "hchar.mat", lambda t: h5_matlab_class("char", "u2"), r"hchar\.mat.*text"),
    ("unsupported-pickle-extension", "model.pkl", lambda t: pickle.dumps(1), r"model\.pkl: unsupported file type '\.pkl'"),
    ("empty", "e.csv", lambda t: b"", r"e\.csv is empty"),
]
# Parsed in the child process under RLIMIT_AS: the bombs, and files that crash a parser library (a
# regression there would kill the test process, so they run in the child only).
CRASHERS = {"mat-unknown-element-type-crashes-scipy"}
BOMBS = CRASHERS | {"npz-zip-bomb-2GiB", "npz-declares-1e13-elements", "libsvm-index-3e8", "csv-million-columns",
         "mat-declares-1e12-elements", "mat-declares-3GB-inflated", "mat-sparse-declares-2e9-rows", "hdf5-declares-298GiB"}


IN_PROCESS = [c for c in CASES if c[0] not in CRASHERS]


@pytest.mark.parametrize("case,filename,build,message", IN_PROCESS, ids=[c[0] for c in IN_PROCESS])
def test_hostile_upload_is_refused_with_what_to_change(case, filename, build, message, tmp_path):
    raw = build(tmp_path)
    with pytest.raises(InputError, match=message) as info:
        parse_upload(filename, raw)
    assert "SECRET-CONTENT" not in str(info.value)


def test_case_table_is_large_enough_and_named_once():
    assert len(CASES) >= 25 and len({c[0] for c in CASES}) == len(CASES) and BOMBS <= {c[0] for c in CASES}


def test_csv_rows_times_columns_checked_against_the_budget(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(8 * 2**20))  # uploads get 1 MiB
    raw = wide_csv(999).replace(b"\n", b"\n", 1) + (",".join(["1"] * 1000) + "\n").encode() * 200
    with pytest.raises(InputError, match=r"big\.csv: a CSV table of 202 × 1,000.*budget"):
        parse_upload("big.csv", raw)


def test_sparse_upload_densified_beyond_its_budget_is_refused(monkeypatch):
    ds = parse_upload("wide.libsvm", libsvm_index(100_000))
    assert ds.is_sparse and ds.X.shape == (2, 100_000)
    ds.meta["memory_budget"] = 2**20  # 1 MiB: a dense 2 × 100 000 needs 1.5 MiB
    with pytest.raises(InputError, match=r"wide as a dense 2 × 100000 array.*budget"):
        ds.dense()


# -- what still works ------------------------------------------------------------------------------
def test_matlab_v73_upload_arrives_as_samples_by_features():
    # MATLAB writes column-major, so its 6 × 2 X is a (2, 6) HDF5 dataset; y (6 × 1) is (1, 6)
    raw = hdf5(lambda f: (f.create_dataset("X", data=np.arange(12.0).reshape(6, 2).T),
                          f.create_dataset("y", data=np.array([[0, 1, 0, 1, 0, 1.0]]))))
    ds = parse_upload("v73.mat", raw)
    assert ds.X.shape == (6, 2) and np.array_equal(ds.X, np.arange(12.0).reshape(6, 2)) and ds.y.shape == (6,)


@pytest.mark.parametrize("kw", [{}, {"do_compression": True}, {"format": "4"}], ids=["v5", "v5-compressed", "v4"])
def test_matlab_uploads_that_are_fine_still_load(kw):
    X = np.arange(20.0).reshape(10, 2)
    ds = parse_upload("ok.mat", mat({"X": X, "y": np.arange(10) % 2, "notes": np.ones(3)}, **kw))
    assert np.array_equal(ds.X, X) and ds.y.tolist() == [0, 1] * 5


def test_npz_string_labels_are_fine_and_the_file_is_read_only_once():
    ds = parse_upload("ok.npz", npz(X=np.ones((4, 2)), y=np.array(["a", "b", "a", "b"])))
    assert ds.task == "classification" and ds.classes.tolist() == ["a", "b"]


# -- names are never paths -----------------------------------------------------------------------
@pytest.mark.parametrize("filename", ["../../../../etc/passwd.csv", "..\\..\\windows\\win.ini.csv",
                                      "/etc/shadow.csv", "a/../../b\x00\x1b[31m.csv"])
def test_upload_names_are_never_used_as_paths(filename, tmp_path, monkeypatch):
    """The bytes given are parsed, whatever the name says; nothing is opened on the way."""
    content = b"f1,f2,y\n1,2,0\n3,4,1\n"
    parse_upload("warm-up.csv", content)  # libraries' lazy set-up (pandas reads cgroup limits once) happens here

    def no_open(*args, **kwargs):
        raise AssertionError(f"parse_upload opened {args[0]!r}")
    monkeypatch.setattr("builtins.open", no_open)
    monkeypatch.setattr(io, "open", no_open)
    monkeypatch.chdir(tmp_path)
    ds = parse_upload(filename, content)
    assert ds.X.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert "/" not in ds.name and "\\" not in ds.name and ".." not in ds.name.replace("...", "")
    assert all(c.isprintable() for c in ds.name)


def test_display_name_keeps_only_the_last_component():
    assert display_name("../../etc/passwd.csv") == "passwd"
    assert display_name("C:\\data\\x.npz") == "x"
    assert display_name("\x00.csv") == "upload"


# -- bombs under an address-space limit ----------------------------------------------------------
CHILD = """
import json, sys
from solvers.core import InputError
from solvers.datasets import parse_upload
out = {}
try:
    bytearray(2 * 2**30)
    out["limit"] = "no limit"
except MemoryError:
    out["limit"] = "MemoryError"
for case, filename, path in json.loads(sys.argv[1]):
    raw = open(path, "rb").read()
    try:
        ds = parse_upload(filename, raw)
        out[case] = ["accepted", ds.summary()]
    except InputError as exc:
        out[case] = ["InputError", str(exc)]
    except BaseException as exc:
        out[case] = [type(exc).__name__, str(exc)[:300]]
print(json.dumps(out))
"""


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))


def run_in_child(jobs: list[tuple[str, str, bytes]], tmp_path: Path) -> dict[str, list[str]]:
    """{case: [outcome, message]} from parse_upload in a child process limited to CHILD_ADDRESS_SPACE."""
    listed = []
    for case, filename, raw in jobs:
        path = tmp_path / f"{case}.bin"
        path.write_bytes(raw)
        listed.append((case, filename, str(path)))
    env = {**os.environ, "SOLVERS_MEMORY_BUDGET": str(CHILD_MEMORY_BUDGET), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(listed)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=_limit_address_space)
    assert done.returncode == 0, f"the child died (rc {done.returncode}): {done.stderr[-3000:]}"
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out.pop("limit") == "MemoryError", "the address-space limit must stop a 2 GiB allocation"
    return out


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")


@linux_only
def test_bombs_and_crashers_are_refused_within_bounded_memory(tmp_path):
    jobs = [(case, filename, build(tmp_path)) for case, filename, build, _ in CASES if case in BOMBS]
    out = run_in_child(jobs + [("control", "ok.npz", good_npz())], tmp_path)
    assert out.pop("control")[0] == "accepted"
    messages = {case: message for case, _, _, message in CASES}
    for case, (outcome, text) in out.items():
        assert outcome == "InputError", (case, outcome, text)
        assert re.search(messages[case], text), (case, text)


def valid_uploads() -> dict[str, bytes]:
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    compressed = io.BytesIO()
    np.savez_compressed(compressed, X=X, y=y)
    return {
        "a.npz": npz(X=X, y=y), "b.npz": compressed.getvalue(),
        "c.mat": mat({"X": X, "y": y}), "d.mat": mat({"X": X, "y": y}, do_compression=True),
        "e.mat": mat({"X": X, "y": y}, format="4"),
        "f.mat": hdf5(lambda f: (f.create_dataset("X", data=X.T), f.create_dataset("y", data=y[None] * 1.0))),
        "g.csv": b"a,b,y\n" + b"".join(b"%g,%g,%d\n" % (r[0], r[1], t) for r, t in zip(X, y)),
        "h.libsvm": b"".join(b"%d 1:%g 2:%g\n" % (t, r[0], r[1]) for r, t in zip(X, y)),
    }


def mutate(raw: bytes, rng: np.random.Generator) -> bytes:
    """One random corruption: a byte changed, the file cut, bytes inserted, or many bytes changed."""
    b = bytearray(raw)
    kind = rng.integers(4)
    if kind == 1:
        return bytes(b[:rng.integers(1, len(b))])
    if kind == 2:
        at = int(rng.integers(len(b)))
        return bytes(b[:at] + rng.bytes(int(rng.integers(1, 16))) + b[at:])
    for _ in range(1 if kind == 0 else int(rng.integers(2, 20))):
        b[rng.integers(len(b))] = rng.integers(256)
    return bytes(b)


@linux_only
def test_corrupted_uploads_give_a_dataset_or_an_input_error_and_never_a_crash(tmp_path):
    """Seeded fuzzing of every format (this is how scipy's crash on unknown MATLAB tags was found)."""
    rng = np.random.default_rng(2026)
    jobs = [(f"{name}-{i}", name, mutate(raw, rng)) for name, raw in valid_uploads().items() for i in range(60)]
    out = run_in_child(jobs, tmp_path)
    assert len(out) == len(jobs)
    unexpected = {case: r for case, r in out.items() if r[0] not in ("accepted", "InputError")}
    assert not unexpected, unexpected
    assert sum(r[0] == "InputError" for r in out.values()) > len(jobs) // 3  # the corruptions are mostly noticed


# -- the pages -----------------------------------------------------------------------------------
PAGES = {"foundations": "fd", "sparse": "sp", "multitask": "mt", "smm": "smm", "metric": "ml", "npsvc": "np"}
SLOW_PAGES = {"multitask", "metric", "npsvc"}  # their default run takes 20-80 s on a loaded 2-core machine


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_PAGES else p for p in PAGES])
def test_page_shows_a_hostile_upload_as_an_error_and_no_server_file(page, tmp_path):
    from tests.app_harness import errors, open_page, upload

    at = open_page(page)
    if page == "foundations":  # its picker appears once a problem that takes data is chosen
        at.selectbox(key="fd.problem.problem").select("logistic").run()
    upload(at, f"{PAGES[page]}.data", "passwd.mat", h5_external_storage(tmp_path), mime="application/octet-stream")
    shown = errors(at)
    assert any("Upload refused" in e and "external storage" in e for e in shown), shown
    page_text = json.dumps([str(el.proto) for el in at.main] + [str(el.proto) for el in at.sidebar], default=str)
    assert "SECRET-CONTENT" not in page_text


def test_a_hostile_upload_name_is_shown_as_text_not_markdown():
    from tests.app_harness import errors, open_page, upload

    at = open_page("sparse")
    upload(at, "sp.data", "![x](https://tracker.example/p.png)<img src=x>$\\pi$.npz", b"not a zip")
    shown = [e for e in errors(at) if "Upload refused" in e]
    assert shown and all("\\!\\[x\\]" in e and "\\<img" in e and "\\$" in e for e in shown), shown

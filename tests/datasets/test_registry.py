"""Dataset registry: bundled sets, real files (skipped with a reason when absent), generators, uploads."""
import gzip
import io

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from solvers import datasets
from solvers.core import InputError, Param
from solvers.datasets import REAL, Dataset, Generator, parse_upload, register_generator
from solvers.datasets.readers import read_idx, read_mat, read_npz, read_svmlight


@pytest.mark.parametrize("name", list(datasets.BUNDLED))
def test_bundled_sets_load(name):
    ds = datasets.load(name)
    assert ds.n_samples > 100 and np.isfinite(ds.as_vectors()).all()
    assert datasets.available()[name] == "bundled"


def test_digits_as_vectors_and_matrices_agree():
    v, m = datasets.load("digits"), datasets.load("digits-8x8")
    assert m.X.shape == (1797, 8, 8)
    assert np.array_equal(v.as_matrices(), m.X) and np.array_equal(m.as_vectors(), v.X)
    binary = v.binary_task(3)
    assert set(np.unique(binary.y)) == {-1.0, 1.0} and (binary.y == 1).sum() == (v.y == 3).sum()


EXPECTED = {  # shapes and label counts from ../shared/data/README.md
    "colon-cancer": ((62, 2000), 2), "duke": ((44, 7129), 2), "leukemia": ((38, 7129), 2),
    "segment": ((2310, 19), 7), "satimage": ((4435, 36), 6), "phishing": ((11055, 68), 2),
    "a9a": ((32561, 123), 2), "dna": ((3186, 180), 3), "pendigits": ((10992, 16), 10), "usps": ((2007, 256), 10),
    "binaryalphadigs": ((1404, 320), 36), "20news_w100": ((16242, 100), 4), "mnist_test": ((10000, 784), 10),
    "olivetti": ((400, 4096), 40), "cifar10_dog_vs_truck": ((2000, 1024), 2), "eeg_alcoholism": ((61, 64, 64), 2),
    "iris.scale": ((150, 4), 3), "wine.scale": ((178, 13), 3),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_files_parse_to_the_documented_shapes(name):
    if not REAL[name].available():
        pytest.skip(f"{name}: {', '.join(REAL[name].files)} not in the data directory ({datasets.data_dir()})")
    ds = datasets.load(name)
    shape, n_classes = EXPECTED[name]
    assert ds.X.shape == shape and len(ds.classes) == n_classes


def test_real_specifics():
    for name in ("school", "pendigits", "olivetti", "cifar10_dog_vs_truck"):
        if not REAL[name].available():
            pytest.skip(f"{name} is not in the data directory")
    school = datasets.load("school")
    assert school.X.shape == (15362, 28) and len(np.unique(school.groups)) == 139 and school.task == "multitask"
    assert datasets.load("pendigits").test_mask.sum() == 3498
    faces = datasets.load("olivetti")
    assert faces.as_matrices().shape == (400, 64, 64) and np.bincount(faces.y).tolist() == [10] * 40
    cifar = datasets.load("cifar10_dog_vs_truck")
    assert set(np.unique(cifar.y)) == {-1.0, 1.0} and 0 <= cifar.X.min() and cifar.X.max() <= 1


def test_missing_real_file_is_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("SOLVERS_DATA", str(tmp_path))
    assert all(kind == "bundled" for kind in datasets.available().values())
    assert "colon-cancer" in datasets.missing("sparse")
    with pytest.raises(InputError, match="not available"):
        datasets.realdata.load_real("colon-cancer")


def test_a_changed_data_directory_is_read_again_not_served_from_the_cache(tmp_path, monkeypatch):
    if not REAL["colon-cancer"].available():
        pytest.skip("colon-cancer is not in the data directory (SOLVERS_DATA)")
    assert datasets.load("colon-cancer").n_samples == 62  # cached under the configured directory
    monkeypatch.setenv("SOLVERS_DATA", str(tmp_path))
    with pytest.raises(InputError, match="not available"):
        datasets.load("colon-cancer")


def test_generators_are_registered_seeded_and_deterministic():
    gens = datasets.generators("foundations")
    assert "blobs-2d" in gens
    a = datasets.generate("blobs-2d", n=50, separation=3, seed=4)
    b = datasets.generate("blobs-2d", n=50, separation=3, seed=4)
    c = datasets.generate("blobs-2d", n=50, separation=3, seed=5)
    assert np.array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)
    with pytest.raises(InputError):
        datasets.generate("blobs-2d", n=1)
    with pytest.raises(TypeError, match="seed"):
        register_generator(Generator("no-seed", "foundations", lambda: None, params=[Param("n", 1, int)]))


# -- readers ---------------------------------------------------------------
def test_readers_on_files_we_write(tmp_path):
    text = b"1 1:0.5 3:2\n-1 2:1\n"
    X, y = read_svmlight(io.BytesIO(text))
    assert sp.issparse(X) and X.shape == (2, 3) and list(y) == [1, -1]
    (tmp_path / "d.svm.gz").write_bytes(gzip.compress(text))
    assert read_svmlight(tmp_path / "d.svm.gz")[0].shape == (2, 3)
    idx = bytes([0, 0, 8, 2]) + (2).to_bytes(4, "big") + (3).to_bytes(4, "big") + bytes(range(6))
    (tmp_path / "x.idx").write_bytes(idx)
    assert read_idx(tmp_path / "x.idx").tolist() == [[0, 1, 2], [3, 4, 5]]
    (tmp_path / "bad.idx").write_bytes(idx[:-1])
    with pytest.raises(InputError, match="payload"):
        read_idx(tmp_path / "bad.idx")
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"X": np.eye(3), "y": np.arange(3)})
    assert read_mat(io.BytesIO(buf.getvalue()))["X"].shape == (3, 3)


def test_mat_v73_through_h5py(tmp_path):
    import h5py

    path = tmp_path / "v73.mat"
    with h5py.File(path, "w", userblock_size=512) as f:
        f.create_dataset("S/X", data=np.arange(6.0).reshape(2, 3))
    with open(path, "r+b") as f:
        f.write(b"MATLAB 7.3 MAT-file")
    assert read_mat(path)["S/X"].shape == (2, 3)


def test_npz_with_objects_is_refused():
    buf = io.BytesIO()
    np.savez(buf, X=np.array([{"a": 1}], dtype=object))
    with pytest.raises(InputError, match="Python objects.*pickles are never loaded"):
        read_npz(io.BytesIO(buf.getvalue()))


def test_readers_called_directly_turn_parser_failures_into_input_errors(tmp_path):
    buf = io.BytesIO()
    np.savez(buf, X=np.ones((3, 2)))
    (tmp_path / "cut.npz").write_bytes(buf.getvalue()[:100])
    with pytest.raises(InputError, match=r"cut\.npz.*truncated or corrupt"):
        read_npz(tmp_path / "cut.npz")
    (tmp_path / "big.svm").write_bytes(b"1 1000000000000:1\n")
    with pytest.raises(InputError, match=r"big\.svm: a feature index is too large"):
        read_svmlight(tmp_path / "big.svm")
    (tmp_path / "fake.mat").write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(600))
    with pytest.raises(InputError, match=r"fake\.mat is not a readable MATLAB v7\.3"):
        read_mat(tmp_path / "fake.mat")


def test_read_mat_keeps_cells_for_data_files_but_refuses_hdf5_links(tmp_path):
    import h5py

    buf = io.BytesIO()
    scipy.io.savemat(buf, {"dat": np.array([[np.eye(2), np.ones(3)]], dtype=object)})
    assert read_mat(io.BytesIO(buf.getvalue()))["dat"].shape == (1, 2)  # binaryalphadigs and school are cells
    (tmp_path / "other.h5").write_bytes(b"")
    with h5py.File(tmp_path / "linked.mat", "w") as f:
        f["X"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/X")
    with pytest.raises(InputError, match="external link"):
        read_mat(tmp_path / "linked.mat")


# -- uploads ---------------------------------------------------------------
def csv(text: str) -> bytes:
    return text.strip().encode() + b"\n"


def test_csv_upload_variants():
    ds = parse_upload("a.csv", csv("f1,f2,label\n1,2,a\n3,4,b\n5,6,a"))
    assert ds.X.shape == (3, 2) and ds.task == "classification" and list(ds.y) == ["a", "b", "a"]
    reg = parse_upload("r.csv", csv("x1,x2,y\n" + "\n".join(f"{i},{i*2},{i*0.37:.3f}" for i in range(60))))
    assert reg.task == "regression"
    multi = parse_upload("m.csv", csv("x1,x2,y_1,y_2\n1,2,0.5,1\n2,3,0.1,2"))
    assert multi.y.shape == (2, 2) and multi.task == "multitask"


@pytest.mark.parametrize("name,raw,match", [
    ("a.csv", b"f1,f2,y\n1,,0\n2,3,1\n", "missing"),
    ("a.csv", b"f1,f2,y\n1,x,0\n2,3,1\n", "not numeric"),
    ("a.csv", b"justone\n1\n2\n", "at least one feature"),
    ("a.exe", b"MZ...", "unsupported"),
    ("a.csv", b"", "empty"),
    ("a.libsvm", b"this is not libsvm at all\n", "LIBSVM"),
    ("a.npz", b"not a zip", "npz"),
    ("a.mat", b"garbage" * 30, "MATLAB"),
])
def test_bad_uploads_are_refused_with_a_reason(name, raw, match):
    with pytest.raises(InputError, match=match):
        parse_upload(name, raw)


def test_upload_size_limit_and_npz_arrays():
    with pytest.raises(InputError, match="limited"):
        parse_upload("big.csv", b"x" * 2000, max_bytes=1000)
    buf = io.BytesIO()
    np.savez(buf, X=np.ones((4, 3, 2)), y=np.array([1, -1, 1, -1]))
    ds = parse_upload("m.npz", buf.getvalue())
    assert ds.X.shape == (4, 3, 2) and ds.as_matrices().shape == (4, 3, 2)
    buf = io.BytesIO()
    np.savez(buf, X=np.array([[np.nan, 1.0]]), y=np.array([1]))
    with pytest.raises(InputError, match="NaN"):
        parse_upload("n.npz", buf.getvalue())

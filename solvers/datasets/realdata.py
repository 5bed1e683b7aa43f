"""Real datasets read from the data directory (never copied into the repository).

The directory is ``$SOLVERS_DATA``, else ``../shared/data`` beside the repository
when it exists. ../shared/data/README.md documents the origin of every file;
the descriptions below summarise it.
"""
from __future__ import annotations

import lzma
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..core.errors import InputError
from .base import Dataset
from .readers import read_idx, read_mat, read_svmlight

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path | None:
    """Where real data are read from, or None when no directory is configured or present."""
    env = os.environ.get("SOLVERS_DATA")
    if env:
        return Path(env).expanduser()
    default = REPO_ROOT.parent / "shared" / "data"
    return default if default.is_dir() else None


@dataclass(frozen=True)
class RealDataset:
    name: str
    files: tuple[str, ...]  # relative to the data directory; all must exist
    task: str
    description: str
    reader: Callable[[list[Path]], Dataset]
    families: tuple[str, ...] = ()

    def paths(self) -> list[Path] | None:
        root = data_dir()
        if root is None:
            return None
        paths = [root / f for f in self.files]
        return paths if all(p.is_file() for p in paths) else None

    def available(self) -> bool:
        return self.paths() is not None


def _svm(name: str, task: str, desc: str, n_features: int | None = None, dense: bool = True):
    def read(paths: list[Path]) -> Dataset:
        X, y = read_svmlight(paths[0], n_features=n_features)
        return Dataset(name, X.toarray() if dense else X, y, task, desc, f"data dir: {paths[0].name}")
    return read


def _train_test_svm(name: str, desc: str, n_features: int):
    def read(paths: list[Path]) -> Dataset:
        X1, y1 = read_svmlight(paths[0], n_features)
        X2, y2 = read_svmlight(paths[1], n_features)
        mask = np.r_[np.zeros(len(y1), bool), np.ones(len(y2), bool)]
        return Dataset(name, sp.vstack([X1, X2]).toarray(), np.r_[y1, y2], "classification", desc,
                       "data dir: train + test files", test_mask=mask)
    return read


def _pendigits(paths: list[Path]) -> Dataset:
    X, y = read_svmlight(paths[0], 16)
    mask = np.arange(len(y)) >= 7494  # rows 7495.. are LIBSVM's pendigits.t (data README)
    return Dataset("pendigits", X.toarray(), y, "classification", "10992 pen trajectories, 16 features, digits 0–9",
                   "data dir: pendigits.gz", test_mask=mask)


def _variables(path: Path, *names: str) -> dict:
    """The .mat file's variables, refused with a message naming the file unless all of ``names`` are there."""
    m = read_mat(path)
    absent = [n for n in names if n not in m]
    if absent:
        raise InputError(f"{path.name} lacks the variable(s) {', '.join(absent)} this dataset needs "
                         f"(found: {', '.join(m) or 'none'}); replace it with the original file")
    return m


def _expect(ok: bool, path: Path, what: str) -> None:
    if not ok:
        raise InputError(f"{path.name}: expected {what}; replace it with the original file")


def _binaryalphadigs(paths: list[Path]) -> Dataset:
    m = _variables(paths[0], "dat", "classlabels")
    cells = m["dat"]  # 36 classes × 39 examples, each 20×16
    _expect(cells.ndim == 2 and cells.dtype == object and cells.size > 0
            and all(np.shape(c) == (20, 16) for c in cells.flat), paths[0], "'dat' to be a cell array of 20×16 images")
    X = np.stack([cells[c, k].astype(float).ravel() for c in range(cells.shape[0]) for k in range(cells.shape[1])])
    y = np.repeat(np.arange(cells.shape[0]), cells.shape[1])
    names = [str(np.ravel(v)[0]) for v in np.ravel(m["classlabels"])]
    return Dataset("binaryalphadigs", X, y, "classification", "1404 binary 20×16 images of 0–9 and A–Z (36 classes)",
                   "data dir: binaryalphadigs.mat", image_shape=(20, 16), meta={"target_names": names})


def _news20(paths: list[Path]) -> Dataset:
    m = _variables(paths[0], "documents", "newsgroups", "wordlist")
    _expect(m["documents"].ndim == 2 and np.size(m["newsgroups"]) == m["documents"].shape[1], paths[0],
            "'documents' (words × posts) with one 'newsgroups' label per post")
    X = sp.csr_matrix(m["documents"].T, dtype=float)
    y = np.ravel(m["newsgroups"]).astype(int)
    words = [str(np.ravel(w)[0]) for w in np.ravel(m["wordlist"])]
    return Dataset("20news_w100", X, y, "classification", "16242 newsgroup posts × 100 word indicators, 4 groups",
                   "data dir: 20news_w100.mat", meta={"feature_names": words})


def _school(paths: list[Path]) -> Dataset:
    m = _variables(paths[0], "X", "Y")
    Xs, Ys = np.ravel(m["X"]), np.ravel(m["Y"])
    _expect(len(Xs) == len(Ys) > 0 and all(np.ndim(x) == 2 and len(x) == np.size(t) for x, t in zip(Xs, Ys))
            and len({np.shape(x)[1] for x in Xs}) == 1, paths[0],
            "cells 'X' (students × features per school) and 'Y' (one score per student), one pair per school")
    X = np.vstack([np.asarray(x, float) for x in Xs])
    y = np.concatenate([np.ravel(t).astype(float) for t in Ys])
    groups = np.repeat(np.arange(len(Xs)), [len(np.ravel(t)) for t in Ys])
    return Dataset("school", X, y, "multitask", "139 schools (tasks), 15362 students, 28 features, exam scores",
                   "data dir: school.mat", groups=groups)


def _mnist(paths: list[Path]) -> Dataset:
    images = read_idx(paths[0]).astype(float) / 255.0
    labels = read_idx(paths[1]).astype(int)
    if len(images) != len(labels):
        raise InputError("MNIST image and label files disagree in length")
    return Dataset("mnist_test", images.reshape(len(images), -1), labels, "classification",
                   "MNIST test set: 10000 digits, 28×28, scaled to [0, 1]", "data dir: t10k IDX files",
                   image_shape=(28, 28))


def _olivetti(paths: list[Path]) -> Dataset:
    faces = _variables(paths[0], "faces")["faces"]
    _expect(faces.ndim == 2 and faces.shape[0] == 64 * 64, paths[0], f"'faces' of shape 4096 × n, got {faces.shape}")
    faces = faces.astype(float) / 255.0  # 4096 × 400, column-major images
    X = np.stack([faces[:, i].reshape(64, 64, order="F").ravel() for i in range(faces.shape[1])])
    y = np.arange(faces.shape[1]) // 10  # 40 people × 10 consecutive images (data README)
    return Dataset("olivetti", X, y, "classification", "400 faces of 40 people, 64×64 grey levels in [0, 1]",
                   "data dir: olivettifaces.mat", image_shape=(64, 64))


def _cifar_dog_truck(paths: list[Path]) -> Dataset:
    m = _variables(paths[0], "A_c5_c9_test/Ainput", "A_c5_c9_test/y")
    A = m["A_c5_c9_test/Ainput"]  # (1024, 2000): MATLAB's 1024×2000 transposed by HDF5
    _expect(A.ndim == 2 and A.shape[0] == 32 * 32 and np.size(m["A_c5_c9_test/y"]) == A.shape[1], paths[0],
            f"'A_c5_c9_test/Ainput' of shape 1024 × n with n labels in 'A_c5_c9_test/y', got {A.shape}")
    y = np.ravel(m["A_c5_c9_test/y"]).astype(float)
    X = np.stack([col.reshape(32, 32, order="F").ravel() for col in A.T])  # MATLAB vec → image rows
    return Dataset("cifar10_dog_vs_truck", X, y, "classification",
                   "The SMM paper's CIFAR-10 test file: 2000 grey 32×32 images, dog (−1) vs truck (+1)",
                   "data dir: A_c5_c9_test.mat (v7.3)", image_shape=(32, 32))


def _eeg(paths: list[Path]) -> Dataset:
    import warnings

    import rdata

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rdata warns about the unknown R class "Tensor"
        try:
            parsed = rdata.parser.parse_file(paths[0])
            converted = rdata.conversion.convert(parsed, default_encoding="utf8")
        except (NotImplementedError, ValueError, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
            raise InputError(f"{paths[0].name} is not a readable R data file: {exc}") from None
    eeg = converted.get("EEG") if isinstance(converted, dict) else None
    _expect(isinstance(eeg, dict) and "x" in eeg and "y" in eeg, paths[0], "an R object 'EEG' with fields x and y")
    y_tensor = eeg["y"]
    data = getattr(y_tensor, "data", None)
    if data is None and isinstance(y_tensor, dict):
        data = y_tensor.get("data")
    arr = np.asarray(data, dtype=float)  # 64 channels × 64 times × 61 subjects
    y = np.asarray(eeg["x"], dtype=float).ravel()
    _expect(arr.ndim == 3 and arr.shape[:2] == (64, 64) and arr.shape[2] == len(y), paths[0],
            f"EEG$y of shape 64 × 64 × n with n labels in EEG$x, got {arr.shape} and {len(y)} labels")
    X = np.moveaxis(arr, -1, 0)
    return Dataset("eeg_alcoholism", X, y, "classification",
                   "61 subjects' 64-channel × 64-time EEG averages, alcoholic (1) vs control (0)",
                   "data dir: EEG.rda", image_shape=(64, 64))


REAL: dict[str, RealDataset] = {d.name: d for d in [
    RealDataset("colon-cancer", ("colon-cancer/colon-cancer.gz",), "classification",
                "62 tissues × 2000 genes, tumour vs normal (Alon et al. 1999)",
                _svm("colon-cancer", "classification", "62 tissues × 2000 genes"), ("sparse",)),
    RealDataset("duke", ("duke/duke.gz",), "classification", "44 breast-cancer samples × 7129 genes (West et al. 2001)",
                _svm("duke", "classification", "44 samples × 7129 genes"), ("sparse",)),
    RealDataset("leukemia", ("leukemia/leu.gz",), "classification", "38 samples × 7129 genes, ALL vs AML (Golub et al. 1999)",
                _svm("leukemia", "classification", "38 samples × 7129 genes"), ("sparse",)),
    RealDataset("iris.scale", ("iris/iris.scale",), "classification", "LIBSVM's iris scaled to [−1, 1]",
                _svm("iris.scale", "classification", "iris scaled to [−1, 1]"), ("metric", "npsvc")),
    RealDataset("wine.scale", ("wine/wine.scale",), "classification", "LIBSVM's wine scaled to [−1, 1]",
                _svm("wine.scale", "classification", "wine scaled to [−1, 1]"), ("metric", "npsvc")),
    RealDataset("segment", ("segment/segment.scale.gz",), "classification", "2310 image regions × 19 features, 7 classes",
                _svm("segment", "classification", "2310 × 19, 7 classes, [−1, 1]"), ("metric",)),
    RealDataset("satimage", ("satimage/satimage.scale.gz",), "classification", "4435 Landsat pixels × 36 features, 6 classes",
                _svm("satimage", "classification", "4435 × 36, 6 classes, [−1, 1]"), ("metric",)),
    RealDataset("phishing", ("phishing/phishing.txt.gz",), "classification", "11055 websites × 68 binary features",
                _svm("phishing", "classification", "11055 × 68", dense=False), ("metric", "sparse")),
    RealDataset("a9a", ("a9a/a9a.txt.gz",), "classification", "32561 adults × 123 binary features (income > 50k)",
                _svm("a9a", "classification", "32561 × 123", n_features=123, dense=False), ("sparse",)),
    RealDataset("dna", ("dna/dna.scale.gz", "dna/dna.scale.t.gz"), "classification",
                "3186 DNA sequences × 180 binary features, 3 classes (train + test)",
                _train_test_svm("dna", "2000 train + 1186 test × 180, 3 classes", 180), ("npsvc",)),
    RealDataset("pendigits", ("pendigits/pendigits.gz",), "classification", "10992 pen digits × 16 features (train + test)",
                _pendigits, ("npsvc",)),
    RealDataset("usps", ("usps/usps.t.bz2",), "classification", "2007 USPS digits (the test part) × 256 pixels in [−1, 1]",
                _svm("usps", "classification", "2007 × 256, 10 classes", n_features=256), ("npsvc",)),
    RealDataset("binaryalphadigs", ("binaryalphadigs/binaryalphadigs.mat",), "classification",
                "1404 binary 20×16 images, 36 classes", _binaryalphadigs, ("npsvc",)),
    RealDataset("20news_w100", ("20news_w100/20news_w100.mat",), "classification",
                "16242 posts × 100 words, 4 groups", _news20, ("npsvc",)),
    RealDataset("school", ("school/school.mat",), "multitask", "139 schools, 15362 students, exam scores",
                _school, ("multitask",)),
    RealDataset("mnist_test", ("mnist_test/t10k-images-idx3-ubyte.gz", "mnist_test/t10k-labels-idx1-ubyte.gz"),
                "classification", "MNIST test set, 10000 × 28×28", _mnist, ("smm",)),
    RealDataset("olivetti", ("olivetti_faces/olivettifaces.mat",), "classification", "400 faces, 64×64, 40 people",
                _olivetti, ("smm",)),
    RealDataset("cifar10_dog_vs_truck", ("smm_cifar10_dog_vs_truck/A_c5_c9_test.mat",), "classification",
                "2000 grey 32×32 CIFAR-10 images, dog vs truck (the SMM paper's file)", _cifar_dog_truck, ("smm",)),
    RealDataset("eeg_alcoholism", ("eeg_alcoholism_tres/EEG.rda",), "classification",
                "61 subjects' 64×64 EEG matrices, alcoholic vs control", _eeg, ("smm",)),
]}


def load_real(name: str) -> Dataset:
    spec = REAL[name]
    paths = spec.paths()
    if paths is None:
        where = data_dir()
        where_text = f"in {where}" if where else "because no data directory is set (SOLVERS_DATA)"
        raise InputError(f"dataset {name!r} is not available: {', '.join(spec.files)} not found {where_text}")
    return spec.reader(paths)

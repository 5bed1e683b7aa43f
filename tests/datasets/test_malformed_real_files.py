"""A real-data file that is not what its name says is refused with an InputError naming the file."""
import gzip

import h5py
import numpy as np
import pytest
import scipy.io

from solvers import datasets
from solvers.core import InputError
from solvers.datasets.realdata import REAL


def _matlab_v73(path, **arrays):
    """An HDF5 file with MATLAB's v7.3 header in its user block."""
    with h5py.File(path, "w", userblock_size=512) as f:
        for name, value in arrays.items():
            f[name] = value
    raw = bytearray(path.read_bytes())
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 ."
    raw[:len(header)] = header
    raw[124:128] = b"\x00\x02IM"
    path.write_bytes(bytes(raw))


def _idx(ndim, payload=b""):
    return gzip.compress(bytes([0, 0, 8, ndim]) + payload)


CASES = {
    "mnist text named .gz": ("mnist_test", {0: b"not gzip at all\n"}, "t10k-images"),
    "mnist header longer than file": ("mnist_test", {0: _idx(200, bytes(8))}, "t10k-images.*200 dimensions"),
    "mnist payload too small": ("mnist_test", {0: _idx(1, (5).to_bytes(4, "big") + bytes(2))}, "t10k-images.*payload"),
    "eeg junk": ("eeg_alcoholism", {0: b"this is not R data\n"}, "EEG.rda"),
    "eeg empty": ("eeg_alcoholism", {0: b""}, "EEG.rda"),
    "eeg bad version": ("eeg_alcoholism", {0: gzip.compress(b"RDX2\nX\n" + bytes(20))}, "EEG.rda"),
    "binaryalphadigs without dat": ("binaryalphadigs", {0: {"foo": np.ones(3)}}, "binaryalphadigs.mat.*dat"),
    "school without Y": ("school", {0: {"X": np.ones(3)}}, "school.mat.*Y"),
    "20news labels disagree": ("20news_w100", {0: {"documents": np.ones((3, 2)), "newsgroups": np.ones(5),
                                                  "wordlist": np.array(["a"])}}, "20news_w100.mat"),
    "olivetti wrong shape": ("olivetti", {0: {"faces": np.ones((10, 3))}}, r"olivettifaces.mat.*4096"),
    "cifar without its datasets": ("cifar10_dog_vs_truck", {0: "v73"}, "A_c5_c9_test.mat.*Ainput"),
}


@pytest.mark.parametrize("case", CASES)
def test_malformed_real_file_is_an_input_error_naming_it(case, tmp_path, monkeypatch):
    name, contents, match = CASES[case]
    for i, rel in enumerate(REAL[name].files):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        content = contents.get(i, _idx(1, (1).to_bytes(4, "big") + b"\x01"))  # a valid labels file by default
        if content == "v73":
            _matlab_v73(path, x=np.ones(3))
        elif isinstance(content, dict):
            scipy.io.savemat(path, content)
        else:
            path.write_bytes(content)
    monkeypatch.setenv("SOLVERS_DATA", str(tmp_path))
    with pytest.raises(InputError, match=match):
        datasets.load(name)

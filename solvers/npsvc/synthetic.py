"""2-D synthetic sets for the geometry picture (registered at import of solvers.npsvc).

``crossed-lines`` is the classic nonparallel-classifier showcase (Jayadeva et al. 2007; digest
§7.1): each class lies along its own line through the origin, so one linear hyperplane per class
fits it while a single separating line cannot. Fit it with ``bias=False``: every class has the
other on both sides of its line, and TWSVM's one-sided hinge [1 − f]₊ then pulls an offset plane
away from the line (measured: about 0.5–0.7 accuracy with a bias, 0.97 without).
"""
from __future__ import annotations

import numpy as np
from sklearn.datasets import make_blobs, make_moons

from ..core import Param
from ..datasets import SEED, Dataset, Generator, register_generator

N = Param("n", 300, int, low=6, high=20_000, help="number of points")
NOISE = Param("noise", 0.1, float, low=0, high=5, help="standard deviation of the Gaussian noise")


def crossed_lines(n: int = 300, n_classes: int = 2, noise: float = 0.1, seed: int = 0) -> Dataset:
    """n_classes noisy lines through the origin at evenly spread angles (2 = the XOR-like cross)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    angles = np.pi / 4 + np.pi * y / n_classes
    t = rng.uniform(-1.0, 1.0, n)
    X = np.column_stack([t * np.cos(angles), t * np.sin(angles)]) + noise * rng.standard_normal((n, 2))
    return Dataset("crossed-lines", X, y, "classification",
                   f"{n} points on {n_classes} crossing lines, noise {noise}", "synthetic")


def blobs(n: int = 300, n_classes: int = 3, noise: float = 1.0, seed: int = 0) -> Dataset:
    X, y = make_blobs(n_samples=n, centers=n_classes, cluster_std=noise, n_features=2, random_state=seed)
    return Dataset("npsvc-blobs", X, y, "classification", f"{n} points in {n_classes} Gaussian blobs", "synthetic")


def moons(n: int = 300, noise: float = 0.1, seed: int = 0) -> Dataset:
    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    return Dataset("npsvc-moons", X, y, "classification", f"{n} points on two interleaved half-moons", "synthetic")


CLASSES = Param("n_classes", 2, int, low=2, high=10, help="number of classes")
GENERATORS = (
    register_generator(Generator("crossed-lines", "npsvc", crossed_lines, [N, CLASSES, NOISE, SEED],
                                 "noisy crossing lines, one per class: nonparallel planes fit them")),
    register_generator(Generator("npsvc-blobs", "npsvc", blobs,
                                 [N, Param("n_classes", 3, int, low=2, high=10, help="number of classes"),
                                  Param("noise", 1.0, float, low=0, high=5, help="blob standard deviation"), SEED],
                                 "Gaussian blobs in the plane")),
    register_generator(Generator("npsvc-moons", "npsvc", moons, [N, NOISE, SEED], "two interleaved half-moons")),
)

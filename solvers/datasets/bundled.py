"""Datasets that ship with scikit-learn: always available, no data directory needed."""
from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn import datasets as skd

from .base import Dataset


def _iris() -> Dataset:
    d = skd.load_iris()
    return Dataset("iris", d.data, d.target, "classification", "Fisher's iris: 150 flowers, 4 measurements, 3 species",
                   "scikit-learn", meta={"feature_names": list(d.feature_names), "target_names": list(d.target_names)})


def _wine() -> Dataset:
    d = skd.load_wine()
    return Dataset("wine", d.data, d.target, "classification", "178 wines, 13 chemical measurements, 3 cultivars",
                   "scikit-learn", meta={"feature_names": list(d.feature_names), "target_names": list(d.target_names)})


def _breast_cancer() -> Dataset:
    d = skd.load_breast_cancer()
    return Dataset("breast_cancer", d.data, d.target, "classification",
                   "569 tumours, 30 features, malignant vs benign", "scikit-learn",
                   meta={"feature_names": list(d.feature_names), "target_names": list(d.target_names)})


def _digits() -> Dataset:
    d = skd.load_digits()
    return Dataset("digits", d.data, d.target, "classification", "1797 handwritten digits as 64-vectors (8×8, values 0–16)",
                   "scikit-learn", image_shape=(8, 8))


def _digits_matrices() -> Dataset:
    d = skd.load_digits()
    return Dataset("digits-8x8", d.images.astype(float), d.target, "classification",
                   "1797 handwritten digits as 8×8 matrices (values 0–16)", "scikit-learn", image_shape=(8, 8))


def _diabetes() -> Dataset:
    d = skd.load_diabetes()
    return Dataset("diabetes", d.data, d.target.astype(float), "regression",
                   "442 patients, 10 baseline variables, disease progression after one year", "scikit-learn",
                   meta={"feature_names": list(d.feature_names)})


BUNDLED: dict[str, Callable[[], Dataset]] = {
    "iris": _iris,
    "wine": _wine,
    "breast_cancer": _breast_cancer,
    "digits": _digits,
    "digits-8x8": _digits_matrices,
    "diabetes": _diabetes,
}


def load_bundled(name: str) -> Dataset:
    ds = BUNDLED[name]()
    ds.X = np.asarray(ds.X, dtype=float)
    return ds

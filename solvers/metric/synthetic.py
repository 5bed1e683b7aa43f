"""Synthetic data for metric learning: Gaussian blobs whose class signal lives in a few of the features."""
from __future__ import annotations

import numpy as np

from ..core import Param
from ..datasets import SEED, Dataset, Generator, register_generator


def make_metric_blobs(n_samples: int = 150, n_features: int = 5, n_classes: int = 3, n_informative: int = 2,
                      noise: float = 1.0, seed: int = 0) -> Dataset:
    """Class centres differ only in the first ``n_informative`` features; the rest is noise of scale ``noise``.

    A good metric should weight the informative features and ignore the others, which the learned M shows.
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % n_classes
    centres = np.zeros((n_classes, n_features))
    centres[:, :min(n_informative, n_features)] = 3.0 * rng.standard_normal((n_classes, min(n_informative, n_features)))
    X = centres[y] + rng.standard_normal((n_samples, n_features)) * np.r_[
        np.ones(min(n_informative, n_features)), noise * np.ones(max(n_features - n_informative, 0))]
    return Dataset("metric-blobs", X, y, "classification",
                   f"{n_samples} samples, {n_features} features ({n_informative} informative), {n_classes} classes",
                   "synthetic (solvers.metric)")


BLOBS = register_generator(Generator(
    "metric-blobs", "metric", make_metric_blobs,
    params=[Param("n_samples", 150, int, low=4, high=5000, help="number of samples"),
            Param("n_features", 5, int, low=1, high=200, help="number of features d"),
            Param("n_classes", 3, int, low=2, high=20, help="number of classes"),
            Param("n_informative", 2, int, low=1, high=200, help="features whose class means differ"),
            Param("noise", 1.0, float, low=0, high=100, help="standard deviation of the uninformative features"),
            SEED],
    description="Gaussian blobs with a few informative features (the learned metric should find them)"))

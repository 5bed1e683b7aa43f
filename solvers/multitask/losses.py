"""The three losses of the family, per row: value L(s, y) and derivative ∂L/∂s at the score s.

Least squares follows the digest's (s − y)² (Eq. (8) with 1/n_ℓ, no ½); logistic is log(1 + e^{−ys});
hinge max(0, 1 − ys) (Eq. (64)) is non-smooth and is never differentiated: it goes into g of Eq. (20).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

LOSSES = ("least_squares", "logistic", "hinge")
SMOOTH_LOSSES = ("least_squares", "logistic")


def loss_values(loss: str, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    if loss == "least_squares":
        return (s - y) ** 2
    if loss == "logistic":
        return np.logaddexp(0.0, -y * s)
    return np.maximum(0.0, 1.0 - y * s)


def loss_derivative(loss: str, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    if loss == "least_squares":
        return 2.0 * (s - y)
    if loss == "logistic":
        return -y * expit(-y * s)
    raise ValueError("the hinge loss is not differentiable; it is handled by its prox (Eq. (72)-(74))")

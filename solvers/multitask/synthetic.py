"""Data generators of the family, registered at import: the shared-subspace model of the digest (§4.1) and
digits as ten one-vs-rest tasks with few labels per task (the stand-in for the paper's Yahoo! multi-label
data, §4.2)."""
from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

from ..core import InputError, Param, check_memory
from ..datasets import SEED, Dataset, Generator, register_generator


def make_shared_subspace(d: int = 30, m: int = 12, n_per_task: int = 15, n_test: int = 50, h_true: int = 3,
                         tau: float = 0.1, noise: float = 0.1, kind: str = "regression", seed: int = 0) -> Dataset:
    """Θ_true random orthonormal (h_true × d); u_ℓ = Θᵀv_ℓ + τw_ℓ with v_ℓ ~ N(0, I_h), w_ℓ ~ N(0, I_d);
    x ~ N(0, I_d); y = xᵀu_ℓ + noise·ε (regression) or sign(xᵀu_ℓ + noise·ε) (classification)."""
    if h_true > d:
        raise InputError(f"the true subspace dimension h_true = {h_true} cannot exceed d = {d}")
    # X and the per-row copy of its task's predictor U[:, groups] are both (m·rows) × d float64
    check_memory(2 * 8.0 * m * (n_per_task + n_test) * d,
                 f"{m} tasks × {n_per_task + n_test} rows × {d} features (m × (n_per_task + n_test) × d)")
    rng = np.random.default_rng(seed)
    Theta = np.linalg.qr(rng.standard_normal((d, h_true)))[0].T
    U = Theta.T @ rng.standard_normal((h_true, m)) + tau * rng.standard_normal((d, m))
    rows = n_per_task + n_test
    X = rng.standard_normal((m * rows, d))
    groups = np.repeat(np.arange(m), rows)
    clean = np.einsum("ij,ji->i", X, U[:, groups])
    y = clean + noise * rng.standard_normal(clean.shape)
    if kind == "classification":
        y = np.where(y >= 0, 1.0, -1.0)
        for g in range(m):  # every task needs both classes in its training rows
            first = g * rows
            y[first], y[first + 1] = 1.0, -1.0
    test_mask = np.tile(np.arange(rows) >= n_per_task, m)
    return Dataset("multitask-subspace", X, y, "multitask",
                   f"{m} tasks sharing a {h_true}-dim subspace of R^{d}; {n_per_task} training rows per task",
                   "synthetic (digest §4.1)", groups=groups, test_mask=test_mask,
                   meta={"Theta_true": Theta, "U_true": U, "kind": kind})


def make_digits_tasks(n_train: int = 100, seed: int = 0) -> Dataset:
    """Digits 0–9 as ten ±1 one-vs-rest tasks on a shared X (pixels / 16); ``n_train`` labelled rows
    (stratified: n_train/10 per digit), the rest for testing."""
    digits = load_digits()
    X, target = digits.data / 16.0, digits.target
    rng = np.random.default_rng(seed)
    per_class = max(1, n_train // 10)
    train = np.concatenate([rng.choice(np.flatnonzero(target == k), per_class, replace=False) for k in range(10)])
    test_mask = np.ones(len(target), dtype=bool)
    test_mask[train] = False
    Y = np.where(target[:, None] == np.arange(10)[None, :], 1.0, -1.0)
    return Dataset("multitask-digits", X, Y, "multitask",
                   f"1797 digits (8×8), ten one-vs-rest tasks, {per_class * 10} labelled rows",
                   "scikit-learn digits", image_shape=(8, 8), test_mask=test_mask,
                   meta={"task_names": [str(k) for k in range(10)]})


SHARED_SUBSPACE = register_generator(Generator(
    "multitask-subspace", "multitask", make_shared_subspace,
    params=[Param("d", 30, int, low=1, high=2000, help="number of features"),
            Param("m", 12, int, low=1, high=1000, help="number of tasks"),
            Param("n_per_task", 15, int, low=2, high=100_000, help="training rows per task"),
            Param("n_test", 50, int, low=0, high=100_000, help="test rows per task"),
            Param("h_true", 3, int, low=0, high=2000, help="dimension of the true shared subspace"),
            # y ~ (1 + τ)·√d·noise-sized entries and the least-squares loss squares them: up to 1e100 keeps y²
            # far from float64's 1.8e308 overflow for any d and row count allowed here
            Param("tau", 0.1, float, low=0, high=1e100, help="size of each task's private part τ"),
            Param("noise", 0.1, float, low=0, high=1e100, help="standard deviation of the noise"),
            Param("kind", "regression", str, choices=("regression", "classification"), help="targets"),
            SEED],
    description="tasks whose predictors share a low-dimensional subspace (digest §4.1)"))

DIGITS_TASKS = register_generator(Generator(
    "multitask-digits", "multitask", make_digits_tasks,
    params=[Param("n_train", 100, int, low=10, high=1700, help="labelled rows shared by the ten tasks"), SEED],
    description="digits as ten one-vs-rest tasks with few labels (digest §4.2)"))

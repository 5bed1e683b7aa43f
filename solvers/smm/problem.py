"""The support matrix machine (SMM) of Wu, Li & Sun, model (1):

    min_{W ∈ R^{p×q}, b}  ½‖W‖_F² + τ‖W‖_* + C Σ_i max(0, 1 − y_i(⟨W, X_i⟩ + b)),

its dual (D), the relative KKT residual η_kkt (46), Relobj (47) and the relative gap.

Samples are stored as ``X`` (n, p·q) with row i = vec(X_i) in C order, so that
A W = y ∘ (X vec W) and A* z = mat(Xᵀ(y ∘ z)) (eq. (2)). When p > q every sample
is transposed (norms and ⟨·,·⟩ are transpose-invariant), so the solvers always
see p ≤ q; `SMMProblem.to_user` turns W back.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import InputError, as_pm_one, check_memory, project_box, singular_value_threshold

#: bytes per stored entry times this factor covers X plus the solvers' working copies
MEMORY_FACTOR = 2.5


@dataclass(frozen=True, eq=False)
class SMMProblem:
    """Training data in the working orientation (p ≤ q) with the model's C and τ."""

    X: np.ndarray  # (n, p*q), row i = vec(X_i) (C order, working orientation)
    y: np.ndarray  # (n,) in {−1, +1}
    shape: tuple[int, int]  # (p, q) of the working orientation, p ≤ q
    C: float
    tau: float
    transposed: bool = False  # True when the user's samples were q×p
    classes: tuple = (-1.0, 1.0)  # the user's labels mapped to −1, +1

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def pq(self) -> int:
        return self.X.shape[1]

    # -- the linear map A and its adjoint, eq. (2) ----------------------------
    def margins(self, W: np.ndarray, b: float) -> np.ndarray:
        """⟨W, X_i⟩ + b for every sample (the decision values f(X_i))."""
        return self.X @ W.ravel().astype(self.X.dtype, copy=False) + b

    def A(self, W: np.ndarray) -> np.ndarray:
        return self.y * (self.X @ W.ravel().astype(self.X.dtype, copy=False))

    def A_adj(self, z: np.ndarray) -> np.ndarray:
        """A* z = Σ_k z_k y_k X_k, touching only the rows where z ≠ 0 (sample sparsity)."""
        nz = np.flatnonzero(z)
        p, q = self.shape
        if nz.size == 0:
            return np.zeros((p, q))
        if nz.size <= 0.1 * self.n:
            out = (self.y[nz] * z[nz]).astype(self.X.dtype) @ self.X[nz]
        else:
            out = (self.y * z).astype(self.X.dtype) @ self.X
        return np.asarray(out, dtype=float).reshape(p, q)

    def to_user(self, W: np.ndarray) -> np.ndarray:
        return W.T if self.transposed else W

    def from_user(self, W: np.ndarray) -> np.ndarray:
        return W.T if self.transposed else W

    def with_C(self, C: float) -> "SMMProblem":
        check_positive(C, "C")
        return SMMProblem(self.X, self.y, self.shape, float(C), self.tau, self.transposed, self.classes)

    def subset(self, rows: np.ndarray) -> "SMMProblem":
        return SMMProblem(self.X[rows], self.y[rows], self.shape, self.C, self.tau, self.transposed, self.classes)


def check_positive(value: float, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise InputError(f"{name} must be a positive finite number, got {value}; SMM needs {name} > 0")
    return value


def estimate_bytes(n: int, p: int, q: int, dtype=np.float64) -> float:
    """Memory of the stored samples plus working copies (row slices, products)."""
    return MEMORY_FACTOR * n * p * q * np.dtype(dtype).itemsize


def build_problem(X, y, *, C: float = 1.0, tau: float = 1.0, dtype=np.float64) -> SMMProblem:
    """Validate (n, p, q) samples and two-class labels, then build the working problem.

    Raises InputError before any copy of the data is made when something is wrong:
    not 3-D, samples of different shapes, NaN/inf, not exactly two classes,
    C or τ not positive, or more memory than the budget allows.
    """
    C = check_positive(C, "C")
    tau = check_positive(tau, "tau (τ)")
    if isinstance(X, (list, tuple)):
        shapes = {np.shape(x) for x in X}
        if len(shapes) > 1:
            raise InputError(f"samples have different shapes {sorted(shapes)[:4]}; every X_i must be p×q")
    arr = np.asarray(X)
    if arr.dtype == object:
        raise InputError("samples have different shapes; every X_i must be the same p×q matrix")
    if arr.ndim != 3:
        raise InputError(f"X must be an (n, p, q) stack of matrices, got shape {arr.shape}")
    n, p, q = arr.shape
    if n < 2 or p == 0 or q == 0:
        raise InputError(f"X has shape {arr.shape}; SMM needs at least two non-empty samples")
    if arr.dtype.kind not in "fiub":
        raise InputError(f"X must be numeric, got dtype {arr.dtype}")
    dtype = np.dtype(dtype)
    check_memory(estimate_bytes(n, p, q, dtype), f"SMM on {n} samples of {p}×{q}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = int(arr.size - np.isfinite(arr).sum())
        raise InputError(f"X has {bad} NaN or infinite value(s); remove or impute them first")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise InputError(f"X has {n} samples but y has shape {y.shape}; they must match")
    classes, y_pm = as_pm_one(y, what="SMM")
    transposed = p > q
    if transposed:
        arr = np.swapaxes(arr, 1, 2)
        p, q = q, p
    Xmat = np.ascontiguousarray(arr.reshape(n, p * q), dtype=dtype)
    return SMMProblem(Xmat, y_pm, (p, q), C, tau, transposed, tuple(classes.tolist()))


# -- objectives ----------------------------------------------------------------
# ``Xw`` = X vec(W) and ``Alam`` = A*λ, where the caller has them (a solver carries X vec(W) between its steps),
# save the passes over the samples; left out, they are computed here.
def hinge_sum(problem: SMMProblem, W: np.ndarray, b: float, Xw: np.ndarray | None = None) -> float:
    margins = problem.margins(W, b) if Xw is None else Xw + b
    return float(np.maximum(0.0, 1.0 - problem.y * margins).sum())


def primal_objective(problem: SMMProblem, W: np.ndarray, b: float, Xw: np.ndarray | None = None) -> float:
    """Objective of model (1)."""
    nuclear = np.linalg.svd(W, compute_uv=False).sum()
    return float(0.5 * np.vdot(W, W) + problem.tau * nuclear + problem.C * hinge_sum(problem, W, b, Xw))


def dual_objective(problem: SMMProblem, lam: np.ndarray, Lam: np.ndarray, Alam: np.ndarray | None = None) -> float:
    """−Φ(λ, Λ) of (D) at a dual-feasible point: −½‖A*λ + Λ‖² − Σ λ_i."""
    R = (problem.A_adj(lam) if Alam is None else Alam) + Lam
    return float(-0.5 * np.vdot(R, R) - lam.sum())


def relative_gap(pobj: float, dobj: float) -> float:
    return abs(pobj - dobj) / (1.0 + abs(pobj) + abs(dobj))


def relobj(obj: float, obj_opt: float) -> float:
    """Relobj (47)."""
    return abs(obj - obj_opt) / (1.0 + abs(obj_opt))


def project_spectral_ball(Z: np.ndarray, tau: float) -> np.ndarray:
    """Π onto {‖·‖₂ ≤ τ} = Z − Prox_{τ‖·‖_*}(Z) (Moreau)."""
    return Z - singular_value_threshold(Z, tau)[0]


def kkt_residuals(problem: SMMProblem, W, b, v, U, lam, Lam, Xw=None, Alam=None) -> dict[str, float]:
    """The six relative residuals of (46) and η_kkt, their maximum."""
    n, C, tau = problem.n, problem.C, problem.tau
    Alam = problem.A_adj(lam) if Alam is None else Alam
    AW = problem.A(W) if Xw is None else problem.y * Xw
    nW, nU, nLam, nlam = (float(np.linalg.norm(a)) for a in (W, U, Lam, lam))
    root = 1.0 + np.sqrt(n)
    eta = {
        "eta_W": float(np.linalg.norm(W + Alam + Lam)) / (1.0 + nW + float(np.linalg.norm(Alam)) + nLam),
        "eta_b": abs(float(lam @ problem.y)) / root,
        "eta_v": float(np.linalg.norm(lam + project_box(v - lam, 0.0, C))) / (1.0 + nlam + float(np.linalg.norm(v))),
        "eta_U": float(np.linalg.norm(Lam - project_spectral_ball(U + Lam, tau))) / (1.0 + nLam + nU),
        "eta_lambda": float(np.linalg.norm(AW + b * problem.y + v - 1.0)) / root,
        "eta_Lambda": float(np.linalg.norm(W - U)) / (1.0 + nW + nU),
    }
    eta["kkt"] = max(eta.values())
    return eta


def sample_roles(problem: SMMProblem, W: np.ndarray, b: float, lam: np.ndarray | None = None,
                 tol: float = 1e-6) -> np.ndarray:
    """Label every sample 'ASM', 'SM' (support, not active) or 'NSM' (Definition 1, Sec. 2.1).

    With ``lam`` the dual definition is used: SM ⇔ −λ_j > tol·C, ASM ⇔ tol·C < −λ_j < C(1 − tol).
    Without it, the geometric one (5): SM ⇔ y_j f(X_j) ≤ 1 + tol, ASM ⇔ |y_j f(X_j) − 1| ≤ tol.
    """
    if lam is not None:
        a = -np.asarray(lam)
        sm = a > tol * problem.C
        asm = sm & (a < problem.C * (1.0 - tol))
    else:
        yf = problem.y * problem.margins(W, b)
        sm = yf <= 1.0 + tol
        asm = np.abs(yf - 1.0) <= tol
    return np.where(asm, "ASM", np.where(sm, "SM", "NSM"))


# -- building a problem from a Dataset (pages, command line) ---------------------
def upsampled(X: np.ndarray, upsample: int = 1) -> np.ndarray:
    """(n, p, q) samples enlarged by np.kron(X_i, ones((k, k))) when ``upsample`` = k > 1 (else X itself)."""
    if upsample > 1:
        X = np.kron(X, np.ones((1, upsample, upsample), dtype=X.dtype))
    return X


def binary_labels(dataset, positive: str = "") -> np.ndarray:
    """±1 labels: ``positive`` vs the rest, or the dataset's own two classes when ``positive`` is empty."""
    classes = dataset.classes
    if positive in ("", None):
        if len(classes) != 2:
            raise InputError(f"{dataset.name} has {len(classes)} classes {classes.tolist()[:10]}; SMM needs exactly 2 "
                             "(set positive_class to pick a one-vs-rest task)")
        return np.where(dataset.y == classes[1], 1.0, -1.0)
    match = [c for c in classes.tolist() if str(c) == str(positive)]  # page and CLI pass text
    if not match:
        raise InputError(f"positive class {positive!r} is not in {dataset.name}; classes are {classes.tolist()[:20]}")
    return dataset.binary_task(match[0]).y


def train_test(dataset, *, positive_class: str = "", upsample: int = 1, scale: str = "auto",
               test_fraction: float = 0.2, seed: int = 0):
    """(X_train, y_train, X_test, y_test) as (n, p, q) arrays and ±1 labels.

    The dataset's own ``test_mask`` wins (the synthetic generator's last 20%); otherwise a seeded
    random split of ``test_fraction``. ``scale``: "max-abs" divides X by max|X|, "auto" does so only
    when max|X| > 1 (raw pixel counts); the paper leaves real-data scaling unstated (digest §6.2),
    and σ₀ = min(100C, 3000) assumes entries of order one.
    """
    if dataset.task != "classification":
        raise InputError(f"{dataset.name} is a {dataset.task} dataset; SMM needs two-class labels")
    if scale not in ("auto", "none", "max-abs"):
        raise InputError(f"scale must be auto, none or max-abs, got {scale!r}")
    X = dataset.as_matrices()
    y = binary_labels(dataset, positive_class)
    if dataset.test_mask is not None:
        test = np.asarray(dataset.test_mask, bool)
    else:
        rng = np.random.default_rng(seed)
        test = np.zeros(len(y), bool)
        test[rng.permutation(len(y))[: int(round(test_fraction * len(y)))]] = True
    if len(np.unique(y[~test])) < 2:
        raise InputError("the training part holds one class only; SMM needs both classes")
    n_train = int(np.count_nonzero(~test))
    # refuse from the shapes, before the k²-times larger copies exist (mnist_test ×8 peaked at 8 GB before)
    p, q = X.shape[1] * upsample, X.shape[2] * upsample
    check_memory(estimate_bytes(n_train, p, q), f"SMM on {n_train} samples of {p}×{q}")
    peak = max(float(X.max()), -float(X.min())) if X.size else 0.0  # max|X|, the same after upsampling
    if (scale == "max-abs" or (scale == "auto" and peak > 1.0)) and peak > 0:
        X = X / peak
    if not test[:n_train].any():  # the test part is the tail (the generator's): views, not copies of X
        X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    else:
        X_train, y_train, X_test, y_test = X[~test], y[~test], X[test], y[test]
    return upsampled(X_train, upsample), y_train, upsampled(X_test, upsample), y_test

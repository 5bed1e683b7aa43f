"""The NPSVC problem: a labelled train/test split, kernel features Ψ, per-class objectives.

Notation follows seed 004 (Zhang, Lai, Zhou & Liang, ICML 2024) with numpy's rows-as-samples
convention: the training features are Ψ (n×p) with ΨΨᵀ = K(X, X) + εI (Alg. 1 lines 3–8),
ψ(x) = Ψ⁻¹k(X, x) maps new points, and the linear kernel uses Ψ = X (p = m). A bias is
obtained, as the paper's footnote 1 suggests, by appending a constant feature: k ← k + 1.

For class l the "own" rows S_l and the "other" rows N_l give (eq. 5, Table 1)

    J_l(u) = ½ Σ_{i∈S_l} (ψ_iᵀu)² + c Σ_{i∈N_l} ℓ_d(ψ_iᵀu) + R(u)

with ℓ_d(a) = [1 − a]₊ (TWSVM) or ½(1 − a)² (LSTSVM). One-versus-rest (the paper's rule) takes
S_l = {i : y_i = l}; rest-versus-one (the official code's default) swaps the two sets.
Prediction is by the nearest hyperplane, eq. (21): argmin_l |f_l(x)| / ‖w̃_l‖ (argmax for
rest-versus-one, whose hyperplane l passes through the other classes).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.model_selection import train_test_split

from ..core import InputError, Param, check_array, check_labels, check_memory, check_same_length, validate_params
from ..datasets import SEED, Dataset
from .arrays import array_namespace

KERNELS = ("rbf", "linear", "poly")
STRATEGIES = ("ovr", "rvo")
SPLITS = ("random", "predefined")

# Upper bound of the weights, ridges and steps (c, r₁, r₂, μ, γ, η). Near 1e150 they overflow float64 in squared
# terms (the τ-step's Gram r₁²(…), polar's AᵀA): r₁ = 1e160 and μ = η = 1e300 raised LinAlgError. 1e12 keeps the
# limits that mean something: r₂ = 1e12 makes v vanish and K-NPSVC++ reduce to TWSVM (test_knpsvc), and every
# kernel method runs with all of them at 1e12 (test_problem).
MAX_WEIGHT = 1e12

PROBLEM_PARAMS = [
    Param("kernel", "rbf", str, choices=KERNELS, help="prior map φ: Gaussian, linear or polynomial kernel"),
    Param("width", 0.0, float, low=0, ui_range=(0.0, 100.0),
          help="Gaussian width t in exp(−‖x−x'‖²/t); 0 = mean pairwise squared distance (App. C.2.1)", symbol="t"),
    Param("degree", 2, int, low=1, high=8, help="polynomial kernel degree: (xᵀx' + coef0)^degree"),
    Param("coef0", 1.0, float, low=0, ui_range=(0.0, 10.0), help="polynomial kernel offset"),
    Param("bias", True, bool, help="append a constant feature (k + 1) so every hyperplane has an offset"),
    Param("strategy", "ovr", str, choices=STRATEGIES,
          help="ovr: hyperplane l fits class l (paper); rvo: it fits the other classes (official code)"),
    Param("split", "random", str, choices=SPLITS,
          help="random stratified split, or the dataset's predefined test rows (dna, pendigits)"),
    Param("test_size", 0.4, float, low=0, high=0.9, help="test fraction of a random split (Table 2: 0.4)"),
    Param("max_train", 1000, int, low=10, high=50_000,
          help="stratified subsample of the training rows (the kernel needs n² memory)"),
    Param("standardize", True, bool, help="z-score the features with training statistics"),
    SEED,
]


# -- kernels ----------------------------------------------------------------
def squared_distances(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """‖a_i − b_j‖² for numpy arrays or torch tensors (the device path builds its kernel with it)."""
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return sq.clip(min=0.0)


def mean_squared_distance(X: np.ndarray) -> float:
    """(1/n²) Σ_ij ‖x_i − x_j‖² = 2 (mean ‖x‖² − ‖mean x‖²), in O(nm) (App. C.2.1's width t)."""
    return float(2.0 * ((X * X).sum(1).mean() - (X.mean(0) ** 2).sum()))


@dataclass(frozen=True)
class Kernel:
    name: str = "rbf"
    width: float = 1.0
    degree: int = 2
    coef0: float = 1.0
    bias: bool = True

    def __call__(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """k(A, B) for numpy arrays, or torch tensors on a device (knpsvc_torch.py)."""
        if self.name == "rbf":
            G = array_namespace(A).exp(-squared_distances(A, B) / self.width)
        elif self.name == "poly":
            G = (A @ B.T + self.coef0) ** self.degree
        else:
            G = A @ B.T
        return G + 1.0 if self.bias else G


def kernel_overflow(kernel: Kernel) -> InputError:
    return InputError(f"the {kernel.name} kernel matrix overflows (degree {kernel.degree}, coef0 {kernel.coef0:g}); "
                      "lower coef0 or the degree")


def jitter(diagonal) -> float:
    """ε = 1e-3 · mean diag K (the official code's 1e-3 for a unit-diagonal kernel), added to K's diagonal."""
    return 1e-3 * float(diagonal.mean())


class KernelFeatures:
    """Ψ for the training rows and ψ(·) for new ones (Alg. 1 lines 3–8, §3.1 of the digest).

    Linear kernel: Ψ = [X, 1]. Other kernels: ΨΨᵀ = K + εI by Cholesky with jitter
    ε = 1e-3 · mean diag K (the official code's 1e-3 for a unit-diagonal kernel), and
    ψ(x) = Ψ⁻¹ k(X, x), so that ⟨ψ(x), ψ_j⟩ = k(x, x_j) exactly. (The digest's ψ(x_i) = ψ_i holds
    only for ε = 0: the jitter makes them differ by εΨ⁻¹e_i. Training rows use ψ_i, as the paper does.)
    """

    def __init__(self, X: np.ndarray, kernel: Kernel):
        self.X = X
        self.kernel = kernel
        if kernel.name == "linear":
            self.gram_matrix = None
            self.chol = None
            self.Psi = self._linear(X)
        else:
            with np.errstate(over="ignore"):  # an overflow is refused just below, with the parameters to change
                K = kernel(X, X)
            if not np.isfinite(K).all():  # (xᵀx' + coef0)^degree overflows float64 for a large coef0 or degree
                raise kernel_overflow(kernel)
            K[np.diag_indices_from(K)] += jitter(np.diag(K))
            self.gram_matrix = K
            self.chol = sla.cholesky(K, lower=True)
            self.Psi = self.chol

    def _linear(self, X: np.ndarray) -> np.ndarray:
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.kernel.bias else X

    @property
    def p(self) -> int:
        return self.Psi.shape[1]

    def __call__(self, Xnew: np.ndarray) -> np.ndarray:
        """ψ(x) for each row of Xnew, as rows (n_new × p)."""
        if self.chol is None:
            return self._linear(Xnew)
        return sla.solve_triangular(self.chol, self.kernel(self.X, Xnew), lower=True).T

    def gram(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """Blocks of ΨΨᵀ without forming all of it for the linear kernel."""
        if self.gram_matrix is None:
            A = self.Psi[rows_a]
            return A @ (A if rows_b is rows_a else self.Psi[rows_b]).T  # AAᵀ: syrk, exactly symmetric
        return self.gram_matrix[np.ix_(rows_a, rows_b)]


# -- the problem ------------------------------------------------------------
@dataclass
class NPSVCProblem:
    """Training and test data (codes 0..K−1) with the kernel and the multi-class strategy."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    classes: np.ndarray
    kernel: Kernel
    strategy: str = "ovr"
    image_shape: tuple[int, int] | None = None
    name: str = "data"
    meta: dict = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_train(self) -> int:
        return self.X_train.shape[0]

    @property
    def feature_dim(self) -> int:
        """p: the number of columns of Ψ (n for kernels, m (+1 with a bias) for the linear kernel)."""
        if self.kernel.name != "linear":
            return self.n_train
        return self.X_train.shape[1] + int(self.kernel.bias)

    @cached_property
    def features(self) -> KernelFeatures:
        return KernelFeatures(self.X_train, self.kernel)

    @cached_property
    def test_features(self) -> np.ndarray:
        return self.features(self.X_test)

    def own_mask(self, y: np.ndarray | None = None) -> np.ndarray:
        """(n × K) booleans: row i belongs to the "own" set S_l of hyperplane l."""
        y = self.y_train if y is None else y
        own = y[:, None] == np.arange(self.n_classes)[None, :]
        return own if self.strategy == "ovr" else ~own

    def predict_codes(self, F: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """Nearest-hyperplane rule, eq. (21), from the scores F = [f_l(x_i)] and ‖w̃_l‖."""
        distance = np.abs(F) / np.maximum(norms, 1e-300)[None, :]
        return distance.argmin(1) if self.strategy == "ovr" else distance.argmax(1)

    def accuracies(self, U: np.ndarray, norms: np.ndarray, F_train: np.ndarray | None = None) -> tuple[float, float]:
        """Train and test accuracy of the hyperplanes u_l (columns of U) in ψ-coordinates."""
        F_train = self.features.Psi @ U if F_train is None else F_train
        return self.score_accuracies(F_train, lambda: self.test_features @ U, norms)

    def score_accuracies(self, F_train: np.ndarray, test_scores, norms: np.ndarray) -> tuple[float, float]:
        """Train and test accuracy from the training scores and ``test_scores()`` (called only if there are test
        rows), on the host: the device path (knpsvc_torch.py) computes the scores there."""
        train = float(np.mean(self.predict_codes(F_train, norms) == self.y_train))
        if len(self.y_test) == 0:
            return train, float("nan")
        test = float(np.mean(self.predict_codes(test_scores(), norms) == self.y_test))
        return train, test


def class_objectives(F: np.ndarray, own: np.ndarray, c: float, loss: str = "hinge") -> np.ndarray:
    """Σ_{S_l} ½f² + c Σ_{N_l} ℓ_d(f) for every column l of F (eq. 5 without R)."""
    xp = array_namespace(F)  # numpy, or torch on the device path
    similarity = 0.5 * xp.where(own, F, 0.0) ** 2
    slack = (1.0 - F).clip(min=0.0) if loss == "hinge" else 0.5 * (1.0 - F) ** 2
    return similarity.sum(0) + c * xp.where(own, 0.0, slack).sum(0)


# -- building problems ------------------------------------------------------
def memory_estimate(n_train: int, n_test: int, n_classes: int) -> float:
    """Bytes for K, Ψ and the blocks W_l = L_l⁻¹G_{l,−l} that ClassBlocks keeps (3n²; ΨᵀLΨ is never formed),
    the dual Hessians S_l (about K·n²(1 − 1/K)²) and ψ(X_test)."""
    per_class = n_classes * (n_train * (1 - 1 / max(n_classes, 2))) ** 2
    return 8.0 * (3 * n_train**2 + per_class + n_test * n_train)


def check_problem_inputs(X, y, what: str = "NPSVC") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite dense 2-D X, class labels with at least 2 classes; returns (X, classes, codes)."""
    X = check_array(X.toarray() if sp.issparse(X) else X, "X", ndim=2, min_rows=2)
    y = np.asarray(y)
    check_same_length(X, y)
    if y.dtype.kind == "O" and not all(isinstance(v, (str, int, np.integer)) for v in y.ravel()):
        bad = next(v for v in y.ravel() if not isinstance(v, (str, int, np.integer)))
        raise InputError(f"labels must be integers or strings; found {bad!r} of type {type(bad).__name__}")
    classes, codes = check_labels(y, min_classes=2, what=what)
    return X, classes, codes


def _stratified_cap(codes: np.ndarray, cap: int, seed: int) -> np.ndarray:
    """Row indices of a stratified subsample of at most ``cap`` rows (all rows if fewer)."""
    rows = np.arange(len(codes))
    if len(rows) <= cap:
        return rows
    counts = np.bincount(codes)
    if len(rows) - cap >= np.count_nonzero(counts):
        keep, _ = train_test_split(rows, train_size=cap, stratify=codes, random_state=seed)
        return np.sort(keep)
    # Dropping fewer rows than there are classes (scikit-learn refuses to stratify that): take rows in
    # order of their random rank within their class, as a fraction of the class size.
    order = np.random.default_rng(seed).permutation(len(codes))
    c = codes[order]
    by_class = np.argsort(c, kind="stable")
    rank = np.empty(len(c))
    rank[by_class] = np.arange(len(c)) - np.repeat(np.r_[0, np.cumsum(counts)[:-1]], counts)
    return np.sort(order[np.argsort((rank + 0.5) / counts[c], kind="stable")[:cap]])


def _split(codes: np.ndarray, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(len(codes))
    if test_size == 0:
        return rows, rows[:0]
    counts = np.bincount(codes)
    stratify = codes if counts.min() >= 2 else None
    try:
        train, test = train_test_split(rows, test_size=test_size, stratify=stratify, random_state=seed)
    except ValueError as exc:
        raise InputError(f"cannot split {len(rows)} samples with test_size={test_size}: {exc}") from None
    return np.sort(train), np.sort(test)


def make_problem(dataset: Dataset, **params) -> NPSVCProblem:
    """Validate, split, subsample and standardise a classification Dataset; nothing heavy yet.

    The kernel matrix and its Cholesky factor are built on first use (``problem.features``),
    after the memory estimate has been checked here.
    """
    p = validate_params(PROBLEM_PARAMS, params)
    if dataset.task != "classification":
        raise InputError(f"{dataset.name} is a {dataset.task} dataset; NPSVC needs class labels")
    X, classes, codes = check_problem_inputs(dataset.as_vectors(), dataset.y)
    if p["split"] == "predefined":
        if dataset.test_mask is None:
            raise InputError(f"{dataset.name} has no predefined test rows; use split='random'")
        mask = np.asarray(dataset.test_mask, bool)
        train, test = np.flatnonzero(~mask), np.flatnonzero(mask)
    else:
        train, test = _split(codes, p["test_size"], p["seed"])
    if p["max_train"] < len(classes):
        raise InputError(f"max_train = {p['max_train']} is below the {len(classes)} classes of {dataset.name}: "
                         f"every class needs a training row; raise max_train to at least {len(classes)}")
    train = train[_stratified_cap(codes[train], p["max_train"], p["seed"])]
    if len(np.unique(codes[train])) < len(classes):
        raise InputError(f"the training part lacks some of the {len(classes)} classes; raise max_train or lower test_size")
    check_memory(memory_estimate(len(train), len(test), len(classes)), f"NPSVC on {len(train)} training rows")
    Xtr, Xte = X[train], X[test]
    if p["standardize"]:
        mean, std = Xtr.mean(0), Xtr.std(0)
        std[std == 0] = 1.0
        Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
    kernel = make_kernel(Xtr, p["kernel"], p["width"], p["degree"], p["coef0"], p["bias"])
    return NPSVCProblem(Xtr, codes[train], Xte, codes[test], classes, kernel, p["strategy"],
                        dataset.image_shape, dataset.name, {"train_rows": train, "test_rows": test})


def make_kernel(X: np.ndarray, name: str, width: float = 0.0, degree: int = 2, coef0: float = 1.0,
                bias: bool = True) -> Kernel:
    """A Kernel, with the width t = mean pairwise squared distance when ``width`` is 0."""
    if name not in KERNELS:
        raise InputError(f"unknown kernel {name!r}; choose one of {', '.join(KERNELS)}")
    if name == "rbf" and width == 0:
        width = mean_squared_distance(X)
        if width <= 0:
            raise InputError("all training points coincide, so the RBF width is 0; give width > 0")
    return Kernel(name, float(width), int(degree), float(coef0), bool(bias))


def problem_from_arrays(X, y, *, kernel: str = "rbf", width: float = 0.0, degree: int = 2, coef0: float = 1.0,
                        bias: bool = True, strategy: str = "ovr", X_test=None, y_test=None,
                        classes: np.ndarray | None = None, image_shape=None, kernel_memory: bool = True) -> NPSVCProblem:
    """A problem from raw arrays (the estimators' route): no split, no standardisation.

    ``kernel_memory=False`` skips the n² memory check for the deep model, which builds no kernel.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    X, found, codes = check_problem_inputs(X, y)
    if classes is None:
        classes = found
    n_test = 0 if X_test is None else len(X_test)
    if kernel_memory:
        check_memory(memory_estimate(len(codes), n_test, len(classes)), f"NPSVC on {len(codes)} training rows")
    if X_test is None:
        Xte, yte = np.empty((0, X.shape[1])), np.empty(0, dtype=int)
    else:
        Xte = check_array(X_test, "X_test")
        if Xte.shape[1] != X.shape[1]:
            raise InputError(f"X_test has {Xte.shape[1]} features but X has {X.shape[1]}")
        yte = np.searchsorted(classes, np.asarray(y_test))
    k = make_kernel(X, kernel, width, degree, coef0, bias)
    return NPSVCProblem(X, codes, Xte, yte, np.asarray(classes), k, strategy, image_shape)


def chebyshev_columns(J: np.ndarray, tau: np.ndarray) -> dict[str, float]:
    """History columns: each J_l and τ_l, primal max_l J_l (eq. 8), dual τᵀJ (eq. 9) and their gap."""
    primal, dual = float(np.max(J)), float(tau @ J)
    row = {"primal": primal, "dual": dual, "gap": primal - dual}
    row.update({f"J_{l}": float(v) for l, v in enumerate(J)})
    row.update({f"tau_{l}": float(v) for l, v in enumerate(tau)})
    return row

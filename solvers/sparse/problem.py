"""ℓ0-constrained empirical risk: min f(w) s.t. ‖w‖₀ ≤ s (seed 001, problems (1)–(4), (23)).

f has the linear-model form (4), f(w) = g(Xw) + μ‖w‖²/2, with
  * least squares (3):   g(u) = ½‖u − y‖²                     (μ = 0),
  * logistic loss (23):  g(u) = Σᵢ log(1 + exp(−yᵢuᵢ))         (μ = 1e-10 in the paper).
Every evaluation goes through the margin u = Xw, which the solvers cache (`Point`), so
one iteration costs one full product Xᵀ∇g(u) (a "gradient evaluation", GE) plus the
product X_J w_J over the s active columns. X is dense, CSR (never densified; a CSC copy
serves column slices and, transposed, the product Xᵀv) or a `ScaledDense` (design.py: the
estimators' unit-norm columns and intercept column applied inside the products, no copy of X).

The optimality measure is the normalised projected-gradient residual (24),
  Residual(w) = ‖w − P_{A_s}(w − λ∇f(w))‖ / (1 + ‖w‖ + λ‖∇f(w)‖),  λ = step_factor / L.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..core import InputError, Param, as_pm_one, check_array, check_memory, check_same_length, hard_threshold
from .design import ScaledDense, column_norms
from .lipschitz import sigma_max_sq_bound

LOSSES = ("ls", "logistic")
MAX_DOUBLINGS = 200  # of a backtracked L (it stops doubling once L ≥ the true constant, far sooner)
LOSS_LABELS = {"ls": "least squares (3)", "logistic": "logistic + ridge (23)"}

PROBLEM_PARAMS: list[Param] = [
    Param("loss", "ls", str, choices=LOSSES, help="least squares (3) or ℓ2-regularised logistic loss (23)"),
    Param("s", 5, int, low=1, help="sparsity level: at most s nonzero coefficients (used when s_ratio = 0)",
          symbol="s", ui_range=(1, 200)),
    Param("s_ratio", 0.0, float, low=0.0, high=10.0,
          help="if > 0, s = ⌈κ·m⌉ (or ⌊κ·m⌋) from the number of samples m, as in the paper's tables",
          symbol=r"\kappa", ui_range=(0.0, 3.0)),
    Param("s_rounding", "ceil", str, choices=("ceil", "floor"),
          help="rounding of κ·m: Tables 4–10 and Fig. 2 use ceil, Table 1 floor"),
    Param("mu", 1e-10, float, low=0.0, log=True, help="ridge weight of the logistic loss (23); ignored for LS",
          symbol=r"\mu", ui_range=(1e-12, 1.0)),
    Param("lipschitz", "paper", str, choices=("paper", "tight", "backtrack"),
          help="L = σ_max(X)² for both losses (paper, App. B), σ_max(X)²/4 + μ for logistic (tight), or "
               "backtrack: start at max_j ‖x_j‖² (a lower bound; /4 for logistic) and double L whenever a PG "
               "step fails the descent lemma (beyond the paper; no set-up cost)"),
    Param("step_factor", 0.999, float, low=0.0, high=1.0, low_strict=True, high_strict=True,
          help="PG step λ = step_factor / L (paper: 0.999); the residual (24) uses the same λ",
          symbol=r"\lambda L", ui_range=(0.1, 0.999)),
]


def sparsity_from_ratio(kappa: float, m: int, rounding: str = "ceil") -> int:
    """s = ⌈κm⌉ or ⌊κm⌋, guarding against float round-off (⌈0.6·1000⌉ must be 600, not 601)."""
    x = kappa * m
    return int(math.ceil(x - 1e-9)) if rounding == "ceil" else int(math.floor(x + 1e-9))


@dataclass
class Point:
    """An iterate with what the solvers reuse: w, its margin u = Xw, its index set J (|J| = s), f(w)."""

    w: np.ndarray
    u: np.ndarray
    J: np.ndarray
    f: float


@dataclass
class SparseProblem:
    """Data, loss and constants of problem (1). Build it with `make_problem` or directly."""

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    loss: str = "ls"
    s: int = 5
    mu: float = 1e-10
    lipschitz: str = "paper"
    step_factor: float = 0.999
    classes: np.ndarray | None = None  # original labels of −1/+1 when y came from two classes
    L: float | None = None  # a known Lipschitz constant (reuse across s, folds), or backtracking's start; None: computed
    n_free: int = 0  # the last n_free columns (an intercept column) are not counted in ‖w‖₀
    w0: np.ndarray | None = None  # start point (projected onto A_s); None: w⁰ = 0 as in the paper

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise InputError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not isinstance(self.X, ScaledDense):  # a ScaledDense wraps an X the estimator has validated
            self.X = check_array(self.X, "X", allow_sparse=True)
        check_memory(_nbytes(self.X) * (2 if sp.issparse(self.X) else 1), "the sparse problem's data (X and its CSC copy)")
        y = np.asarray(self.y)
        if y.ndim != 1:
            raise InputError(f"y must be 1-D, got shape {y.shape}")
        check_same_length(self.X, y)
        if self.classes is not None and not np.isin(y, (-1.0, 1.0)).all():
            raise InputError("labels must be −1/+1 when their classes are given")
        if self.loss == "logistic":
            if self.classes is None:
                self.classes, y = as_pm_one(y, what="the logistic loss (23)")
        else:
            y = check_array(y, "y", ndim=1)
        self.y = np.asarray(y, dtype=float)
        m, n = self.X.shape
        self.n_free = int(self.n_free)
        if not 0 <= self.n_free < n:
            raise InputError(f"n_free = {self.n_free} unpenalised columns must leave at least one of the n = {n}")
        self.s = self._checked_s(self.s)
        if self.mu < 0 or not math.isfinite(self.mu):
            raise InputError(f"mu must be a finite number >= 0, got {self.mu}")
        if not 0 < self.step_factor < 1:
            raise InputError(f"step_factor must be in (0, 1) so that λ < 1/L, got {self.step_factor}")
        self._csc = self.X.tocsc() if sp.issparse(self.X) else None
        # Xᵀ as CSR (the CSC copy transposed, no new storage): its row-wise product is ~30% faster than X.T's
        self._XT = self._csc.T if self._csc is not None else self.X.T
        if self.lipschitz not in ("paper", "tight", "backtrack"):
            raise InputError(f"lipschitz must be 'paper', 'tight' or 'backtrack', got {self.lipschitz!r}")
        # shared by with_start copies: a path over s reuses the column norms and a backtracked L
        self._cache: dict = {}
        if self.L is None:
            backtrack = self.lipschitz == "backtrack"
            sigma2 = float(np.max(self.column_norms())) ** 2 if backtrack else sigma_max_sq_bound(self.X)
            if sigma2 == 0:
                raise InputError("X is all zeros: no feature carries information, so there is nothing to fit")
            quarter = self.loss == "logistic" and self.lipschitz != "paper"
            self.L = (sigma2 / 4 if quarter else sigma2) + self.ridge
        elif not (math.isfinite(self.L) and self.L > 0):
            raise InputError(f"L = {self.L} must be a finite number > 0 (a Lipschitz constant of ∇f), or None")
        self.L = float(self.L)
        self._cache["L"] = self.L
        self._cols: tuple[bytes | None, object] = (None, None)

    def _checked_s(self, s) -> int:
        n = self.n - self.n_free
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= s <= n:
            raise InputError(f"sparsity s = {s} must be an integer between 1 and the number of features n = {n}")
        return int(s)

    def with_start(self, s: int, w0: np.ndarray | None) -> "SparseProblem":
        """The same data, L and caches at another s and start point (a warm-started path over s)."""
        other = copy.copy(self)
        other.s = self._checked_s(s)
        other.w0 = None if w0 is None else np.asarray(w0, dtype=float)
        return other

    # -- sizes and constants ---------------------------------------------------
    @property
    def m(self) -> int:
        return self.X.shape[0]

    @property
    def n(self) -> int:
        return self.X.shape[1]

    @property
    def L_now(self) -> float:
        """The L in use: the initial L, or the largest that backtracking reached so far."""
        return self._cache["L"]

    @property
    def lam(self) -> float:
        """The PG step λ = step_factor / L of (5) (and of the residual (24))."""
        return self.step_factor / self._cache["L"]

    def column_norms(self) -> np.ndarray:
        """‖x_j‖ of every column, computed once per problem (and shared with its with_start copies)."""
        if "norms" not in self._cache:
            self._cache["norms"] = column_norms(self.X)
        return self._cache["norms"]

    @property
    def ridge(self) -> float:
        """μ of (23); least squares (3) has none."""
        return self.mu if self.loss == "logistic" else 0.0

    # -- the loss g of (4) and its derivatives, all in the margin u = Xw -----------
    def value(self, u: np.ndarray, w_sq: float) -> float:
        """f = g(u) + μ‖w‖²/2, given u = Xw and ‖w‖²."""
        if self.loss == "ls":
            r = u - self.y
            return 0.5 * float(r @ r)
        return float(np.logaddexp(0.0, -self.y * u).sum()) + 0.5 * self.ridge * w_sq

    def dloss(self, u: np.ndarray) -> np.ndarray:
        """∇g(u): u − y (LS), −y·σ(−y∘u) (logistic)."""
        if self.loss == "ls":
            return u - self.y
        return -self.y * expit(-self.y * u)

    def curvature(self, u: np.ndarray) -> np.ndarray | None:
        """Diagonal of ∇²g(u): None (identity) for LS, σ(yu)(1 − σ(yu)) for logistic."""
        if self.loss == "ls":
            return None
        p = expit(self.y * u)
        return p * (1.0 - p)

    # -- products with X -------------------------------------------------------
    def full_gradient(self, u: np.ndarray, w: np.ndarray) -> np.ndarray:
        """∇f(w) = Xᵀ∇g(Xw) + μw: the one O(nnz(X)) product, counted as one GE."""
        g = self._XT @ self.dloss(u)
        if self.ridge:
            g += self.ridge * w
        return np.asarray(g).ravel()

    def gradients(self, points: list[Point]) -> np.ndarray:
        """∇f at several points, one column each, in one blocked pass over X (BLAS-3, not k products)."""
        R = np.column_stack([self.dloss(p.u) for p in points])
        # (Rᵀ X)ᵀ for dense X: the row-major product ran ~35 % faster than Xᵀ R (2000 × 20000, one BLAS thread)
        G = (R.T @ self.X).T if isinstance(self.X, np.ndarray) else np.asarray(self._XT @ R)
        if self.ridge:
            G += self.ridge * np.column_stack([p.w for p in points])
        return G

    def columns(self, J: np.ndarray):
        """X_{:,J} (dense copy or CSC slice), cached for the last J (Newton reuses it while J is identified)."""
        key = J.tobytes()
        cached_key, cols = self._cols
        if key != cached_key:
            cols = self._csc[:, J] if self._csc is not None else self.X[:, J]
            self._cols = (key, cols)  # one assignment: safe when a page shares the problem across threads
        return cols

    def margin(self, w: np.ndarray, J: np.ndarray) -> np.ndarray:
        """Xw for w supported in J, through the s columns only."""
        return np.asarray(self.columns(J) @ w[J]).ravel()

    def point(self, w: np.ndarray, J: np.ndarray) -> Point:
        u = self.margin(w, J)
        wJ = w[J]
        return Point(w, u, J, self.value(u, float(wJ @ wJ)))

    def start(self) -> Point:
        """w⁰ = 0 (all experiments), with J⁰ the first s indices (hard_threshold's padding), or P_{A_s}(w0)."""
        if self.w0 is not None:
            if self.w0.shape != (self.n,):
                raise InputError(f"the start point w0 has shape {self.w0.shape}; it needs ({self.n},)")
            return self.point(*self.project(self.w0))
        w0 = np.zeros(self.n)
        J = np.r_[np.arange(self.s), np.arange(self.n - self.n_free, self.n)]
        return Point(w0, np.zeros(self.m), J, self.value(np.zeros(self.m), 0.0))

    # -- projection and residual ------------------------------------------------
    def project(self, z: np.ndarray, prefer: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """P_{A_s}(z) with its index set; ties go to ``prefer`` (the previous J), then lower indices.
        The last n_free coordinates (an intercept) are kept as they are and always belong to J."""
        if not self.n_free:
            return hard_threshold(z, self.s, prefer)
        head = self.n - self.n_free
        w, J = hard_threshold(z[:head], self.s, None if prefer is None else prefer[prefer < head])
        return np.r_[w, z[head:]], np.r_[J, np.arange(head, self.n)]

    def pg_step(self, z: Point, grad: np.ndarray) -> tuple[Point, float]:
        """T_PG^λ(z) of (5) and Residual(z) of (24), which that step gives for free.

        With lipschitz="backtrack", L doubles until the step passes the descent lemma
        f(w⁺) ≤ f(z) + ⟨∇f(z), w⁺ − z⟩ + L‖w⁺ − z‖²/2, which is all the sufficient-decrease argument
        behind (5) uses (then f(w⁺) ≤ f(z) − (1/λ − L)‖w⁺ − z‖²/2, as with the global L). Each trial
        costs a product over the s new columns, no GE; it ends once L reaches the true constant."""
        for _ in range(MAX_DOUBLINGS):
            lam = self.lam
            w_next, J = self.project(z.w - lam * grad, prefer=z.J)
            nxt = self.point(w_next, J)
            if self.lipschitz != "backtrack" or self._descent_holds(z, nxt, grad):
                break
            self._cache["L"] *= 2.0
        return nxt, residual_value(z.w, w_next, grad, lam)

    def _descent_holds(self, z: Point, nxt: Point, grad: np.ndarray) -> bool:
        fz = z.f if math.isfinite(z.f) else self.value(z.u, float(z.w @ z.w))
        d = nxt.w - z.w
        bound = fz + float(grad @ d) + 0.5 * self.L_now * float(d @ d)
        return nxt.f <= bound + 1e-12 * max(1.0, abs(fz))

    # -- direct evaluations (tests, estimators, strict monitoring) -----------------
    def objective(self, w: np.ndarray) -> float:
        """f(w); through the nonzero columns only when w is sparse (a refit, a solver's output)."""
        J = np.flatnonzero(w)
        u = self.margin(w, J) if J.size <= max(1, self.n // 4) else np.asarray(self.X @ w).ravel()
        return self.value(u, float(w @ w))

    def gradient(self, w: np.ndarray) -> np.ndarray:
        return self.full_gradient(np.asarray(self.X @ w).ravel(), w)

    def hessian_vector(self, w: np.ndarray, v: np.ndarray) -> np.ndarray:
        """∇²f(w)v = Xᵀ D X v + μv (a generalised Hessian for the logistic loss)."""
        u = np.asarray(self.X @ w).ravel()
        Xv = np.asarray(self.X @ v).ravel()
        D = self.curvature(u)
        out = np.asarray(self._XT @ (Xv if D is None else D * Xv)).ravel()
        return out + self.ridge * v

    def residual(self, w: np.ndarray) -> float:
        """Residual (24) at any w, with its own gradient (one extra product; not for the hot loop)."""
        grad = self.gradient(w)
        supp = np.flatnonzero(w)
        w_next, _ = self.project(w - self.lam * grad, prefer=supp if supp.size <= self.s + self.n_free else None)
        return residual_value(w, w_next, grad, self.lam)


def residual_value(w: np.ndarray, w_next: np.ndarray, grad: np.ndarray, lam: float) -> float:
    """(24): ‖w − T(w)‖ / (1 + ‖w‖ + λ‖∇f(w)‖)."""
    return float(np.linalg.norm(w - w_next) / (1.0 + np.linalg.norm(w) + lam * np.linalg.norm(grad)))


def _nbytes(X) -> int:
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def make_problem(dataset, *, loss: str = "ls", s: int = 5, s_ratio: float = 0.0, s_rounding: str = "ceil",
                 mu: float = 1e-10, lipschitz: str = "paper", step_factor: float = 0.999,
                 L: float | None = None) -> SparseProblem:
    """Problem (1) on the training rows of a `Dataset`: those outside its own ``test_mask`` (a generator's
    m_test rows, a real set's test file), else all rows; `train_test` also splits datasets without one.
    κ counts training rows: s = ⌈κ·m⌉ with m = the rows the problem is fitted on."""
    if dataset.test_mask is not None:  # the command line passes whole datasets; the page passes `train_test`'s part
        dataset = train_test(dataset)[0]
    X = dataset.as_vectors()
    if s_ratio > 0:  # the user set κ and the rounding, so a refusal names them rather than s
        m, n = X.shape
        s = sparsity_from_ratio(s_ratio, m, s_rounding)
        lo, hi = ("⌈", "⌉") if s_rounding == "ceil" else ("⌊", "⌋")
        formula = f"s = {lo}κ·m{hi} = {lo}{s_ratio:g}·{m}{hi} = {s}"
        if s > n:
            raise InputError(f"{formula} exceeds the number of features n = {n}; lower κ")
        if s < 1:
            raise InputError(f"{formula} leaves no feature to select; raise κ so that κ·m ≥ 1, or round with ceil")
    if loss == "logistic" and dataset.task != "classification":
        raise InputError(f"{dataset.name} is a regression dataset; the logistic loss needs two classes")
    y, classes = dataset.y, None
    if dataset.task == "classification":
        classes, y = as_pm_one(y, what=f"the {LOSS_LABELS[loss]} on class labels (the paper uses ±1)")
    return SparseProblem(X, y, loss=loss, s=s, mu=mu, lipschitz=lipschitz, step_factor=step_factor, classes=classes,
                         L=L)


def prediction_score(problem: SparseProblem, test, w: np.ndarray) -> tuple[str, float]:
    """The paper's test measure (Sec. 4): accuracy of sign(xᵀw) for logistic (PA; sign(0) = +1),
    mean squared error for LS (on ±1 targets for class labels)."""
    if test is None or test.n_samples == 0:
        return ("PA" if problem.loss == "logistic" else "MSE"), float("nan")
    y = np.asarray(test.y)
    if problem.classes is not None:
        y = np.where(y == problem.classes[1], 1.0, -1.0)
    pred = np.asarray(test.as_vectors() @ w).ravel()
    if problem.loss == "logistic":
        return "PA", float(np.mean(np.where(pred >= 0, 1.0, -1.0) == y))
    return "MSE", float(np.mean((pred - y) ** 2))


def train_test(dataset, test_fraction: float = 0.2, seed: int = 0):
    """(train, test) Datasets: the dataset's own test_mask if it has one, else a seeded random split."""
    if dataset.test_mask is not None:
        mask = np.asarray(dataset.test_mask, bool)
    else:
        if not 0 <= test_fraction < 1:
            raise InputError(f"test_fraction must be in [0, 1), got {test_fraction}")
        m = dataset.n_samples
        n_test = int(round(test_fraction * m))
        mask = np.zeros(m, bool)
        mask[np.random.default_rng(seed).permutation(m)[:n_test]] = True
    train = dataset.subset(np.flatnonzero(~mask), name=f"{dataset.name} (train)")
    test = dataset.subset(np.flatnonzero(mask), name=f"{dataset.name} (test)")
    train.test_mask = test.test_mask = None
    return train, test

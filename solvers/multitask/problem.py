"""rASO, Eq. (8)/(64): min over U = [u_1 … u_m], b and M of

    F(U, b, M) = Σ_ℓ (1/n_ℓ) Σ_i L(u_ℓᵀx_i^ℓ + b_ℓ, y_i^ℓ) + c · tr(Uᵀ(ηI + M)⁻¹U)
    s.t. tr M = h, 0 ⪯ M ⪯ I,

with η = β/α and c = αη(1 + η) (the main paper's Eq. (9) for G_2, reconstructed in the digest §1.2).
In the composite form (20), f is smooth and g is the rest: for least squares and logistic f = loss + cG_2,
g = indicator of C; for the hinge loss f = cG_2 and g = Σ hinge (Appendix B.2).

Gradients (digest §2.2), with A = ηI + M and K = A⁻¹U from one Cholesky factorisation:
∇_U (cG_2) = 2cK,  ∇_M (cG_2) = −cKKᵀ.

The optimality measure of the family is the norm of the gradient mapping at unit step,
‖Z − prox_g(Z − ∇f(Z))‖_F (it is zero exactly at the optimum; Eq. (43) with L = 1).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..core import InputError, Param
from .data import CLASSIFICATION_LOSSES, TaskData, from_dataset
from .hinge_prox import dual_lipschitz, hinge_prox
from .losses import LOSSES, loss_derivative, loss_values
from .subspace import project_trace_box_psd, shared_subspace

#: α and β within [1e-100, 1e100] keep η = β/α and c = β(1 + η) far from float64's overflow (1.8e308) and
#: underflow, and the hinge U-step's C = 1/(2cn) finite
WEIGHT_MIN, WEIGHT_MAX = 1e-100, 1e100
#: η = β/α within [1e-12, 1e12]: ηI + M must stay numerically positive definite although M's zero eigenvalues
#: carry rounding of about d·eps ≈ 1e-14 (below that the Cholesky of A fails), and η + 1 must still differ from η
#: by many digits (at 1/eps ≈ 4.5e15 the M-block vanishes from A in float64)
ETA_MIN, ETA_MAX = 1e-12, 1e12

PROBLEM_PARAMS = [
    Param("loss", "least_squares", str, choices=LOSSES, help="task loss L of Eq. (8); hinge is Eq. (64)"),
    Param("alpha", 0.1, float, low=WEIGHT_MIN, high=WEIGHT_MAX, log=True, symbol=r"\alpha", ui_range=(1e-3, 1e2),
          help="weight of the distance to the shared subspace (task relatedness)"),
    Param("beta", 0.01, float, low=WEIGHT_MIN, high=WEIGHT_MAX, log=True, symbol=r"\beta", ui_range=(1e-3, 1e2),
          help="ridge weight on each task's predictor; η = β/α"),
    Param("h", 2, int, low=0, high=10_000, symbol="h", help="dimension of the shared subspace, tr M = h (0 ≤ h ≤ d)"),
    Param("intercept", True, bool, help="fit an unpenalised bias b_ℓ per task (always on for hinge, Eq. (64))"),
]

MEASURE = "grad_map"


class IterateOverflow(ArithmeticError):
    """A step left float64's range (an entry is inf or NaN); the solvers stop with status ``diverged``."""


@dataclass
class Point:
    """Z = (U, b, M) of Eq. (20)."""

    U: np.ndarray  # d × m
    b: np.ndarray  # m
    M: np.ndarray  # d × d, symmetric

    def combine(self, other: "Point", a: float) -> "Point":
        """(1 + a)·self − a·other: the search point of Eq. (35)."""
        return Point((1 + a) * self.U - a * other.U, (1 + a) * self.b - a * other.b, (1 + a) * self.M - a * other.M)

    def minus(self, other: "Point") -> "Point":
        return Point(self.U - other.U, self.b - other.b, self.M - other.M)

    def dot(self, other: "Point") -> float:
        return float(np.sum(self.U * other.U) + self.b @ other.b + np.sum(self.M * other.M))

    def norm(self) -> float:
        return float(np.sqrt(self.dot(self)))

    def is_finite(self) -> bool:
        return bool(np.isfinite(self.U).all() and np.isfinite(self.b).all() and np.isfinite(self.M).all())


@dataclass
class MultiTaskProblem:
    data: TaskData
    loss: str
    alpha: float
    beta: float
    h: int
    intercept: bool = True
    cache: dict = field(default_factory=dict, repr=False)  # data-only quantities, shared by with_params copies
    _measure_dual: np.ndarray | None = field(default=None, repr=False)  # warm start of the hinge prox in grad_map

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise InputError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
        for spec in (p for p in PROBLEM_PARAMS if p.name in ("alpha", "beta")):
            value = getattr(self, spec.name)
            if not (np.isfinite(value) and value > 0):
                raise InputError(f"{spec.name} must be a positive number, got {value}")
            spec.check(value)
        if not ETA_MIN <= self.eta <= ETA_MAX:
            raise InputError(f"η = beta/alpha = {self.beta:g}/{self.alpha:g} = {self.eta:.3g} is out of range; "
                             f"keep it within [{ETA_MIN:g}, {ETA_MAX:g}] (ηI + M is numerically singular below, "
                             "and M has no effect above): bring alpha and beta closer together")
        d = self.data.n_features
        if int(self.h) != self.h or not 0 <= self.h <= d:
            raise InputError(f"h = {self.h} must be an integer between 0 and d = {d} (the number of features)")
        self.h = int(self.h)
        if self.loss == "hinge" and not self.intercept:
            raise InputError("the hinge loss of Eq. (64) always has a bias b_ℓ; set intercept=True")
        if (self.loss in CLASSIFICATION_LOSSES) != bool(self.data.classes):
            raise InputError(f"the task data were prepared for another loss; rebuild them with loss={self.loss!r}")

    # -- derived parameters -------------------------------------------------
    @property
    def eta(self) -> float:
        return self.beta / self.alpha

    @property
    def c(self) -> float:
        return self.alpha * self.eta * (1.0 + self.eta)  # = β(1 + η)

    @property
    def d(self) -> int:
        return self.data.n_features

    @property
    def m(self) -> int:
        return self.data.n_tasks

    @property
    def smooth_loss(self) -> bool:
        return self.loss != "hinge"

    def with_params(self, **changes) -> "MultiTaskProblem":
        """A copy with other parameters; it shares the data-only cache unless the data change."""
        fresh = {"cache": {}, "_measure_dual": None} if "data" in changes else {"_measure_dual": None}
        return replace(self, **changes, **fresh)

    def initial_point(self) -> Point:
        """Z_0 = (U = 0, b = 0, M = (h/d) I): feasible (digest §2.1)."""
        return Point(np.zeros((self.d, self.m)), np.zeros(self.m), (self.h / self.d) * np.eye(self.d))

    # -- values and gradients -----------------------------------------------
    def factor(self, M: np.ndarray):
        """Cholesky of A = ηI + M, or None when A is not positive definite."""
        try:
            return cho_factor(self.eta * np.eye(self.d) + M, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return None

    def loss_sum(self, U: np.ndarray, b: np.ndarray) -> float:
        s = self.data.scores(U, b)
        return float(self.data.row_weights @ loss_values(self.loss, s, self.data.y))

    def coupling(self, U: np.ndarray, M: np.ndarray) -> float:
        """c·G_2(U, M) = c·tr(Uᵀ(ηI+M)⁻¹U) (Eq. (9)); +inf outside the domain."""
        chol = self.factor(M)
        if chol is None:
            return np.inf
        return self.c * float(np.sum(U * cho_solve(chol, U, check_finite=False)))

    def objective(self, Z: Point) -> float:
        return self.loss_sum(Z.U, Z.b) + self.coupling(Z.U, Z.M)

    def smooth_value(self, Z: Point) -> float:
        """f of Eq. (20)."""
        value = self.coupling(Z.U, Z.M)
        return value + self.loss_sum(Z.U, Z.b) if self.smooth_loss else value

    def smooth_value_grad(self, Z: Point, chol=None) -> tuple[float, Point]:
        """f and ∇f at Z (Z.M must keep ηI + M positive definite)."""
        chol = self.factor(Z.M) if chol is None else chol
        if chol is None:
            raise InputError("ηI + M is not positive definite at this point")
        K = cho_solve(chol, Z.U, check_finite=False)
        value = self.c * float(np.sum(Z.U * K))
        gU, gb, gM = 2.0 * self.c * K, np.zeros(self.m), -self.c * (K @ K.T)
        if self.smooth_loss:
            s = self.data.scores(Z.U, Z.b)
            w = self.data.row_weights
            value += float(w @ loss_values(self.loss, s, self.data.y))
            r = w * loss_derivative(self.loss, s, self.data.y)
            gU = gU + self.data.back(r)
            if self.intercept:
                gb = self.data.bias_back(r)
        return value, Point(gU, gb, gM)

    # -- the prox step of Eq. (36)/(42) ---------------------------------------
    def dual_lipschitz(self) -> np.ndarray:
        if "dual_lipschitz" not in self.cache:
            self.cache["dual_lipschitz"] = dual_lipschitz(self.data)
        return self.cache["dual_lipschitz"]

    def prox(self, Y: Point, L: float, warm: np.ndarray | None = None) -> tuple[Point, np.ndarray | None]:
        """argmin_{Z ∈ C} (L/2)‖Z − Y‖² + g(Z). Returns the point and the hinge dual (for warm starts).
        Raises IterateOverflow when Y is not finite (a gradient step that overflowed), before any projection."""
        if not Y.is_finite():
            raise IterateOverflow("the gradient step overflowed float64 (inf or NaN entries)")
        M, _, _ = project_trace_box_psd(Y.M, self.h)  # Eq. (75)
        if self.smooth_loss:
            return Point(Y.U, Y.b, M), None
        box = 2.0 / (L * self.data.sizes)  # γ̂_ℓ = 2/(L n_ℓ), Eq. (72) with the 1/n_ℓ of (64) (E6)
        U, b, dual, _, _ = hinge_prox(self.data, Y.U, Y.b, box[self.data.task_of_row],
                                      self.dual_lipschitz(), warm)
        return Point(U, b, M), dual

    def solution(self, Z: Point) -> dict:
        """U, b, M and the post-processing of Algorithm 2 (lines 11–12): Θ (top-h eigenvectors of M), V = ΘU."""
        Theta, eigs = shared_subspace(Z.M, self.h)
        return {"U": Z.U, "b": Z.b, "M": Z.M, "Theta": Theta, "V": Theta @ Z.U, "eig_M": eigs,
                "sv_U": np.linalg.svd(Z.U, compute_uv=False)}

    def spectra(self, Z: Point) -> tuple[np.ndarray, np.ndarray]:
        """The eigenvalues of M (largest first) and the singular values of U at Z."""
        return np.linalg.eigvalsh(Z.M)[::-1], np.linalg.svd(Z.U, compute_uv=False)

    def gradient_step(self, Z: Point, grad: Point, L: float) -> Point:
        return Point(Z.U - grad.U / L, Z.b - grad.b / L, Z.M - grad.M / L)

    def grad_map(self, Z: Point) -> float:
        """‖Z − prox_g(Z − ∇f(Z))‖_F: the optimality measure (zero iff Z is optimal); inf when the unit gradient
        step overflows, which the history recorder reports as ``diverged``."""
        _, grad = self.smooth_value_grad(Z)
        try:
            Z_plus, self._measure_dual = self.prox(self.gradient_step(Z, grad, 1.0), 1.0, self._measure_dual)
        except IterateOverflow:
            return np.inf
        return Z.minus(Z_plus).norm()


class SpectraLog:
    """The per-iteration spectra of ``spectra=True``, one row per history row, kept as two 2-D arrays in the
    result's ``info["spectra"]`` (``eig_M``: iterations × d, ``sv_U``: iterations × min(d, m)), not as history
    columns: a column of per-row vectors holds every value as a Python object (≈ 4× the memory of the numbers,
    and pickled value by value when a worker sends the run back)."""

    def __init__(self, problem: MultiTaskProblem, enabled: bool) -> None:
        self.problem, self.enabled = problem, enabled
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []

    def record(self, Z: Point) -> None:
        if self.enabled:
            self.rows.append(self.problem.spectra(Z))

    def info(self) -> dict:
        if not self.enabled:
            return {}
        eig, sv = zip(*self.rows)
        return {"spectra": {"eig_M": np.array(eig), "sv_U": np.array(sv)}}


def make_problem(dataset, *, loss: str = "least_squares", alpha: float = 0.1, beta: float = 0.01, h: int = 2,
                 intercept: bool = True, rows: np.ndarray | None = None) -> MultiTaskProblem:
    """The rASO problem on a platform Dataset (its training rows: ``rows``, else those outside ``test_mask``)
    or on ready TaskData."""
    if isinstance(dataset, TaskData):
        data = dataset
    else:
        if rows is None and dataset.test_mask is not None:
            rows = np.flatnonzero(~dataset.test_mask)
        data = from_dataset(dataset, loss, rows)
    return MultiTaskProblem(data, loss, alpha, beta, h, intercept)

"""Algorithm 2: semismooth Newton-CG (SNCG) for the ALM subproblem (8).

The subproblem is written for the generalised model solved by ALM-SNCG,

    min_{W,b} ½‖W − B‖² + (δ'/2)(b − a)² + τ‖W‖_* + C Σ_i max(0, 1 − y_i(⟨W, X_i⟩ + b)),

which is model (1) when B = 0, δ' = 0, and the isPADMM subproblem (D.2) when τ = 0
(then there is no U/Λ block). At fixed multipliers (λ, Λ) and penalty σ, eq. (10)–(11):

    ω(W,b) = −λ − σ(AW + by − e),   X_σ(W) = Λ + σW,
    φ(W,b) = ½‖W − B‖² + (δ'/2)(b − a)² + σ⁻¹E_{δ*_S}(ω) + σ⁻¹E_{τ‖·‖_*}(X_σ(W)) + const,
    ∇_W φ = W − B − A*Π_S(ω) + Π_B(X_σ(W)),   ∇_b φ = δ'(b − a) − yᵀΠ_S(ω)          (17).

Newton systems (18)–(19) are reduced to W alone by the Schur complement (40)–(41):

    Ṽ d_W = −∇_Wφ − (σ r₂/c) Σ_{J1} X_j,   d_b = (r₂ − σ Σ_{J1}⟨X_j, d_W⟩)/c,
    Ṽ = I + σG + σA_J1*A_J1 − (σ²/c) A_J1*y y A_J1,   c = σ|J1| + ρ + δ',  r₂ = −∇_bφ,

with J1 = {0 < ω_j < C} (37) and G ∈ ∂Π_B (Sec. 4.1; G = I when ‖X_σ‖₂ ≤ τ). One Ṽ product
costs O(max(|J1|, |α|)·pq) (Table 1). The system is solved directly instead when that is cheaper
than CG: for G = I by Woodbury on |J1|×|J1| or the pq×pq normal matrix, for G ≠ I by Woodbury with
(I + σG)⁻¹ in closed form in the singular-vector basis (`_spectral_woodbury`; not in the paper).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from .spectral import ShiftedInverse, SpectralPoint, apply_svt_jacobian

ARMIJO_MU = 1e-4  # μ in Step 2
ARMIJO_SHRINK = 0.5  # δ in Step 2
MAX_BACKTRACK = 30
TAU1, TAU2 = 1.0, 0.1  # ρ_i = τ₁ min(τ₂, ‖∇φ‖)
ETA_BAR, VARRHO = 0.1, 0.5  # CG tolerance min(η̄, ‖∇φ‖^{1+ϱ})
CG_ITER_GUESS = 30  # for choosing the direct solve when it is cheaper
BLAS3_GAIN = 4.0  # flops of the BLAS-3 spectral Woodbury solve count this many times less than CG's matvecs (measured)
ROW_SLICE_SHARE = 0.1  # A*z over the rows with z ≠ 0 only when they are at most this share
PHI_NOISE = 1e-13  # relative rounding level of φ: decreases below it are invisible to Armijo
MAX_INVISIBLE = 1  # steps with a decrease below rounding before SNCG gives up (the asked tolerance is out of reach)


class CappedRows:
    """Σ_{j: ω_j ≥ C} y_j vec(X_j), the samples at the bound, for the last set of them asked for, updated by the
    rows that entered or left it: O(|Δ|·pq) instead of a pass over X. The set moves by a few rows from one Newton
    step to the next and from one ALM step (or isPADMM step) to the next, so one is kept across them
    (``alm.SampleCache``); the sum does not depend on C, which isPADMM's steps change."""

    def __init__(self) -> None:
        self.mask: np.ndarray | None = None
        self.total: np.ndarray | None = None

    def sum(self, X: np.ndarray, y: np.ndarray, capped: np.ndarray) -> np.ndarray:
        if self.mask is not None:
            entered = np.flatnonzero(capped & ~self.mask)
            left = np.flatnonzero(self.mask & ~capped)
            if entered.size + left.size <= ROW_SLICE_SHARE * capped.size:
                moved = np.r_[entered, left]  # one gather for the rows that entered (+) or left (−) the bound
                self.total = self.total + _rows_times(X, moved, np.r_[y[entered], -y[left]])
                self.mask = capped
                return self.total
        rows = np.flatnonzero(capped)
        self.total, self.mask = _rows_times(X, rows, y[rows]), capped
        return self.total


@dataclass
class Subproblem:
    """Data and fixed multipliers of one ALM subproblem φ_k."""

    X: np.ndarray  # (n, pq)
    y: np.ndarray
    shape: tuple[int, int]
    C: float
    tau: float  # 0 means no nuclear block (isPADMM's τ = 0 subproblem)
    sigma: float
    lam: np.ndarray
    Lam: np.ndarray | None
    center: np.ndarray | None = None  # B
    b_center: float = 0.0  # a
    b_weight: float = 0.0  # δ'
    row_norms: np.ndarray | None = None  # ‖X_j‖_F, for the certified rows of an `Epoch` (None: no epochs)
    capped_rows: CappedRows = field(default_factory=CappedRows)

    @property
    def nuclear(self) -> bool:
        return self.tau > 0


@dataclass
class Point:
    """φ and ∇φ at (W, b), with what the Newton step and the multiplier update reuse."""

    W: np.ndarray
    b: float
    Xw: np.ndarray  # X vec(W)
    omega: np.ndarray
    p_omega: np.ndarray  # Π_S(ω) = −λ^{k+1}
    spec: SpectralPoint | None
    phi: float
    gW: np.ndarray
    gb: float
    A_adj_norm: float  # ‖A*Π_S(ω)‖ (for the relative residual η_W)
    ball: np.ndarray | None = None  # Π_B(X_σ(W)) = Λ^{k+1}
    capped: np.ndarray | None = None  # ω ≥ C
    cap_sum: np.ndarray | None = None  # C Σ_{ω_j ≥ C} y_j vec(X_j)
    J: np.ndarray | None = None  # J1 = {0 < ω_j < C} (37)
    XJ: np.ndarray | None = None  # X[J1], contiguous (|J1|, pq)

    @property
    def grad_norm(self) -> float:
        return float(np.sqrt(np.vdot(self.gW, self.gW) + self.gb**2))


EPOCH_RADIUS = 3.0  # an epoch certifies rows for ‖W − W_ref‖ ≤ 3‖d_W‖ (3 beat 10 in CPU s)
EPOCH_MAX_SHARE = 0.25  # an epoch only when at most a quarter of the rows stay uncertified (0.25 beat 0.5)


@dataclass
class Epoch:
    """Rows whose region of ω cannot change while ‖W − W_ref‖ ≤ radius, so that a Newton step needs
    X d_W on the other rows only, not a pass over all n samples.

    ω_j = −λ_j − σ(y_j(⟨X_j, W⟩ + b) − 1) moves by at most σ‖X_j‖·‖W − W_ref‖ (Cauchy–Schwarz; b enters
    exactly), so a row with ω_j ≤ −σ‖X_j‖r stays free (Π_S ω_j = 0) and one with ω_j ≥ C + σ‖X_j‖r stays
    at the bound (Π_S ω_j = C) on the ball of radius r. Their X vec(W) is left at its value at W_ref
    ("stale"): they enter ∇φ (17) only through C·Σ y_jX_j, which `with_gradient` keeps exactly, and φ
    through Σ_{capped} ω_j, corrected here by the exact −C⟨S, W − W_ref⟩ with S = Σ_{certified capped} y_jX_j."""

    W_ref: np.ndarray
    radius: float
    rows: np.ndarray  # the uncertified rows (J1 among them)
    XA: np.ndarray  # X[rows], contiguous
    S: np.ndarray  # Σ_{certified, ω ≥ C} y_j vec(X_j)
    C: float

    def phi_shift(self, W: np.ndarray) -> float:
        """Exact φ minus φ computed from the stale ω of the certified capped rows."""
        return -self.C * float(self.S @ (W - self.W_ref).ravel())

    def contains(self, W: np.ndarray) -> bool:
        return float(np.linalg.norm(W - self.W_ref)) <= self.radius


def start_epoch(sub: Subproblem, pt: Point, DW: np.ndarray) -> Epoch | None:
    """An epoch at ``pt`` (whose X vec(W) is exact) of radius EPOCH_RADIUS·‖d_W‖, or None when more than
    EPOCH_MAX_SHARE of the rows would stay uncertified (then a full pass per step is as cheap)."""
    if sub.row_norms is None:
        return None
    omega, C, n = pt.omega, sub.C, pt.omega.size
    radius = EPOCH_RADIUS * float(np.linalg.norm(DW))
    edge = np.where(omega <= 0, -omega, np.maximum(omega - C, 0.0))  # ω's distance to its region's edge
    rows = np.flatnonzero(edge <= sub.sigma * radius * sub.row_norms)
    if rows.size > EPOCH_MAX_SHARE * n:
        return None
    XA = sub.X[rows]
    capped_active = pt.capped[rows]
    S = pt.cap_sum / C - np.asarray((sub.y[rows] * capped_active).astype(XA.dtype) @ XA, float)
    return Epoch(pt.W.copy(), radius, rows, XA, S, C)


def evaluate(sub: Subproblem, W: np.ndarray, b: float, Xw: np.ndarray, gradient: bool = True,
             epoch: Epoch | None = None) -> Point:
    """φ (and ∇φ) at (W, b); ``Xw`` = X vec(W) is passed in so line-search trials cost O(n) (stale on the
    rows ``epoch`` certifies, whose φ term it corrects)."""
    sigma, C = sub.sigma, sub.C
    omega = -sub.lam - sigma * (sub.y * (Xw + b) - 1.0)
    p_omega = np.clip(omega, 0.0, C)
    # σ⁻¹E_{δ*_S}(ω) = (‖ω‖² − ‖ω − Π_S ω‖²)/(2σ) (§1.3 of the digest), summed as ⟨Π_S ω, 2ω − Π_S ω⟩/(2σ):
    # the difference of squares loses eps·σ‖r‖² to cancellation (|ω| ≈ σ|r| off the margin), which at
    # σ ≈ 3e4 exceeded the decreases Armijo asks for and stalled SNCG (docs/benchmarks/smm.md, disagreement 4)
    phi = 0.5 * float(p_omega @ (2.0 * omega - p_omega)) / sigma
    Wc = W if sub.center is None else W - sub.center
    phi += 0.5 * float(np.vdot(Wc, Wc)) + 0.5 * sub.b_weight * (b - sub.b_center) ** 2
    spec = None
    if sub.nuclear:
        spec = SpectralPoint.of(sub.Lam + sigma * W, sub.tau)
        phi += spec.envelope() / sigma
    if epoch is not None:
        phi += epoch.phi_shift(W)
    point = Point(W, b, Xw, omega, p_omega, spec, phi, None, 0.0, 0.0)
    return with_gradient(sub, point) if gradient else point


def _rows_times(X: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_{j ∈ rows} weights_j X_j (flat), slicing when the rows are few, else a weighted full pass."""
    if rows.size == 0:
        return np.zeros(X.shape[1])
    if rows.size <= ROW_SLICE_SHARE * X.shape[0]:
        return np.asarray(weights.astype(X.dtype) @ X[rows], float)
    full = np.zeros(X.shape[0], dtype=X.dtype)
    full[rows] = weights
    return np.asarray(full @ X, float)


def with_gradient(sub: Subproblem, point: Point) -> Point:
    """Fill ∇φ (17). A*Π_S(ω) = C·Σ_{ω_j ≥ C} y_jX_j + Σ_{J1} ω_j y_jX_j: the first sum (the samples
    at the bound) is updated by the rows that entered or left it (`CappedRows`), so a Newton
    step costs O((|Δ| + |J1|)·pq) here instead of a pass over all n samples."""
    X, y, C = sub.X, sub.y, sub.C
    omega = point.omega
    point.capped = omega >= C
    point.cap_sum = C * sub.capped_rows.sum(X, y, point.capped)
    point.J = np.flatnonzero((omega > 0) & (omega < C))  # J1 (37)
    point.XJ = X[point.J]  # the one gather of X_J1 per Newton step: the gradient and the CG products share it
    A_adj = point.cap_sum.copy()
    if point.J.size:
        A_adj += np.asarray((y[point.J] * omega[point.J]).astype(X.dtype) @ point.XJ, float)
    A_adj = A_adj.reshape(sub.shape)
    gW = (point.W if sub.center is None else point.W - sub.center) - A_adj
    if point.spec is not None:
        point.ball = point.spec.ball_projection()
        gW = gW + point.ball
    point.gW = gW
    point.gb = sub.b_weight * (point.b - sub.b_center) - float(y @ point.p_omega)
    point.A_adj_norm = float(np.linalg.norm(A_adj))
    return point


@dataclass
class NewtonStats:
    newton: int = 0
    cg: int = 0
    direct: int = 0
    j1: int = 0
    alpha: int = 0
    steps: list = field(default_factory=list)
    last_cg: int | None = None  # CG steps of the previous Newton system (the next one's cost estimate)


def step_parameters(grad_norm: float, rho_floor: float) -> tuple[float, float]:
    """Algorithm 2, Step 1: the regularisation ρ = τ₁ min(τ₂, ‖∇φ‖) (at least ``rho_floor``) and the CG tolerance
    min(η̄, ‖∇φ‖^{1+ϱ})."""
    return max(TAU1 * min(TAU2, grad_norm), rho_floor), min(ETA_BAR, grad_norm ** (1.0 + VARRHO))


def conjugate_gradient(matvec, rhs, x0, tol: float, max_iter: int):
    """Conjugate gradients on the SPD Ṽ (Prop. 3), warm-started at x0: numpy arrays, or torch tensors on any device
    (the torch backend, torch_alm.py). Two scalar reads per step."""
    x = 1.0 * x0  # a copy, for either library
    r = rhs - matvec(x)
    rr = float(r @ r)
    if math.sqrt(rr) <= tol:
        return x, 0
    d = 1.0 * r
    for it in range(1, max_iter + 1):
        Vd = matvec(d)
        step = rr / float(d @ Vd)
        x += step * d
        r -= step * Vd
        rr_new = float(r @ r)
        if math.sqrt(rr_new) <= tol:
            return x, it
        d = r + (rr_new / rr) * d
        rr = rr_new
    return x, max_iter


def newton_direction(sub: Subproblem, pt: Point, rho: float, cg_tol: float, cg_max: int,
                     d0: np.ndarray, stats: NewtonStats, gram: GramCache | None = None) -> tuple[np.ndarray, float]:
    """Solve (19) through the Schur reduction (40): returns (d_W, d_b). ``gram`` (optional) keeps X_JX_Jᵀ for
    the exact solve when G ≠ I; without it that case uses CG."""
    sigma = sub.sigma
    J, XJ = pt.J, pt.XJ  # J1 (37) and its rows, gathered once in `with_gradient`
    c = sigma * J.size + rho + sub.b_weight
    r2 = -pt.gb
    sJ = np.asarray(XJ.sum(axis=0), float) if J.size else np.zeros(sub.X.shape[1])
    rhs = -pt.gW.ravel() - (sigma * r2 / c) * sJ  # right-hand side of (40)
    spec = pt.spec
    identity_G = spec is None or spec.rank_alpha == 0
    kappa = (1.0 + sigma) if sub.nuclear else 1.0  # Ṽ = κI + H when G = I (or absent)
    stats.j1, stats.alpha = J.size, (spec.rank_alpha if spec is not None else 0)
    pq, m = rhs.size, J.size
    p, q = sub.shape

    def H(d: np.ndarray) -> np.ndarray:  # σA_J*A_J d − (σ²/c)A_J*y yᵀA_J d, labels drop out
        t = XJ @ d.astype(XJ.dtype, copy=False)
        return sigma * np.asarray(XJ.T @ (t - (sigma / c) * t.sum()), float)

    cost_cg = CG_ITER_GUESS * 2.0 * max(m, 1) * pq
    cg_guess = CG_ITER_GUESS if stats.last_cg is None else stats.last_cg
    cost_dual = m * m * pq + m**3 / 3.0
    cost_primal = m * pq * pq + pq**3 / 3.0
    if m == 0 and identity_G:
        dW = rhs / kappa
    elif identity_G and min(cost_dual, cost_primal) < cost_cg:
        stats.direct += 1
        XJd = np.asarray(XJ, float)
        if cost_dual <= cost_primal:  # Woodbury: K = (κ/σ)I + (κ/(ρ+δ'))11ᵀ + X_J X_Jᵀ
            K = XJd @ XJd.T + (kappa / sigma) * np.eye(m) + kappa / (rho + sub.b_weight)
            z = sla.cho_solve(sla.cho_factor(K), XJd @ rhs)
            dW = (rhs - XJd.T @ z) / kappa
        else:  # the pq×pq matrix κI + σX_JᵀX_J − (σ²/c)s sᵀ
            Vmat = sigma * (XJd.T @ XJd) - (sigma**2 / c) * np.outer(sJ, sJ)
            Vmat[np.diag_indices(pq)] += kappa
            dW = sla.cho_solve(sla.cho_factor(Vmat), rhs)
    elif (not identity_G and m and gram is not None
          and m * pq * (gram.new_rows(J) + 3 * spec.rank_alpha) + m**3 / 3.0
          < BLAS3_GAIN * cg_guess * 2.0 * m * pq):  # Gram update + Ω form + Cholesky against the CG products
        stats.direct += 1
        dW = _spectral_woodbury(sub, spec, XJ, gram.of(J, XJ), rhs, rho, c)
    else:
        if sub.nuclear and not identity_G:
            def matvec(d):  # Ṽd = d + σGd + Hd, G = I − 𝒥
                D = d.reshape(p, q)
                return (1.0 + sigma) * d - sigma * apply_svt_jacobian(spec, D).ravel() + H(d)
        else:
            def matvec(d):
                return kappa * d + H(d)
        dW, its = conjugate_gradient(matvec, rhs, d0, cg_tol, cg_max)
        stats.cg += its
        stats.last_cg = its
    tJ = XJ @ dW.astype(XJ.dtype, copy=False) if m else np.zeros(0)
    db = (r2 - sigma * float(np.sum(tJ))) / c
    return dW, db


def _spectral_woodbury(sub: Subproblem, spec: SpectralPoint, XJ: np.ndarray, gram: np.ndarray, rhs: np.ndarray,
                       rho: float, c: float) -> np.ndarray:
    """Ṽ⁻¹ rhs exactly when G ≠ I: Ṽ = M + σX_JᵀPX_J (40) with M = (1+σ)I − σ𝒥 and P = I − (σ/c)11ᵀ.

    M⁻¹ is closed-form in the singular-vector basis (`ShiftedInverse`), and P = P½P½ with
    P½ = I − (1 − √((ρ+δ')/c))11ᵀ/m (P's eigenvalue on 1 is 1 − σm/c = (ρ+δ')/c), so with Z = P½X_J
    Woodbury gives Ṽ⁻¹ = M⁻¹ − M⁻¹Zᵀ(σ⁻¹I + ZM⁻¹Zᵀ)⁻¹ZM⁻¹: one |J1|×|J1| Cholesky of a matrix ⪰ σ⁻¹I
    (no large rank-one term: the Woodbury preconditioner with the b-row in K stalled as ρ → 0).
    X_JM⁻¹X_Jᵀ = X_JX_Jᵀ/κ + X_J(M⁻¹ − I/κ)X_Jᵀ: the Gram matrix ``gram`` (kept across Newton steps by
    `GramCache`) plus a form on the |Ω| = |α|(p + q − |α|) entries where 𝒥 acts, O(|α|·|J1|·pq)."""
    p, q = sub.shape
    m, sigma = XJ.shape[0], sub.sigma
    Minv = ShiftedInverse.of(spec, sigma)
    XJd = np.asarray(XJ, float)
    coords, E = Minv.omega_coordinates(XJd.reshape(m, p, q))
    shrink = 1.0 - np.sqrt((rho + sub.b_weight) / c)

    def half(Z):  # P½ Z along the first axis
        return Z - (shrink / m) * Z.sum(axis=0, keepdims=True)

    K = half(half(gram / Minv.kappa + coords @ E.T).T)
    K[np.diag_indices(m)] += 1.0 / sigma
    u = Minv.solve(rhs.reshape(p, q)).ravel()  # M⁻¹ rhs
    z = sla.cho_solve(sla.cho_factor(K), half(XJd @ u))
    return u - Minv.solve((half(z) @ XJd).reshape(p, q)).ravel()  # M⁻¹Zᵀz = M⁻¹X_JᵀP½z


class GramCache:
    """X_J X_Jᵀ for the current J1, updated by the rows that entered J1 (|Δ|·|J1|·pq flops, not |J1|²pq):
    J1 moves by a few rows between Newton steps and ALM steps (the rows of X never change)."""

    def __init__(self):
        self.rows = np.zeros(0, dtype=np.intp)
        self.gram = np.zeros((0, 0))

    def new_rows(self, J: np.ndarray) -> int:
        return int(J.size - np.count_nonzero(np.isin(J, self.rows, assume_unique=True)))

    def of(self, J: np.ndarray, XJ: np.ndarray) -> np.ndarray:
        kept = np.isin(J, self.rows, assume_unique=True)
        if np.count_nonzero(kept) < J.size // 2:
            XJd = np.asarray(XJ, float)
            gram = XJd @ XJd.T
        else:
            gram = np.empty((J.size, J.size))
            old = np.searchsorted(self.rows, J[kept])
            gram[np.ix_(kept, kept)] = self.gram[np.ix_(old, old)]
            fresh = np.flatnonzero(~kept)
            block = np.asarray(XJ[fresh], float) @ np.asarray(XJ, float).T
            gram[fresh] = block
            gram[:, fresh] = block.T
        self.rows, self.gram = J, gram
        return gram


def directional_derivative(sub: Subproblem, trial: Point, DW: np.ndarray, db: float, Xd: np.ndarray,
                           epoch: Epoch | None = None) -> float:
    """φ'(t) along (d_W, d_b): ⟨W − B + Π_B(X_σ(W)), d_W⟩ + δ'(b − a)d_b − ⟨Π_S(ω), y∘(X d_W + d_b)⟩
    (``Xd`` is zero on the rows ``epoch`` certifies; their capped ones add −C⟨S, d_W⟩)."""
    Wc = trial.W if sub.center is None else trial.W - sub.center
    if trial.spec is not None:
        Wc = Wc + trial.spec.ball_projection()
    shift = 0.0 if epoch is None else -epoch.C * float(epoch.S @ DW.ravel())
    return (float(np.vdot(Wc, DW)) + sub.b_weight * (trial.b - sub.b_center) * db
            - float(trial.p_omega @ (sub.y * (Xd + db))) + shift)


def refresh(sub: Subproblem, pt: Point) -> Point:
    """``pt`` with X vec(W) exact on every row (one pass over X), ending an epoch."""
    Xw = np.asarray(sub.X @ pt.W.ravel().astype(sub.X.dtype, copy=False), float)
    return with_gradient(sub, evaluate(sub, pt.W, pt.b, Xw, gradient=False))


def sncg(sub: Subproblem, W: np.ndarray, b: float, Xw: np.ndarray, stop, *, max_newton: int = 200,
         cg_max: int = 500, rho_floor: float = 1e-10, gram: GramCache | None = None) -> tuple[Point, NewtonStats]:
    """Algorithm 2 from (W, b) until ``stop(point)`` is true (the inexactness rule of the ALM); ``gram`` carries
    X_JX_Jᵀ between calls (a new one when not given)."""
    stats = NewtonStats()
    gram = GramCache() if gram is None else gram
    pt = evaluate(sub, W, b, Xw)
    d0 = np.zeros(W.size)
    invisible = 0
    epoch = None  # while set, pt's X vec(W) is stale on the rows it certifies
    for _ in range(max_newton):
        if stop(pt):
            break
        gnorm = pt.grad_norm
        rho, cg_tol = step_parameters(gnorm, rho_floor)
        dW, db = newton_direction(sub, pt, rho, cg_tol, cg_max, d0, stats, gram)
        slope = float(pt.gW.ravel() @ dW) + pt.gb * db
        if not slope < 0:  # an inexact direction that does not descend: use −∇φ
            dW, db = -pt.gW.ravel(), -pt.gb
            slope = -gnorm**2
        d0 = dW
        DW = dW.reshape(sub.shape)
        if epoch is None or not epoch.contains(pt.W + DW):  # the step may leave the certified ball
            if epoch is not None:
                pt = refresh(sub, pt)
            epoch = start_epoch(sub, pt, DW)
        if epoch is None:
            Xd = np.asarray(sub.X @ dW.astype(sub.X.dtype, copy=False), float)
        else:  # X d_W on the uncertified rows only; ‖W + t d_W − W_ref‖ ≤ radius for t ∈ [0, 1] (convexity)
            Xd = np.zeros(pt.omega.size)
            Xd[epoch.rows] = epoch.XA @ dW.astype(epoch.XA.dtype, copy=False)
        step = 1.0
        noise = PHI_NOISE * (1.0 + abs(pt.phi))
        for _ in range(MAX_BACKTRACK):  # Armijo (Step 2)
            trial = evaluate(sub, pt.W + step * DW, pt.b + step * db, pt.Xw + step * Xd, gradient=False,
                             epoch=epoch)
            if trial.phi <= pt.phi + ARMIJO_MU * step * slope:
                break
            # Near the solution the decrease Armijo asks for drops below the rounding error of φ (whose
            # size grows with nσ): then accept a step along which φ still descends (φ'(t) < 0).
            if trial.phi <= pt.phi + noise and directional_derivative(sub, trial, DW, db, Xd, epoch) < 0:
                break
            step *= ARMIJO_SHRINK
        else:
            stats.steps.append(0.0)
            break  # no decrease possible at machine precision
        stats.newton += 1
        stats.steps.append(step)
        invisible = invisible + 1 if pt.phi - trial.phi <= noise else 0
        pt = with_gradient(sub, trial)
        if invisible >= MAX_INVISIBLE:  # φ has stopped moving at rounding level: the tolerance is out of reach
            break
    if epoch is not None:  # the ALM step needs ω on every row (multipliers (39), η_λ)
        pt = refresh(sub, pt)
    return pt, stats

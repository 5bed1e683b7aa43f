"""ALM-SNCG (Algorithms 1–2) on a torch device: the samples stay where they are (a GPU holds 1e6 × 50 × 100 in
float32, 20 GB), and every pass over them, the proximal maps and the Newton-CG products run there.

It is the algorithm of `alm.py` and `newton.py` — the same φ_k (10), gradient (17), Schur-reduced Newton system
(40)–(41) with J1 (37) and the SVT Jacobian (35), Armijo search, CG tolerance min(η̄, ‖∇φ‖^{1+ϱ}), inexactness
rule `alm.subproblem_tol`, σ schedule `alm.next_sigma`, subsample start and η_kkt (46) — kept simpler:
  * the Newton systems are always solved by CG (no Woodbury direct solves, no Gram cache);
  * every gradient is one pass over X (no incremental sum of the samples at the bound, no epochs: on a GPU a
    pass over 20 GB is ~5 ms, and the numpy code turns epochs off for float32 samples anyway).
Precision: the samples keep their dtype (float32 on the GPU); W, b, λ, ω, φ, every reduction and the p×q
spectral work are float64. X vec(W) accumulates p·q products in the samples' dtype (as numpy's float32 path);
A*z = Σ z_j X_j sums blocks of ROW_BLOCK rows in that dtype and the blocks in float64, so n = 1e6 terms never
share one float32 accumulator. J1's rows are gathered once per Newton step (|J1| ≪ n); when J1 holds more than
GATHER_SHARE of the samples the products run masked over all of X instead of copying it.
Host synchronisation: a few scalars per Newton step, line-search trial and CG step; no array of size n·pq
ever leaves the device.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..core import HistoryRecorder, InputError
from ..core.device import resolve_device, synchronize
from .alm import (SIGMA0_SAMPLE_ROWS, SIGMA_MAX, START_MIN_RATIO, START_TOL, next_sigma, sigma0_of_mean_square,
                  subproblem_tol, subsample_rows)
from .newton import (ARMIJO_MU, ARMIJO_SHRINK, MAX_BACKTRACK, MAX_INVISIBLE, PHI_NOISE, NewtonStats,
                     conjugate_gradient, step_parameters)
from .problem import SMMProblem, check_positive, relative_gap, relobj
from .torch_spectral import TorchSpectralPoint

F64 = torch.float64
ROW_BLOCK = 1024  # rows summed in the samples' dtype before a float64 sum (A*z)
GATHER_SHARE = 0.25  # J1's rows are copied out when they are at most this share of the samples
DEVICES = ("cpu", "torch-cpu", "cuda", "auto")


def torch_device(device: str) -> torch.device:
    """"torch-cpu" is torch on the CPU (the tested stand-in for a GPU); the rest as `core.device.resolve_device`."""
    if device not in DEVICES[1:]:
        raise InputError(f"device = {device!r}; the torch solver runs on one of {', '.join(DEVICES[1:])}")
    return torch.device("cpu") if device == "torch-cpu" else resolve_device(device)


def norm(a: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a))


# -- the samples and the map A of eq. (2) -----------------------------------------
def X_times(X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """X vec(W) in float64 (the products in the samples' dtype)."""
    return (X @ W.reshape(-1).to(X.dtype)).to(F64)


def X_adjoint(X: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Σ_j z_j vec(X_j) in float64: blocks of ROW_BLOCK rows in the samples' dtype, the blocks summed in float64."""
    n, pq = X.shape
    zc = z.to(X.dtype)
    blocks = n // ROW_BLOCK
    head = blocks * ROW_BLOCK
    out = torch.zeros(pq, dtype=F64, device=X.device)
    if blocks:
        partial = torch.bmm(zc[:head].view(blocks, 1, ROW_BLOCK), X[:head].view(blocks, ROW_BLOCK, pq))
        out += partial.view(blocks, pq).to(F64).sum(0)
    if head < n:
        out += (zc[head:] @ X[head:]).to(F64)
    return out


@dataclass(frozen=True, eq=False)
class TorchSMMProblem:
    """`problem.SMMProblem` with its samples on a torch device: X (n, p·q) rows vec(X_i) in the working
    orientation p ≤ q, y (n,) float64 in {−1, +1}."""

    X: torch.Tensor
    y: torch.Tensor
    shape: tuple[int, int]
    C: float
    tau: float
    transposed: bool = False
    classes: tuple = (-1.0, 1.0)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def pq(self) -> int:
        return self.X.shape[1]

    @property
    def device(self) -> torch.device:
        return self.X.device

    @classmethod
    def of(cls, problem: SMMProblem, device: torch.device, dtype=None) -> "TorchSMMProblem":
        """``problem``'s samples copied to ``device`` (in ``dtype``, default their own)."""
        X = torch.as_tensor(problem.X, device=device, dtype=dtype)
        y = torch.as_tensor(problem.y, device=device, dtype=F64)
        return cls(X, y, problem.shape, problem.C, problem.tau, problem.transposed, problem.classes)

    def margins(self, W: torch.Tensor, b: float) -> torch.Tensor:
        return X_times(self.X, W) + b

    def with_C(self, C: float) -> "TorchSMMProblem":
        return TorchSMMProblem(self.X, self.y, self.shape, check_positive(C, "C"), self.tau, self.transposed,
                               self.classes)

    def subset(self, rows: torch.Tensor) -> "TorchSMMProblem":
        return TorchSMMProblem(self.X[rows], self.y[rows], self.shape, self.C, self.tau, self.transposed,
                               self.classes)

    def to_user(self, W: torch.Tensor) -> np.ndarray:
        W = W.cpu().numpy()
        return W.T if self.transposed else W


def build_torch_problem(X: torch.Tensor, y: torch.Tensor, shape: tuple[int, int], *, C: float, tau: float,
                        transposed: bool = False) -> TorchSMMProblem:
    """A problem from samples already on a device (``X`` (n, p·q) in the working orientation, ``y`` ±1), checked
    before any work: shapes, p ≤ q, two classes, positive C and τ."""
    C, tau = check_positive(C, "C"), check_positive(tau, "tau (τ)")
    p, q = shape
    if X.ndim != 2 or X.shape[1] != p * q:
        raise InputError(f"X must be (n, p·q) = (n, {p * q}), got {tuple(X.shape)}")
    if p > q:
        raise InputError(f"the working orientation needs p ≤ q, got {p}×{q}: pass the transposed samples")
    if y.shape != (X.shape[0],):
        raise InputError(f"X has {X.shape[0]} samples but y has shape {tuple(y.shape)}; they must match")
    if not bool(((y == 1) | (y == -1)).all()) or bool((y == 1).all()) or bool((y == -1).all()):
        raise InputError("y must hold both labels −1 and +1 (SMM needs exactly two classes)")
    return TorchSMMProblem(X, y.to(F64), (p, q), C, tau, transposed)


# -- Algorithm 2 ------------------------------------------------------------------
@dataclass
class TorchSubproblem:
    """Data and fixed multipliers of one ALM subproblem φ_k (10)–(11)."""

    problem: TorchSMMProblem
    sigma: float
    lam: torch.Tensor
    Lam: torch.Tensor


@dataclass
class TorchPoint:
    """φ and ∇φ at (W, b), with what the Newton step and the multiplier update reuse (as `newton.Point`)."""

    W: torch.Tensor
    b: float
    Xw: torch.Tensor
    omega: torch.Tensor
    p_omega: torch.Tensor  # Π_S(ω) = −λ^{k+1}
    spec: TorchSpectralPoint
    phi: float
    gW: torch.Tensor | None = None
    gb: float = 0.0
    A_adj_norm: float = 0.0
    ball: torch.Tensor | None = None  # Π_B(X_σ(W)) = Λ^{k+1}
    J: torch.Tensor | None = None  # J1 = {0 < ω_j < C} (37)
    XJ: torch.Tensor | None = None  # X[J1] when gathered

    @property
    def grad_norm(self) -> float:
        return math.sqrt(float(torch.sum(self.gW * self.gW)) + self.gb**2)


def evaluate(sub: TorchSubproblem, W: torch.Tensor, b: float, Xw: torch.Tensor, gradient: bool = True) -> TorchPoint:
    """φ (and ∇φ) at (W, b) from ``Xw`` = X vec(W), so line-search trials cost O(n)."""
    pr, sigma = sub.problem, sub.sigma
    omega = -sub.lam - sigma * (pr.y * (Xw + b) - 1.0)  # (11)
    p_omega = omega.clamp(0.0, pr.C)
    spec = TorchSpectralPoint.of(sub.Lam + sigma * W, pr.tau)
    # σ⁻¹E_{δ*_S}(ω) summed as ⟨Π_S ω, 2ω − Π_S ω⟩/(2σ), as newton.evaluate (no cancellation)
    phi = 0.5 * torch.dot(p_omega, 2.0 * omega - p_omega) / sigma + 0.5 * torch.sum(W * W) + spec.envelope() / sigma
    point = TorchPoint(W, b, Xw, omega, p_omega, spec, float(phi))
    return with_gradient(sub, point) if gradient else point


def with_gradient(sub: TorchSubproblem, point: TorchPoint) -> TorchPoint:
    """∇φ (17): ∇_Wφ = W − A*Π_S(ω) + Π_B(X_σ(W)), ∇_bφ = −yᵀΠ_S(ω); J1 and its rows for the Newton step."""
    pr = sub.problem
    A_adj = X_adjoint(pr.X, pr.y * point.p_omega).view(pr.shape)
    point.ball = point.spec.ball_projection()
    point.gW = point.W - A_adj + point.ball
    point.gb = -float(torch.dot(pr.y, point.p_omega))
    point.A_adj_norm = norm(A_adj)
    point.J = torch.nonzero((point.omega > 0) & (point.omega < pr.C)).flatten()
    if point.J.numel() <= GATHER_SHARE * pr.n:
        point.XJ = pr.X[point.J]
    return point


def newton_direction(sub: TorchSubproblem, pt: TorchPoint, rho: float, cg_tol: float, cg_max: int,
                     d0: torch.Tensor, stats: NewtonStats) -> tuple[torch.Tensor, float]:
    """(d_W, d_b) of (19) through the Schur reduction (40), by CG on
    Ṽ = (1 + σ)I − σ𝒥 + σA_J1*A_J1 − (σ²/c)A_J1*y yᵀA_J1 (labels drop out, G = I − 𝒥), c = σ|J1| + ρ."""
    pr, sigma = sub.problem, sub.sigma
    p, q = pr.shape
    J, m = pt.J, pt.J.numel()
    c = sigma * m + rho
    r2 = -pt.gb
    stats.j1, stats.alpha = m, pt.spec.rank_alpha
    if pt.XJ is not None:
        def rows_times(d):  # (X_j d)_{j ∈ J1}
            return X_times(pt.XJ, d)

        def rows_adjoint(u):  # Σ_{j ∈ J1} u_j X_j
            return X_adjoint(pt.XJ, u)
    else:  # J1 is most of the samples: masked products over X instead of a copy of it
        def rows_times(d):
            return X_times(pr.X, d)[J]

        def rows_adjoint(u):
            full = torch.zeros(pr.n, dtype=F64, device=pr.device)
            full[J] = u
            return X_adjoint(pr.X, full)
    kappa = 1.0 + sigma
    if m:
        sJ = rows_adjoint(torch.ones(m, dtype=F64, device=pr.device))  # Σ_{J1} X_j
        rhs = -pt.gW.reshape(-1) - (sigma * r2 / c) * sJ  # right-hand side of (40)
    else:
        rhs = -pt.gW.reshape(-1)
    if m == 0 and pt.spec.rank_alpha == 0:
        dW = rhs / kappa  # Ṽ = (1 + σ)I
    else:
        def matvec(d):
            out = kappa * d - sigma * pt.spec.jacobian(d.view(p, q)).reshape(-1)
            if m:
                t = rows_times(d)
                out = out + sigma * rows_adjoint(t - (sigma / c) * t.sum())
            return out

        dW, its = conjugate_gradient(matvec, rhs, d0, cg_tol, cg_max)
        stats.cg += its
    db = (r2 - sigma * float(rows_times(dW).sum())) / c if m else r2 / c
    return dW, db


def directional_derivative(sub: TorchSubproblem, trial: TorchPoint, DW: torch.Tensor, db: float,
                           Xd: torch.Tensor) -> float:
    """φ'(t) along (d_W, d_b): ⟨W + Π_B(X_σ(W)), d_W⟩ − ⟨Π_S(ω), y∘(X d_W + d_b)⟩."""
    Wc = trial.W + trial.spec.ball_projection()
    return float(torch.sum(Wc * DW)) - float(torch.dot(trial.p_omega, sub.problem.y * (Xd + db)))


def sncg(sub: TorchSubproblem, W: torch.Tensor, b: float, Xw: torch.Tensor, stop, *, max_newton: int = 200,
         cg_max: int = 500, rho_floor: float = 1e-10) -> tuple[TorchPoint, NewtonStats]:
    """Algorithm 2 from (W, b) until ``stop(point)`` (the ALM's inexactness rule); as `newton.sncg`."""
    stats = NewtonStats()
    pt = evaluate(sub, W, b, Xw)
    d0 = torch.zeros(W.numel(), dtype=F64, device=W.device)
    invisible = 0
    for _ in range(max_newton):
        if stop(pt):
            break
        gnorm = pt.grad_norm
        rho, cg_tol = step_parameters(gnorm, rho_floor)
        dW, db = newton_direction(sub, pt, rho, cg_tol, cg_max, d0, stats)
        slope = float(torch.dot(pt.gW.reshape(-1), dW)) + pt.gb * db
        if not slope < 0:  # an inexact direction that does not descend: use −∇φ
            dW, db = -pt.gW.reshape(-1), -pt.gb
            slope = -gnorm**2
        d0 = dW
        DW = dW.view(pt.W.shape)
        Xd = X_times(sub.problem.X, DW)
        step = 1.0
        noise = PHI_NOISE * (1.0 + abs(pt.phi))
        for _ in range(MAX_BACKTRACK):  # Armijo (Step 2)
            trial = evaluate(sub, pt.W + step * DW, pt.b + step * db, pt.Xw + step * Xd, gradient=False)
            if trial.phi <= pt.phi + ARMIJO_MU * step * slope:
                break
            # below φ's rounding level accept a step along which φ still descends (as newton.sncg)
            if trial.phi <= pt.phi + noise and directional_derivative(sub, trial, DW, db, Xd) < 0:
                break
            step *= ARMIJO_SHRINK
        else:
            stats.steps.append(0.0)
            break
        stats.newton += 1
        stats.steps.append(step)
        invisible = invisible + 1 if pt.phi - trial.phi <= noise else 0
        pt = with_gradient(sub, trial)
        if invisible >= MAX_INVISIBLE:
            break
    return pt, stats


# -- Algorithm 1 ------------------------------------------------------------------
@dataclass
class TorchALMState:
    """(W, b) and (λ, Λ) between ALM steps and warm starts; ``Xw`` = X vec(W) when known; v and U of (9)
    after a step."""

    W: torch.Tensor
    b: float
    lam: torch.Tensor
    Lam: torch.Tensor
    sigma: float
    Xw: torch.Tensor | None = None
    v: torch.Tensor | None = None
    U: torch.Tensor | None = None

    @classmethod
    def zeros(cls, problem: TorchSMMProblem, sigma: float) -> "TorchALMState":
        def zero(*shape):
            return torch.zeros(shape, dtype=F64, device=problem.device)

        return cls(zero(*problem.shape), 0.0, zero(problem.n), zero(*problem.shape), sigma)


def start_sigma0(X: torch.Tensor) -> float:
    """`alm.start_sigma0` on the device: 20 / mean‖X_i‖² over at most 1000 evenly spaced rows."""
    rows = X[:: max(1, X.shape[0] // SIGMA0_SAMPLE_ROWS)].to(F64)
    return sigma0_of_mean_square(float((rows * rows).sum(1).mean()))


def subsample_start(problem: TorchSMMProblem, rows: int, sigma0: float) -> TorchALMState | None:
    """`alm.subsample_start` (the same seeded rows): ALM-SNCG on them to η_kkt ≤ 1e-2, then (W, b, Λ) with λ = 0."""
    chosen = torch.as_tensor(subsample_rows(problem.n, rows), device=problem.device)
    small = problem.subset(chosen)
    if bool((small.y == small.y[0]).all()):
        return None
    _, state = torch_alm_solve(small, tol=START_TOL, max_iter=200, sigma0=sigma0, start_rows=0)
    return TorchALMState(state.W, state.b, torch.zeros(problem.n, dtype=F64, device=problem.device), state.Lam,
                         sigma0, X_times(problem.X, state.W))


def alm_steps(problem: TorchSMMProblem, state: TorchALMState, *, tol: float, max_newton: int = 200):
    """Algorithm 1 forever on the device, updating ``state`` in place; yields (k, point, stats, residuals).
    The residuals are those of `alm.alm_steps` (η_v, η_U vanish by the recovery (9), Moreau form (39))."""
    y, C = problem.y, problem.C
    root_n = 1.0 + math.sqrt(problem.n)
    pinf = 1.0
    for k in range(1, 10**9):
        sub = TorchSubproblem(problem, state.sigma, state.lam, state.Lam)
        tol_sub = subproblem_tol(tol, pinf, k)

        def scale_W(pt: TorchPoint) -> float:
            return 1.0 + norm(pt.W) + pt.A_adj_norm + norm(pt.ball)

        def stop(pt: TorchPoint) -> bool:
            return max(norm(pt.gW) / scale_W(pt), abs(pt.gb) / root_n) <= tol_sub

        Xw = state.Xw if state.Xw is not None else X_times(problem.X, state.W)
        pt, stats = sncg(sub, state.W, state.b, Xw, stop, max_newton=max_newton)
        sigma = state.sigma
        v = (pt.omega - pt.p_omega) / sigma  # (9)
        U = pt.spec.nuclear_prox() / sigma
        state.W, state.b, state.lam, state.Lam, state.Xw = pt.W, pt.b, -pt.p_omega, pt.ball, pt.Xw  # (39)
        state.v, state.U = v, U
        nW, nU = norm(pt.W), norm(U)
        res = {
            "eta_W": norm(pt.gW) / scale_W(pt),
            "eta_b": abs(pt.gb) / root_n,
            "eta_v": norm(state.lam + (v - state.lam).clamp(0.0, C)) / (1.0 + norm(state.lam) + norm(v)),
            "eta_U": 0.0,
            "eta_lambda": norm(y * (pt.Xw + pt.b) + v - 1.0) / root_n,
            "eta_Lambda": norm(pt.W - U) / (1.0 + nW + nU),
        }
        res["kkt"] = max(res.values())
        pinf_prev, pinf = pinf, max(res["eta_lambda"], res["eta_Lambda"])
        yield k, pt, stats, res
        state.sigma = next_sigma(state.sigma, C, k, res, pinf, pinf_prev, tol, SIGMA_MAX)


def torch_alm_solve(problem: TorchSMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
                    sigma0: float | None = None, start_rows: int = 0, max_newton: int = 200,
                    obj_opt: float | None = None, state: TorchALMState | None = None):
    """ALM-SNCG on the device from ``state`` (a path's warm start), a subsample's solution (``start_rows``) or the
    origin; as `alm.alm_solve`. Returns (Result, final state); the Result's arrays are host copies."""
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    if state is None:
        sigma0 = start_sigma0(problem.X) if sigma0 is None else sigma0
        if start_rows and problem.n >= START_MIN_RATIO * start_rows:
            state = subsample_start(problem, start_rows, sigma0)
        if state is None:
            state = TorchALMState.zeros(problem, sigma0)
    totals = {"newton": 0, "cg": 0}
    for k, pt, stats, res in alm_steps(problem, state, tol=tol, max_newton=max_newton):
        totals["newton"] += stats.newton
        totals["cg"] += stats.cg
        synchronize(problem.device)
        with rec.excluded():
            row = measures(problem, state, obj_opt)
            row.update(res, sigma=state.sigma, newton_iters=stats.newton, cg_iters=stats.cg, j1=stats.j1,
                       alpha=stats.alpha, rank=pt.spec.rank_alpha, min_step=min(stats.steps) if stats.steps else 1.0)
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(state.W), "b": state.b, "lam": state.lam.cpu().numpy(),
                "Lam": problem.to_user(state.Lam), "v": state.v.cpu().numpy(), "U": problem.to_user(state.U)}
    return rec.result(solution, device=str(problem.device), **totals), state


# -- measures (outside the solver's time) -------------------------------------------
def primal_objective(problem: TorchSMMProblem, W: torch.Tensor, b: float, Xw: torch.Tensor | None = None) -> float:
    """Objective of model (1), as `problem.primal_objective`."""
    margins = problem.margins(W, b) if Xw is None else Xw + b
    hinge = torch.clamp(1.0 - problem.y * margins, min=0.0).sum()
    return float(0.5 * torch.sum(W * W) + problem.tau * torch.linalg.svdvals(W).sum() + problem.C * hinge)


def measures(problem: TorchSMMProblem, state: TorchALMState, obj_opt: float | None) -> dict:
    """Objective, dual objective −½‖A*λ + Λ‖² − Σλ_i of (D), relative gap (and Relobj (47))."""
    pobj = primal_objective(problem, state.W, state.b, state.Xw)
    R = X_adjoint(problem.X, problem.y * state.lam).view(problem.shape) + state.Lam
    dobj = float(-0.5 * torch.sum(R * R) - state.lam.sum())
    row = {"objective": pobj, "dual_objective": dobj, "relgap": relative_gap(pobj, dobj)}
    if obj_opt is not None:
        row["relobj"] = relobj(pobj, obj_opt)
    return row


def kkt_residuals(problem: TorchSMMProblem, W, b, v, U, lam, Lam) -> dict[str, float]:
    """The six relative residuals of (46) and η_kkt on the device, as `problem.kkt_residuals`."""
    C, tau = problem.C, problem.tau
    Alam = X_adjoint(problem.X, problem.y * lam).view(problem.shape)
    nW, nU, nLam, nlam = norm(W), norm(U), norm(Lam), norm(lam)
    root = 1.0 + math.sqrt(problem.n)
    ball = TorchSpectralPoint.of(U + Lam, tau).ball_projection()
    eta = {
        "eta_W": norm(W + Alam + Lam) / (1.0 + nW + norm(Alam) + nLam),
        "eta_b": abs(float(torch.dot(lam, problem.y))) / root,
        "eta_v": norm(lam + (v - lam).clamp(0.0, C)) / (1.0 + nlam + norm(v)),
        "eta_U": norm(Lam - ball) / (1.0 + nLam + nU),
        "eta_lambda": norm(problem.y * (X_times(problem.X, W) + b) + v - 1.0) / root,
        "eta_Lambda": norm(W - U) / (1.0 + nW + nU),
    }
    eta["kkt"] = max(eta.values())
    return eta


def run_torch_alm_sncg(problem, *, device: str, tol: float, max_iter: int, time_limit=None, callback=None,
                       sigma0: float | None = None, start_rows: int = 1000, max_newton: int = 200,
                       obj_opt: float | None = None):
    """ALM-SNCG of `METHODS` on a torch device: ``problem`` is an `SMMProblem` (its samples are copied to the device
    once, in their dtype) or a `TorchSMMProblem` already there."""
    if not isinstance(problem, TorchSMMProblem):
        problem = TorchSMMProblem.of(problem, torch_device(device))
    return torch_alm_solve(problem, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                           sigma0=sigma0, start_rows=start_rows, max_newton=max_newton, obj_opt=obj_opt)[0]

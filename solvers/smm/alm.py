"""Algorithm 1: the inexact augmented Lagrangian method on (P), subproblems by SNCG (Algorithm 2).

Each outer step k minimises φ_k (10) over (W, b) by `newton.sncg`, then recovers (9)
v = (ω − Π_S ω)/σ, U = Prox_{τ‖·‖_*}(X_σ(W))/σ and the multipliers (Moreau, as in (39))
λ^{k+1} = −Π_S(ω), Λ^{k+1} = Π_B(X_σ(W)). By construction λ ∈ −S and ‖Λ‖₂ ≤ τ, and the
residuals η_v and η_U of (46) vanish identically (Π_S(v − λ) = −λ and Π_B(U + Λ) = Λ follow
from the recovery formulas), so only η_W, η_b, η_λ, η_Λ have to be driven down.

Inexactness (our documented stand-in for rules (A)/(B), §2.3 of the digest): the subproblem
stops when max(η_W, η_b) at its candidate point is at most
max(0.2·ε, min(0.1, 0.2·pinf_{k−1}, 0.1·k^{−1.2})), pinf = max(η_λ, η_Λ): summable in k, never
finer than the current primal infeasibility warrants, and fine enough that η_kkt ≤ ε is
reachable. σ grows ×1.2 every second step up to σ_∞ = 1e6 (the authors' schedule), and ×3 (×2 when
that would carry σ across C, `fast_sigma`) after a step that failed to halve the primal infeasibility
max(η_λ, η_Λ): without that safeguard the
schedule needs ~60 steps on unscaled data such as digits (pixels 0–16) where σ₀ = min(100C, 3000)
is far too small. σ stays put while the primal infeasibility is below ε or below the dual residual
max(η_W, η_b): then the subproblem, not σ, is the bottleneck, and growing σ only made it harder
(on 1e4×100×100 at ε = 1e-8 σ ran to 1e6 and η_kkt rose from 1e-7 to 2e-2 before this rule).
From the origin σ₀ defaults to 20/mean‖X_i‖² (`start_sigma0`): at W = 0 every ω_j equals σ₀, so a σ₀ far
below C puts all n samples in J1 for the first Newton systems, and one far above it makes the kinks of φ
so narrow that Armijo cuts the steps (both measured, docs/benchmarks/smm.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import HistoryRecorder, Param
from .newton import CappedRows, GramCache, Point, Subproblem, sncg
from .problem import SMMProblem, dual_objective, primal_objective, relative_gap, relobj

SIGMA_MAX = 1e6
SIGMA_SCALE, SIGMA_EVERY = 1.2, 2
SLOW_PROGRESS, SIGMA_FAST = 0.5, 3.0
SIGMA_CROSSING = 2.0  # the factor instead of SIGMA_FAST when that jump would carry σ across C (see fast_sigma)


@dataclass
class ALMState:
    """Primal (W, b) and multipliers (λ, Λ) carried between ALM steps (and warm starts)."""

    W: np.ndarray
    b: float
    lam: np.ndarray
    Lam: np.ndarray | None
    sigma: float
    Xw: np.ndarray | None = None  # X vec(W), carried so a new ALM step needs no pass over X

    @classmethod
    def zeros(cls, n: int, shape: tuple[int, int], sigma: float, nuclear: bool = True) -> "ALMState":
        return cls(np.zeros(shape), 0.0, np.zeros(n), np.zeros(shape) if nuclear else None, sigma)


SIGMA0_CURVATURE = 20.0  # σ₀·mean‖X_i‖² from the origin (measured, see start_sigma0)
SIGMA0_SAMPLE_ROWS = 1000


def start_sigma0(X: np.ndarray) -> float:
    """σ₀ from the origin: 20 / mean_i ‖X_i‖_F² (on at most 1000 evenly spaced rows), so that σ·A*A is on
    the data's scale. Measured: on 1e4×50×50 synthetic data (‖X_i‖² ≈ 0.2)
    σ₀ = 100 took 1.2 s CPU to ε = 1e-4 against 3.1 s at σ₀ = 1, 5.5 s at the authors' min(100C, 3000) = 1000
    (C = 10); on 3000×30×30 and digits it was 1.0–1.3× faster than σ₀ = 1 and never slower."""
    rows = X[:: max(1, X.shape[0] // SIGMA0_SAMPLE_ROWS)]
    return sigma0_of_mean_square(float(np.mean(np.einsum("ij,ij->i", rows, rows, dtype=float))))


def sigma0_of_mean_square(mean_sq: float) -> float:
    """σ₀ = 20 / mean‖X_i‖² (`start_sigma0`), 1 for all-zero samples."""
    return SIGMA0_CURVATURE / mean_sq if mean_sq > 0 else 1.0


START_TOL = 1e-2  # η_kkt of the subsample solve: a start, not a solution (1e-3 measured no better)
START_MIN_RATIO = 4  # the subsample start only when n ≥ 4·start_rows: below that it saves too little


def subsample_start(problem: SMMProblem, rows: int, sigma0: float) -> ALMState | None:
    """Our start (not the paper's, whose Tables 4–5 use isPADMM steps): ALM-SNCG on ``rows`` seeded random
    samples at the same C and τ to η_kkt ≤ 1e-2, then (W, b, Λ) handed to Algorithm 1 with λ⁰ = 0 — any
    (W^{0}, b^{0}) and z⁰ = (λ⁰, Λ⁰) ∈ −S × B_2^τ are admissible starts of Algorithms 1–2. From the origin
    every ω_j equals σ₀, so when σ₀ < C all n samples are in J1 (37) and the first subproblem's Newton systems
    run CG on the whole X (62 % of the time at C = 100, measured); from the subsample's
    (W, b) most samples are already beyond the margin (ω_j < 0). None when the subsample holds one class."""
    small = problem.subset(subsample_rows(problem.n, rows))
    if np.unique(small.y).size < 2:
        return None
    _, state = alm_solve(small, tol=START_TOL, max_iter=200, sigma0=sigma0, start_rows=0)
    return ALMState(state.W, state.b, np.zeros(problem.n), state.Lam, sigma0, X_times(problem.X, state.W))


def subsample_rows(n: int, rows: int) -> np.ndarray:
    """The seeded random sample rows of `subsample_start`, in increasing order."""
    return np.sort(np.random.default_rng(0).choice(n, rows, replace=False))


def default_sigma0(n: int, pq: int, C: float) -> float:
    """σ₀ = min(100·C, 3000) when n ≥ pq, else 100 (the authors' path-run rule)."""
    return min(100.0 * C, 3000.0) if n >= pq else 100.0


@dataclass
class SampleCache:
    """What Algorithm 1 keeps of the samples (X, y) across its steps: ‖X_j‖_F for the Newton steps' epochs
    (newton.Epoch), X_J X_Jᵀ (J1 changes by a few rows) and the sum of the samples at the bound (the set moves by
    a few rows). A caller that runs Algorithm 1 once per step of its own on the same samples (isPADMM's (W, b)
    step, F-ADMM's box-QP) keeps one: the row norms and a new sum at the bound are a pass over X each."""

    row_norms: np.ndarray | None
    gram: GramCache
    capped_rows: CappedRows

    @classmethod
    def of(cls, X: np.ndarray) -> "SampleCache":
        # no epochs on float32 samples: the epoch's sums of certified capped rows are float32 products, and their
        # rounding in φ stalled SNCG at η_kkt ≈ 2e-6 (docs/benchmarks/smm.md, Table 4 notes)
        row_norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=float)) if X.dtype == np.float64 else None
        return cls(row_norms, GramCache(), CappedRows())


def alm_steps(X, y, shape, C, tau, state: ALMState, *, tol: float, center=None, b_center=0.0,
              b_weight=0.0, max_newton: int = 200, sigma_max: float = SIGMA_MAX,
              samples: SampleCache | None = None):
    """Run Algorithm 1 forever, updating ``state`` in place; yield (k, point, stats, residuals).

    ``tau = 0`` drops the U/Λ block (isPADMM's subproblem (D.2) with centre B, a and weight δ').
    ``samples``: a `SampleCache` of X kept by the caller (a new one when not given).
    The caller stops the generator.
    """
    n = X.shape[0]
    root_n = 1.0 + np.sqrt(n)
    center_norm = 0.0 if center is None else float(np.linalg.norm(center))
    pinf = 1.0
    samples = SampleCache.of(X) if samples is None else samples
    for k in range(1, 10**9):
        sub = Subproblem(X, y, shape, C, tau, state.sigma, state.lam, state.Lam, center, b_center, b_weight,
                         samples.row_norms, samples.capped_rows)
        tol_sub = subproblem_tol(tol, pinf, k)

        def scale_W(pt: Point) -> float:
            lam_norm = 0.0 if pt.ball is None else float(np.linalg.norm(pt.ball))
            return 1.0 + float(np.linalg.norm(pt.W)) + pt.A_adj_norm + lam_norm + center_norm

        def stop(pt: Point) -> bool:
            return max(float(np.linalg.norm(pt.gW)) / scale_W(pt), abs(pt.gb) / root_n) <= tol_sub

        Xw = state.Xw if state.Xw is not None else X_times(X, state.W)
        pt, stats = sncg(sub, state.W, state.b, Xw, stop, max_newton=max_newton, gram=samples.gram)
        sigma = state.sigma
        v = (pt.omega - pt.p_omega) / sigma  # (9)
        state.W, state.b, state.lam, state.Xw = pt.W, pt.b, -pt.p_omega, pt.Xw  # multipliers: Moreau form (39)
        res = {
            "eta_W": float(np.linalg.norm(pt.gW)) / scale_W(pt),
            "eta_b": abs(pt.gb) / root_n,
            "eta_v": float(np.linalg.norm(state.lam + np.clip(v - state.lam, 0.0, C)))
            / (1.0 + float(np.linalg.norm(state.lam)) + float(np.linalg.norm(v))),
            "eta_U": 0.0,
            "eta_lambda": float(np.linalg.norm(y * (pt.Xw + pt.b) + v - 1.0)) / root_n,
            "eta_Lambda": 0.0,
        }
        U = None
        if pt.spec is not None:
            U = pt.spec.nuclear_prox() / sigma
            state.Lam = pt.ball
            res["eta_Lambda"] = float(np.linalg.norm(pt.W - U)) / (
                1.0 + float(np.linalg.norm(pt.W)) + float(np.linalg.norm(U)))
        res["kkt"] = max(res.values())
        pinf_prev, pinf = pinf, max(res["eta_lambda"], res["eta_Lambda"])
        yield k, pt, stats, res, v, U
        state.sigma = next_sigma(state.sigma, C, k, res, pinf, pinf_prev, tol, sigma_max)


def subproblem_tol(tol: float, pinf: float, k: int) -> float:
    """The bound on max(η_W, η_b) that ends subproblem k (our stand-in for rules (A)/(B), module docstring)."""
    return max(0.2 * tol, min(0.1, 0.2 * pinf, 0.1 * k**-1.2))


def next_sigma(sigma: float, C: float, k: int, res: dict, pinf: float, pinf_prev: float, tol: float,
               sigma_max: float) -> float:
    """σ_{k+1} of Algorithm 1's Step 3 after step k with residuals ``res`` and primal infeasibility ``pinf``."""
    if pinf <= max(tol, res["eta_W"], res["eta_b"]):  # primal side not the bottleneck: a larger σ
        return sigma  # would only make the subproblem harder (measured: σ → 1e6 and η_b up to 2e-2 at n = 1e4)
    if pinf > SLOW_PROGRESS * pinf_prev:  # primal infeasibility stalls: σ too small for this scaling
        return min(fast_sigma(sigma, C), sigma_max)
    if k % SIGMA_EVERY == 0:
        return min(SIGMA_SCALE * sigma, sigma_max)
    return sigma


def fast_sigma(sigma: float, C: float) -> float:
    """σ after a step that did not halve the primal infeasibility: ×SIGMA_FAST, but ×SIGMA_CROSSING when
    σ < C < SIGMA_FAST·σ. J1 = {0 < ω_j < C} (37) is a window of width C/σ in the residuals 1 − y_j f(X_j);
    a ×3 jump across σ ≈ C turned a wide window into a narrow one in one step and cost one subproblem 27
    Newton steps at τ = 10, C = 100 (docs/benchmarks/smm.md, Table 4 notes). Any nondecreasing σ_k keeps
    Algorithm 1 convergent (its Step 3 asks only σ_{k+1} ↑ σ_∞ ≤ ∞; Theorem 3.1), so the factor is a speed
    choice, measured there."""
    if sigma < C < SIGMA_FAST * sigma:
        return SIGMA_CROSSING * sigma
    return SIGMA_FAST * sigma


def X_times(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    return np.asarray(X @ W.ravel().astype(X.dtype, copy=False), float)


ALM_PARAMS = (
    Param("sigma0", None, float, low=0, low_strict=True, log=True,
          help="initial penalty σ₀; empty: 20 / mean‖X_i‖² (the data's scale; the authors' path rule "
               "min(100·C, 3000) was up to 4× slower from the origin)", symbol=r"\sigma_0", ui_range=(1e-2, 1e4)),
    Param("warm_start", 0, int, low=0, high=100,
          help="isPADMM iterations that start ALM-SNCG (the paper's Tables 4–5: up to 4 on synthetic data, 10 on "
               "real data; 0 starts from the origin); their time counts as ALM-SNCG's"),
    Param("start_rows", 1000, int, low=0, high=1_000_000,
          help="start from ALM-SNCG on this many random samples (to η_kkt ≤ 1e-2) when n ≥ 4× this and "
               "warm_start is 0; our start, not the paper's; 0 starts from the origin; its time counts as ALM-SNCG's"),
    Param("max_newton", 200, int, low=1, high=10_000, help="SNCG iterations per ALM subproblem"),
    Param("obj_opt", None, float, help="reference optimum: when given, stop at Relobj (47) ≤ tol (Tables 3–5)"),
    Param("device", "cpu", str, choices=("cpu", "torch-cpu", "cuda", "auto"),
          help="cpu: numpy (the tested default); cuda: torch on the GPU (solvers/smm/torch_alm.py: CG only); "
               "torch-cpu: the same torch code on the CPU; auto: cuda when torch sees a GPU, else torch-cpu"),
)


def alm_solve(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              sigma0: float | None = None, start=None, start_rows: int = 0, max_newton: int = 200,
              obj_opt: float | None = None, state: ALMState | None = None):
    """ALM-SNCG from ``state`` (a path's warm start), from ``start(problem, sigma=σ₀) -> ALMState`` (the paper's
    isPADMM steps, passed in by `alm_sncg.run_alm_sncg`: isPADMM runs this module's ALM, so this module does not
    import it), from a subsample's solution (``start_rows``, see `subsample_start`) or from the origin; the
    start's seconds are part of the first row's time. Returns (Result, final state)."""
    n, (p, q) = problem.n, problem.shape
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    if state is None:
        sigma0 = start_sigma0(problem.X) if sigma0 is None else sigma0
        if start is not None:
            state = start(problem, sigma=sigma0)
        elif start_rows and n >= START_MIN_RATIO * start_rows:
            state = subsample_start(problem, start_rows, sigma0)
        if state is None:
            state = ALMState.zeros(n, (p, q), sigma0)
    totals = {"newton": 0, "cg": 0, "direct_solves": 0}
    v = U = None
    for k, pt, stats, res, v, U in alm_steps(problem.X, problem.y, (p, q), problem.C, problem.tau, state,
                                             tol=tol, max_newton=max_newton):
        totals["newton"] += stats.newton
        totals["cg"] += stats.cg
        totals["direct_solves"] += stats.direct
        with rec.excluded():
            row = measures(problem, state.W, state.b, state.lam, state.Lam, obj_opt, Xw=state.Xw)
            row.update(res, sigma=state.sigma, newton_iters=stats.newton, cg_iters=stats.cg,
                       j1=stats.j1, alpha=stats.alpha, rank=pt.spec.rank_alpha,
                       min_step=min(stats.steps) if stats.steps else 1.0)
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(state.W), "b": state.b, "lam": state.lam.copy(),
                "Lam": problem.to_user(state.Lam), "v": v, "U": problem.to_user(U)}
    return rec.result(solution, **totals), state


def measures(problem: SMMProblem, W, b, lam, Lam, obj_opt, Xw=None, Alam=None) -> dict:
    """Objective, dual objective, relative gap (and Relobj) for a history row (``Xw`` = X vec(W) and
    ``Alam`` = A*λ where the caller has them)."""
    pobj = primal_objective(problem, W, b, Xw)
    dobj = dual_objective(problem, lam, Lam if Lam is not None else np.zeros(problem.shape), Alam)
    row = {"objective": pobj, "dual_objective": dobj, "relgap": relative_gap(pobj, dobj)}
    if obj_opt is not None:
        row["relobj"] = relobj(pobj, obj_opt)
    return row

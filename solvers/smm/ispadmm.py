"""isPADMM (Appendix D, Algorithm 4): inexact semi-proximal ADMM on (D.1) with blocks (W, b) and U.

    1. (W, b) ≈ argmin ½‖W − B‖² + (δ'/2)(b − b^k)² + C' Σ hinge          (D.2, divided by 1 + γ)
       with B = (γU^k − Λ^k)/(1 + γ), C' = C/(1 + γ), δ' = δ/(1 + γ),
       solved by ALM-SNCG with τ = 0 (no U/Λ block, G absent);
    2. U^{k+1} = Prox_{τ‖·‖_*}(γW^{k+1} + Λ^k)/γ  (SVT);
    3. Λ^{k+1} = Λ^k + ζγ(W^{k+1} − U^{k+1}).

The SMM multiplier of the hinge constraint is λ = (1 + γ)λ' with λ' the inner ALM's multiplier
(undoing the division by 1 + γ), so (46) is evaluated on (W, b, v, U, λ, Λ).
γ is adapted every ``gamma_every`` steps by the balance of primal and dual infeasibility
(the authors' rule, [code] in the digest).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import HistoryRecorder, Param, singular_value_threshold
from .alm import ALMState, SampleCache, alm_steps, measures
from .problem import SMMProblem, kkt_residuals, project_spectral_ball

INNER_SIGMA0, INNER_SIGMA_MAX = 1.0, 5e3  # inner ALM penalty: start (as ALM-SNCG) and cap (authors)
GAMMA_STEPS = ((50.0, 1.8), (500.0, 1.9), (np.inf, 2.5))  # (ratio bound, factor)

ISPADMM_PARAMS = (
    Param("gamma0", 1.0, float, low=0, low_strict=True, log=True, help="initial ADMM penalty γ",
          symbol=r"\gamma_0", ui_range=(1e-2, 1e2)),
    Param("zeta", 1.618, float, low=0, low_strict=True, high=(1 + 5**0.5) / 2, high_strict=True,
          help="dual step length ζ ∈ (0, (1+√5)/2)", symbol=r"\zeta"),
    Param("delta_b", 1e-6, float, low=0, low_strict=True, log=True, help="proximal weight δ on b",
          symbol=r"\delta", ui_range=(1e-8, 1.0)),
    Param("gamma_every", 100, int, low=1, high=10_000, help="adapt γ every this many iterations"),
    Param("obj_opt", None, float, help="reference optimum: when given, stop at Relobj (47) ≤ tol (Tables 3–5)"),
)


def adapt_penalty(gamma: float, pinf: float, dinf: float, mu: float = 2.0, floor: float = 1e-8) -> float:
    """γ ← γ·s when primal infeasibility dominates, γ/s when dual does (s by the imbalance)."""
    ratio = pinf / max(dinf, 1e-300)
    imbalance = max(ratio, 1.0 / max(ratio, 1e-300))
    s = next(f for bound, f in GAMMA_STEPS if imbalance <= bound)
    if ratio > mu:
        gamma *= s
    elif ratio < 1.0 / mu:
        gamma /= s
    return float(min(max(gamma, floor), 1e6))


@dataclass
class ADMMIterate:
    """One isPADMM iterate: primal (W, b, v, U), SMM multipliers (λ, Λ), penalty γ and the inner ALM count;
    ``Xw`` = X vec(W), from the inner ALM."""

    W: np.ndarray
    b: float
    v: np.ndarray | None
    U: np.ndarray
    lam: np.ndarray
    Lam: np.ndarray
    gamma: float
    rank: int
    inner_iters: int
    Xw: np.ndarray


def ispadmm_steps(problem: SMMProblem, *, tol: float, gamma0: float = 1.0, zeta: float = 1.618,
                  delta_b: float = 1e-6, totals: dict | None = None):
    """Algorithm 4 from the origin, forever: yields an `ADMMIterate` after each step. The caller stops the
    generator, and may adapt γ by setting ``iterate.gamma`` before asking for the next step."""
    n, (p, q), C, tau = problem.n, problem.shape, problem.C, problem.tau
    X, y = problem.X, problem.y
    totals = {} if totals is None else totals
    gamma = gamma0
    W, b = np.zeros((p, q)), 0.0
    U, Lam = np.zeros((p, q)), np.zeros((p, q))
    inner = ALMState(W, b, np.zeros(n), None, INNER_SIGMA0)
    samples = SampleCache.of(X)  # every step's inner ALM shares the row norms, Gram cache and sum at the bound
    pinf = 1.0
    for k in range(1, 10**9):
        scale = 1.0 + gamma
        C_in = C / scale
        inner.W, inner.b = W, b
        inner.lam = np.clip(inner.lam, -C_in, 0.0)
        inner.sigma = min(inner.sigma, INNER_SIGMA_MAX)
        inner_tol = 0.1 if k == 1 else max(min(pinf / 100.0, 1.0 / k**2), tol / 100.0)
        center = (gamma * U - Lam) / scale
        for j, pt, stats, res, v, _ in alm_steps(X, y, (p, q), C_in, 0.0, inner, tol=inner_tol, center=center,
                                                 b_center=b, b_weight=delta_b / scale, samples=samples):
            totals["newton"] = totals.get("newton", 0) + stats.newton
            totals["cg"] = totals.get("cg", 0) + stats.cg
            if res["kkt"] <= inner_tol or j >= 100:
                break
        totals["inner_alm"] = totals.get("inner_alm", 0) + j
        W, b = inner.W, inner.b
        U, rank = singular_value_threshold(gamma * W + Lam, tau)  # step 2
        U /= gamma
        Lam = Lam + zeta * gamma * (W - U)  # step 3
        iterate = ADMMIterate(W, b, v, U, scale * inner.lam, Lam, gamma, rank, j, inner.Xw)
        yield iterate
        pinf = float(np.linalg.norm(W - U)) / (1.0 + float(np.linalg.norm(W)) + float(np.linalg.norm(U)))
        gamma = iterate.gamma  # the caller may have adapted it


def warm_start_state(problem: SMMProblem, iterations: int, sigma: float) -> ALMState:
    """The paper's start for ALM-SNCG in Tables 4–5 (Sec. 6.1): a few isPADMM steps from the origin
    (at most 4 on synthetic data, 10 on real data), then (W, b, λ, Λ) handed to Algorithm 1 with λ clipped
    to −S = [−C, 0]^n and Λ projected onto the spectral ball B_2^τ, where the ALM multipliers live."""
    for k, it in zip(range(iterations), ispadmm_steps(problem, tol=1e-4)):
        pass
    lam = np.clip(it.lam, -problem.C, 0.0)
    Lam = project_spectral_ball(it.Lam, problem.tau)
    return ALMState(it.W.copy(), float(it.b), lam, Lam, sigma, it.Xw.copy())


def run_ispadmm(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
                gamma0: float = 1.0, zeta: float = 1.618, delta_b: float = 1e-6, gamma_every: int = 100,
                obj_opt: float | None = None):
    tau = problem.tau
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    totals = {"inner_alm": 0, "newton": 0, "cg": 0}
    steps = ispadmm_steps(problem, tol=tol, gamma0=gamma0, zeta=zeta, delta_b=delta_b, totals=totals)
    for k, it in zip(range(1, max_iter + 1), steps):
        with rec.excluded():
            Alam = problem.A_adj(it.lam)  # one pass over the samples for both, and X vec(W) from the step
            row = measures(problem, it.W, it.b, it.lam, project_spectral_ball(it.Lam, tau), obj_opt, it.Xw, Alam)
            eta = kkt_residuals(problem, it.W, it.b, it.v, it.U, it.lam, it.Lam, it.Xw, Alam)
            row.update(eta, gamma=it.gamma, inner_iters=it.inner_iters, rank=it.rank)
        if k % gamma_every == 0:
            dinf = float(np.linalg.norm(it.Lam - project_spectral_ball(it.Lam, tau))) / (
                1.0 + float(np.linalg.norm(it.Lam)))
            it.gamma = adapt_penalty(it.gamma, eta["eta_Lambda"], max(dinf, eta["eta_W"]))
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(it.W), "b": it.b, "lam": it.lam, "Lam": problem.to_user(it.Lam), "v": it.v,
                "U": problem.to_user(it.U)}
    return rec.result(solution, **totals)

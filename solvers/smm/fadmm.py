"""F-ADMM: the SMM solver of Luo, Xie, Zhang & Li (ICML 2015) — ADMM on S − W = 0 with
H(W, b) = ½‖W‖² + C·hinge and G(S) = τ‖S‖_*, accelerated with restart (Goldstein et al. 2014).
The seed paper only cites it; the steps follow the digest (§5.3):

    (W, b) = argmin ½‖W‖² + C Σ hinge + (ρ/2)‖W − ŝ‖² − ⟨λ̂, W⟩,  whose dual is the n×n box-QP
             α = argmin ½αᵀKα − fᵀα  s.t. yᵀα = 0, 0 ≤ α ≤ C,  K_ij = y_i y_j ⟨X_i, X_j⟩/(ρ + 1),
             f = e − y∘X(λ̂ + ρŝ)/(ρ + 1),  W = (λ̂ + ρŝ + Σ α_i y_i X_i)/(ρ + 1)
    S = Prox_{τ‖·‖_*}(ρW − λ̂)/ρ,  λ = λ̂ − ρ(W − S),  c_k = ‖λ − λ̂‖²/ρ + ρ‖S − ŝ‖²
    c_k < η c_{k−1}: Nesterov extrapolation of (S, λ); else restart from the previous iterate.

The box-QP (LIBQP's GSMO on the dense n×n K in the original: F-ADMM's memory wall and the paper's "−"
entries for n ≥ 1e5) is solved here through its primal, ½‖W − c‖² + C/(ρ+1)·Σ hinge with
c = (λ̂ + ρŝ)/(ρ + 1), by the semismooth Newton ALM with τ = 0 that isPADMM also uses: a Newton method
on the box-QP's augmented Lagrangian that touches K only through X and the active set J1 (the low-rank
form, O(n·pq) memory), warm-started across ADMM steps (W, b and the multipliers α carry over), to a
tolerance that tightens with the ADMM's primal residual. α = (ρ + 1)·(−λ') for the inner multiplier λ',
and b is the inner problem's own intercept. This makes our F-ADMM much cheaper per step than the
paper's (see docs/benchmarks/smm.md). SMM multipliers: λ_SMM = −α, Λ_SMM = −λ.
"""
from __future__ import annotations

import numpy as np

from ..core import HistoryRecorder, Param, fista_momentum, singular_value_threshold
from .alm import ALMState, SampleCache, alm_steps, measures
from .problem import SMMProblem, kkt_residuals, project_spectral_ball

INNER_SIGMA0, INNER_SIGMA_MAX = 1.0, 5e3  # the box-QP's ALM penalty: start and cap (as isPADMM's inner solver)
INNER_MAX_STEPS = 100  # ALM steps per box-QP at most

FADMM_PARAMS = (
    Param("rho", 10.0, float, low=0, low_strict=True, log=True, help="ADMM penalty ρ", symbol=r"\rho",
          ui_range=(0.1, 1000.0)),
    Param("eta", 0.999, float, low=0, low_strict=True, high=1, high_strict=True,
          help="restart threshold η (restart when c_k ≥ η c_{k−1})", symbol=r"\eta"),
    Param("obj_opt", None, float, help="reference optimum: when given, stop at Relobj (47) ≤ tol (Tables 3–5)"),
)


def solve_box_qp(problem: SMMProblem, center: np.ndarray, rho: float, inner: ALMState, tol: float,
                 totals: dict, samples: SampleCache) -> np.ndarray:
    """α of the dual box-QP at ``center`` = (λ̂ + ρŝ)/(ρ + 1), from the warm start ``inner`` (updated in place:
    it holds W, b and the scaled multipliers of the primal form); ``totals`` counts Newton and CG steps;
    ``samples`` is the run's `SampleCache` of X.
    Returns α ∈ [0, C]^n."""
    C_in = problem.C / (rho + 1.0)
    inner.lam = np.clip(inner.lam, -C_in, 0.0)
    inner.sigma = min(inner.sigma, INNER_SIGMA_MAX)
    for j, pt, stats, res, v, _ in alm_steps(problem.X, problem.y, problem.shape, C_in, 0.0, inner, tol=tol,
                                             center=center, samples=samples):
        totals["newton"] += stats.newton
        totals["cg"] += stats.cg
        if res["kkt"] <= tol or j >= INNER_MAX_STEPS:
            break
    return (rho + 1.0) * -inner.lam


def run_fadmm(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              rho: float = 10.0, eta: float = 0.999, obj_opt: float | None = None):
    n, (p, q), tau = problem.n, problem.shape, problem.tau
    y = problem.y
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                          measure="kkt" if obj_opt is None else "relobj")
    S = S_prev = S_hat = np.zeros((p, q))
    lam = lam_prev = lam_hat = np.zeros((p, q))
    t, c_prev, restarts = 1.0, np.inf, 0
    totals = {"newton": 0, "cg": 0}
    inner = ALMState(np.zeros((p, q)), 0.0, np.zeros(n), None, INNER_SIGMA0)
    samples = SampleCache.of(problem.X)
    pinf = 1.0
    for k in range(1, max_iter + 1):
        inner_tol = 0.1 if k == 1 else max(min(pinf / 100.0, 1.0 / k**2), tol / 100.0)  # as isPADMM's (D.2)
        alpha = solve_box_qp(problem, (lam_hat + rho * S_hat) / (rho + 1.0), rho, inner, inner_tol, totals, samples)
        W, b, fw = inner.W, inner.b, inner.Xw
        S, rank = singular_value_threshold(rho * W - lam_hat, tau)
        S /= rho
        lam = lam_hat - rho * (W - S)
        c = float(np.vdot(lam - lam_hat, lam - lam_hat)) / rho + rho * float(np.vdot(S - S_hat, S - S_hat))
        if c < eta * c_prev:
            beta, t_next = fista_momentum(t)
            S_hat, lam_hat = S + beta * (S - S_prev), lam + beta * (lam - lam_prev)
            c_prev = c
        else:  # restart
            t_next, restarts = 1.0, restarts + 1
            S_hat, lam_hat = S_prev, lam_prev
            c_prev = c_prev / eta
        t, S_prev, lam_prev = t_next, S, lam
        pinf = float(np.linalg.norm(W - S)) / (1.0 + float(np.linalg.norm(W)) + float(np.linalg.norm(S)))
        with rec.excluded():
            v = 1.0 - y * (fw + b)
            row = measures(problem, W, b, -alpha, project_spectral_ball(-lam, tau), obj_opt)
            row.update(kkt_residuals(problem, W, b, v, S, -alpha, -lam), rank=rank, restarts=restarts)
        if rec.record(k, **row):
            break
    solution = {"W": problem.to_user(W), "b": b, "lam": -alpha, "Lam": problem.to_user(-lam), "v": v,
                "U": problem.to_user(S)}
    return rec.result(solution, restarts=restarts, **totals)

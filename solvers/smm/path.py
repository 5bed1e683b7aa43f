"""Solution paths over C_1 < … < C_N: AS+ALM (Algorithm 3, adaptive sieving over samples) and
Warm+ALM (warm-started ALM-SNCG on all n samples), as compared in Tables 6–7.

AS at grid point C_i starts from the index set I*(C_{i−1}) = {j : y_j f(X_j) ≤ 1 + ε̂} and repeats:
  Step 1  solve the reduced SMM (42) on I by ALM-SNCG to η_kkt ≤ ε (warm start, Remark 1(c));
  Step 2  violators J = {j ∉ I : v_j = 1 − y_j f(X_j) ≥ 0} (44);
  Step 3  J = ∅: accept (λ_j = 0 off I); else add the ≤ d_max violators with the largest v_j.
The first grid point is solved on the full data (it plays C_0, as in the authors' code), and the
averages the paper reports are over points 2..N. Every row also carries the full-data η_kkt of
the extended AS solution (45), evaluated directly rather than by the code's rescaling.

σ₀ is reset at every grid point by min(100·C_i, 3000) if n ≥ pq else 100 (§4 of the digest).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import InputError, Param, now
from .alm import ALMState, alm_solve, default_sigma0
from .problem import SMMProblem, kkt_residuals, primal_objective

SM_MARGIN_TOL = 1e-3  # geometric support-matrix count: y_j f(X_j) < 1 + 1e-3 (tables' threshold)
VIOLATION_TOL = 1e-12  # Step 2: v_j > −1e-12 counts as a violation (authors' code)

PATH_PARAMS = (
    Param("eps_hat", 0.05, float, low=0, high=10,
          help="ε̂ enlarging I*(C) = {y f ≤ 1 + ε̂}; paper: 0.05 (random, n < 5e5), 0.1 (larger), 0.4 (real)",
          symbol=r"\hat\varepsilon"),
    Param("d_max", 500, int, low=1, high=10**7, help="violators added per AS round", symbol=r"d_{\max}"),
    Param("max_rounds", 20, int, low=1, high=1000, help="AS rounds per grid point"),
)


@dataclass
class PathResult:
    method: str
    table: pd.DataFrame  # one row per C
    solutions: list = field(default_factory=list)  # (W, b) per C, in the working orientation
    status: str = "completed"


def margin_width(W: np.ndarray) -> float:
    """2/‖W‖_F, the width of the margin; ∞ for W = 0 (small C: every sample on one side of b), never 2e300."""
    norm = float(np.linalg.norm(W))
    return 2.0 / norm if norm > 0 else float("inf")


def _support_count(problem: SMMProblem, margins: np.ndarray) -> int:
    return int(np.count_nonzero(problem.y * margins < 1.0 + SM_MARGIN_TOL))


def _accuracy(W_user: np.ndarray, b: float, X_test: np.ndarray | None, y_test: np.ndarray | None) -> float:
    if X_test is None or len(X_test) == 0:
        return float("nan")
    f = np.einsum("ipq,pq->i", X_test, W_user, optimize=True) + b
    return float(np.mean(np.where(f >= 0, 1.0, -1.0) == y_test))


def _restrict(state: ALMState, rows: np.ndarray, C: float, sigma: float) -> ALMState:
    return ALMState(state.W, state.b, np.clip(state.lam[rows], -C, 0.0), state.Lam, sigma)


def check_grid(Cs, method: str) -> np.ndarray:
    """The C grid as a float array, refused (InputError) unless positive, finite and strictly increasing."""
    Cs = np.asarray(Cs, dtype=float).ravel()
    if method not in ("as", "warm"):
        raise InputError(f"unknown path method {method!r}; choose 'as' or 'warm'")
    if Cs.size == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
        raise InputError("the C grid must hold positive finite values")
    if np.any(np.diff(Cs) <= 0):
        raise InputError("the C grid must be strictly increasing (C_1 < … < C_N)")
    return Cs


def solve_path(problem: SMMProblem, Cs, *, method: str = "as", tol: float = 1e-6, max_iter: int = 500,
               eps_hat: float = 0.05, d_max: int = 500, max_rounds: int = 20, X_test=None, y_test=None,
               callback=None, time_limit: float | None = None) -> PathResult:
    """Solve model (1) at every C of an increasing grid by AS+ALM (``"as"``) or Warm+ALM (``"warm"``).

    ``y_test`` uses ±1 labels; ``callback(row)`` returning False stops the path.
    """
    Cs = check_grid(Cs, method)
    n, pq = problem.n, problem.pq
    full = problem
    rows, solutions = [], []
    state = ALMState.zeros(n, problem.shape, default_sigma0(n, pq, Cs[0]))
    keep = np.arange(n)
    cumulative = 0.0
    status = "completed"
    for i, C in enumerate(Cs):
        full = problem.with_C(C)
        t0 = now()
        rounds, alm_iters, newton, sm_fracs, sizes, j1s = 0, 0, 0, [], [], []
        if method == "warm" or i == 0:
            state.sigma = default_sigma0(n, pq, C)
            state.lam = np.clip(state.lam, -C, 0.0)
            res, state = alm_solve(full, tol=tol, max_iter=max_iter, state=state)
            rounds, alm_iters, newton = 1, res.info["n_iter"], res.info["newton"]
            margins = full.margins(state.W, state.b)
            sizes, j1s = [n], [int(res.history["j1"].iloc[-1])]
            sm_fracs = [_support_count(full, margins) / n]
            lam_full = state.lam
        else:
            lam_prev = state.lam  # full-length, zero off the previous I
            members = keep.copy()
            while True:
                rounds += 1
                reduced = full.subset(members)
                sub_state = _restrict(ALMState(state.W, state.b, lam_prev, state.Lam, 0.0), members, C,
                                      default_sigma0(members.size, pq, C))
                res, sub_state = alm_solve(reduced, tol=tol, max_iter=max_iter, state=sub_state)
                alm_iters += res.info["n_iter"]
                newton += res.info["newton"]
                sizes.append(members.size)
                j1s.append(int(res.history["j1"].iloc[-1]))
                margins = full.margins(sub_state.W, sub_state.b)  # O(npq): Step 2 needs every sample
                sm_fracs.append(_support_count(reduced, margins[members]) / members.size)
                outside = np.ones(n, bool)
                outside[members] = False
                v = 1.0 - full.y * margins
                violators = np.flatnonzero(outside & (v > -VIOLATION_TOL))
                lam_prev = np.zeros(n)
                lam_prev[members] = sub_state.lam
                if violators.size == 0 or rounds >= max_rounds:
                    break
                take = violators[np.argsort(-v[violators])[:d_max]]
                lam_prev[take] = -C  # new indices enter at λ_j = −C (authors' warm start)
                members = np.sort(np.r_[members, take])
            state = ALMState(sub_state.W, sub_state.b, lam_prev, sub_state.Lam, sub_state.sigma)
            lam_full = lam_prev
        keep = np.flatnonzero(full.y * margins <= 1.0 + eps_hat)  # I*(C_i)
        elapsed = now() - t0
        cumulative += elapsed
        # measures that the algorithm does not need (outside the timing)
        U = full.from_user(res.solution["U"])
        eta = kkt_residuals(full, state.W, state.b, 1.0 - full.y * margins, U, lam_full, state.Lam)
        sm = _support_count(full, margins)
        asm = int(np.count_nonzero((-lam_full > 1e-8 * C) & (-lam_full < C * (1 - 1e-8))))
        W_user = full.to_user(state.W)
        row = {"C": C, "time": elapsed, "cum_time": cumulative, "rounds": rounds, "alm_iters": alm_iters,
               "newton_iters": newton, "n_reduced": float(np.mean(sizes)), "max_reduced": int(max(sizes)),
               "j1": float(np.mean(j1s)), "sm_frac_reduced": float(np.mean(sm_fracs)), "sm_frac_full": sm / n,
               "n_sm": sm, "n_asm": asm, "n_nsm": n - sm, "rank": int(res.history["rank"].iloc[-1]),
               "objective": primal_objective(full, state.W, state.b), "kkt_full": eta["kkt"],
               "b": state.b, "margin_width": margin_width(state.W),
               "train_acc": float(np.mean(np.where(margins >= 0, 1.0, -1.0) == full.y)),
               "test_acc": _accuracy(W_user, state.b, X_test, y_test)}
        rows.append(row)
        solutions.append((state.W.copy(), state.b))
        status = path_stop(row, callback, time_limit, cumulative)
        if status != "completed":
            break
    return PathResult(method, pd.DataFrame(rows), solutions, status)


def path_stop(row: dict, callback, time_limit: float | None, cumulative: float) -> str:
    """After a grid point: "stopped" when the callback says so, "time_limit" when the path's seconds are spent,
    else "completed" (the path goes on)."""
    if callback is not None and callback(dict(row)) is False:
        return "stopped"
    if time_limit is not None and cumulative >= time_limit:
        return "time_limit"
    return "completed"

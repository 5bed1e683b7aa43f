"""The C-path of `path.py` on a torch device: AS+ALM (Algorithm 3, adaptive sieving over samples) and Warm+ALM,
each solve by `torch_alm`. The steps, the warm starts, σ₀ per grid point, ε̂, d_max and the table's columns are
those of `path.solve_path` (see there); the reduced problems' samples are gathered on the device (X[I]) and
the violation check (44) is one pass over X there. Times are wall seconds with the device synchronised.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..core import now
from ..core.device import synchronize
from .alm import default_sigma0
from .path import SM_MARGIN_TOL, VIOLATION_TOL, PathResult, check_grid, margin_width, path_stop
from .torch_alm import F64, TorchALMState, TorchSMMProblem, X_times, kkt_residuals, primal_objective, torch_alm_solve


def accuracy(W: torch.Tensor, b: float, X_test: torch.Tensor | None, y_test: torch.Tensor | None) -> float:
    """Test accuracy (48), ŷ = sign(⟨W, X⟩ + b) with sign(0) = +1, on the device."""
    if X_test is None or X_test.shape[0] == 0:
        return float("nan")
    f = X_times(X_test, W) + b
    return float((torch.where(f >= 0, 1.0, -1.0).to(F64) == y_test).to(F64).mean())


def _support_count(y: torch.Tensor, margins: torch.Tensor) -> int:
    return int((y * margins < 1.0 + SM_MARGIN_TOL).sum())


def torch_solve_path(problem: TorchSMMProblem, Cs, *, method: str = "as", tol: float = 1e-6, max_iter: int = 500,
                     eps_hat: float = 0.05, d_max: int = 500, max_rounds: int = 20, X_test=None, y_test=None,
                     callback=None, time_limit: float | None = None) -> PathResult:
    """`path.solve_path` with the samples (and ``X_test`` (m, p·q), ``y_test`` ±1) on ``problem``'s device;
    ``time_limit`` also caps each solve at the seconds the path has left."""
    Cs = check_grid(Cs, method)
    n, pq, dev = problem.n, problem.pq, problem.device
    rows, solutions = [], []
    state = TorchALMState.zeros(problem, default_sigma0(n, pq, Cs[0]))
    keep = torch.arange(n, device=dev)
    cumulative = 0.0
    status = "completed"
    for i, C in enumerate(Cs):
        full = problem.with_C(C)
        left = None if time_limit is None else max(time_limit - cumulative, 1e-3)  # each solve's own cap
        synchronize(dev)
        t0 = now()
        rounds, alm_iters, newton, sm_fracs, sizes, j1s = 0, 0, 0, [], [], []
        if method == "warm" or i == 0:
            state.sigma = default_sigma0(n, pq, C)
            state.lam = state.lam.clamp(-C, 0.0)
            res, state = torch_alm_solve(full, tol=tol, max_iter=max_iter, time_limit=left, state=state)
            rounds, alm_iters, newton = 1, res.info["n_iter"], res.info["newton"]
            margins = full.margins(state.W, state.b)
            sizes, j1s = [n], [int(res.history["j1"].iloc[-1])]
            sm_fracs = [_support_count(full.y, margins) / n]
            lam_full = state.lam
        else:
            lam_prev = state.lam  # full length, zero off the previous I
            members = keep.clone()
            while True:
                rounds += 1
                reduced = full.subset(members)
                sub_state = TorchALMState(state.W, state.b, lam_prev[members].clamp(-C, 0.0), state.Lam,
                                          default_sigma0(members.numel(), pq, C))
                res, sub_state = torch_alm_solve(reduced, tol=tol, max_iter=max_iter, time_limit=left,
                                                 state=sub_state)
                del reduced
                alm_iters += res.info["n_iter"]
                newton += res.info["newton"]
                sizes.append(members.numel())
                j1s.append(int(res.history["j1"].iloc[-1]))
                margins = full.margins(sub_state.W, sub_state.b)  # Step 2 needs every sample: one pass over X
                sm_fracs.append(_support_count(full.y[members], margins[members]) / members.numel())
                outside = torch.ones(n, dtype=torch.bool, device=dev)
                outside[members] = False
                v = 1.0 - full.y * margins
                violators = torch.nonzero(outside & (v > -VIOLATION_TOL)).flatten()  # (44)
                lam_prev = torch.zeros(n, dtype=F64, device=dev)
                lam_prev[members] = sub_state.lam
                if violators.numel() == 0 or rounds >= max_rounds:
                    break
                take = violators[torch.argsort(-v[violators])[:d_max]]
                lam_prev[take] = -C  # new indices enter at λ_j = −C (as path.py)
                members = torch.sort(torch.cat([members, take])).values
            state = TorchALMState(sub_state.W, sub_state.b, lam_prev, sub_state.Lam, sub_state.sigma,
                                  v=None, U=sub_state.U)
            lam_full = lam_prev
        keep = torch.nonzero(full.y * margins <= 1.0 + eps_hat).flatten()  # I*(C_i)
        synchronize(dev)
        elapsed = now() - t0
        cumulative += elapsed
        # measures that the algorithm does not need (outside the timing)
        eta = kkt_residuals(full, state.W, state.b, 1.0 - full.y * margins, state.U, lam_full, state.Lam)
        sm = _support_count(full.y, margins)
        asm = int(((-lam_full > 1e-8 * C) & (-lam_full < C * (1 - 1e-8))).sum())
        row = {"C": C, "time": elapsed, "cum_time": cumulative, "rounds": rounds, "alm_iters": alm_iters,
               "newton_iters": newton, "n_reduced": float(np.mean(sizes)), "max_reduced": int(max(sizes)),
               "j1": float(np.mean(j1s)), "sm_frac_reduced": float(np.mean(sm_fracs)), "sm_frac_full": sm / n,
               "n_sm": sm, "n_asm": asm, "n_nsm": n - sm, "rank": int(res.history["rank"].iloc[-1]),
               "objective": primal_objective(full, state.W, state.b, margins - state.b), "kkt_full": eta["kkt"],
               "b": state.b, "margin_width": margin_width(state.W.cpu().numpy()),
               "train_acc": float((torch.where(margins >= 0, 1.0, -1.0).to(F64) == full.y).to(F64).mean()),
               "test_acc": accuracy(state.W, state.b, X_test, y_test)}
        rows.append(row)
        solutions.append((state.W.cpu().numpy(), state.b))
        status = path_stop(row, callback, time_limit, cumulative)
        if status != "completed":
            break
    return PathResult(method, pd.DataFrame(rows), solutions, status)

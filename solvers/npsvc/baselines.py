"""Baselines with one hyperplane per class and no shared part (eq. 2, Table 1).

TWSVM in the TBSVM form the paper runs (Shao et al. 2011; bias folded into ψ and regularised):

    min_u ½‖Ψ_l u‖² + (r₁/2)‖u‖² + c Σ_{N_l} [1 − ψ_iᵀu]₊
    dual: min_{0 ≤ λ ≤ c} ½ λᵀS_lλ − 1ᵀλ,   u = Q_lΨ_{−l}ᵀλ        (eqs. 14–16 with P̂v_l = 0)

The K duals are solved one after another (``run_twsvm`` explains the history); ``optimality`` is the
largest relative duality gap (P_l − D_l)/max(1, |P_l|) with D_l = 1ᵀλ − ½λᵀS_lλ, a certificate that is 0 only at the optimum.

Pinball TWSVM (Xu et al. 2017; Tanveer et al. 2019): ℓ_d(a) = max(1 − a, τ_p(a − 1)) also penalises
points far beyond the margin; its dual is the same with the box −τ_p c ≤ λ ≤ c, u = Q_lΨ_{−l}ᵀλ.

NPSVM (Tian et al. 2014) uses the ε-insensitive ℓ_s(a) = [|a| − ε]₊ on the own class:
    min_u (r₁/2)‖u‖² + Σ_{S_l}[|ψ_iᵀu| − ε]₊ + c Σ_{N_l}[1 − ψ_iᵀu]₊
    dual over x = [λ; α⁺; α⁻] ∈ [0, c]^{n_{−l}} × [0, 1]^{2n_l}: min ½xᵀSx + qᵀx with
    S = BBᵀ/r₁, B = [Ψ_{−l}; −Ψ_l; Ψ_l], q = [−1; ε; ε], and u = Bᵀx/r₁. (The exact constraint is
    α⁺ + α⁻ ≤ 1; for ε > 0 the optimum has α⁺α⁻ = 0, since lowering both lowers the objective by 2ε,
    so the box gives the same solution.)

LSTSVM (Arun Kumar & Gopal 2009) squares the dissimilarity loss, giving a linear system:

    u_l = (Ψ_lᵀΨ_l + cΨ_{−l}ᵀΨ_{−l} + r₁I)⁻¹ cΨ_{−l}ᵀ1;
    ``optimality`` is the relative residual of that system.
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.linalg as sla

from ..core import HistoryRecorder, Param, Result
from .arrays import array_namespace, to_host
from .blocks import ClassBlocks
from .kernel_params import DEVICE, C, R1
from .problem import NPSVCProblem, chebyshev_columns, class_objectives
from .qp import BoxQP

BASELINE_PARAMS = (C, R1)
TWSVM_PARAMS = (C, R1, DEVICE)
NPSVM_PARAMS = (C, R1, Param("eps", 0.1, float, low=0, low_strict=True, high=10,
                            help="width of the ε-insensitive tube around the own class's hyperplane",
                            symbol=r"\varepsilon"))
PINBALL_PARAMS = (C, R1, Param("tau_p", 0.2, float, low=0, high=1,
                               help="pinball slope beyond the margin (0 = TWSVM)", symbol=r"\tau_p"))


def _uniform(K: int) -> np.ndarray:
    return np.full(K, 1.0 / K)


def _record(rec: HistoryRecorder, problem: NPSVCProblem, k: int, U: np.ndarray, F: np.ndarray, J: np.ndarray,
            optimality: float, **extra) -> str | None:
    norms = np.linalg.norm(U, axis=0)
    with rec.excluded():
        train_acc, test_acc = problem.accuracies(U, norms, F)
    return rec.record(k, objective=float(J.max()), optimality=optimality, train_acc=train_acc, test_acc=test_acc,
                      **chebyshev_columns(J, _uniform(problem.n_classes)), **extra)


def advance(qps: list[BoxQP], matrices: list, k: int) -> None:
    """One lockstep iteration of every unfinished QP: a subspace Newton step every tenth (qp.py)."""
    for S, qp in zip(matrices, qps):
        if qp.kkt_residual() <= 1e-15:
            continue
        if S is not None and k % 10 == 0:
            qp.newton_step(S)
        else:
            qp.step()


class TwinDuals:
    """TWSVM's K duals (eq. 16 with P̂v_l = 0) with numpy: the class blocks, the QP and the conversions that
    ``solve_twin_duals`` needs; knpsvc_torch.DeviceTwinDuals is the same on a torch device."""

    box_qp = BoxQP

    def __init__(self, problem: NPSVCProblem, r1: float):
        self.problem, self.p = problem, problem.features.p
        own = problem.own_mask()
        self.blocks = [ClassBlocks(problem.features, own[:, l], r1) for l in range(problem.n_classes)]

    def array(self, A: np.ndarray) -> np.ndarray:
        """A host array as the duals keep theirs (here: as is)."""
        return A

    def accuracies(self, U: np.ndarray) -> tuple[float, float]:
        return self.problem.accuracies(U, np.linalg.norm(U, axis=0))


def run_twsvm(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, c=1.0, r1=0.1,
              tau_p=0.0) -> Result:
    """TWSVM with numpy (kernel_runs.run_twsvm also takes ``device``, for the torch path); see
    ``solve_twin_duals``."""
    problem.features  # kernel and Cholesky: problem set-up, outside the solver clock
    return solve_twin_duals(problem, lambda: TwinDuals(problem, r1), tol=tol, max_iter=max_iter,
                            time_limit=time_limit, callback=callback, c=c, tau_p=tau_p)


def solve_twin_duals(problem: NPSVCProblem, make_duals, *, tol, max_iter, time_limit=None, callback=None, c=1.0,
                     tau_p=0.0) -> Result:
    """The K duals solved one after another, each on BoxQP.solve's schedule until its relative duality gap is
    ≤ tol or it has taken ``max_iter`` QP iterations (each dual gets the budget the lockstep gave it).

    One S_l at a time stays in cache (≈ 7.5 MB on digits); iterating all K in lockstep instead
    streamed all of them from memory every iteration (digits 0.48–0.55 against 0.30 CPU s per fit).

    History: ``iter`` counts QP iterations over all classes; a row is recorded every tenth QP iteration of
    the dual being solved and when it stops (a row per QP iteration cost 7–9 % of the solve). Each row has
    J_l and the gap of that class from its current λ, the classes already solved at their final values and
    the classes not yet started at λ = 0 (u_l = 0: J_l = c n_{−l}, dual 0, relative gap 1 when c n_{−l} ≥ 1),
    and ``progress``, the share of the K duals done (for the page's progress bar, since ``iter`` runs to K·max_iter).
    So ``optimality``, the largest relative gap over classes, is a true max over classes and falls below tol
    only once every dual is solved; ``objective`` is max_l J_l as before. train_acc and test_acc (of the
    hyperplanes as they stand, unstarted ones at u = 0) are evaluated outside the solver clock when a dual
    stops and on the last row, and are NaN on the other rows: that evaluation streams Ψ and ψ(X_test) and
    evicts S_l from the cache; done every ten QP iterations it cost the solver itself 0.30 → 0.37 s on
    digits and 0.47 → 0.55 s on USPS (CPU s)."""
    K = problem.n_classes
    rec = HistoryRecorder(tol=tol, max_iter=K * max_iter, time_limit=time_limit, callback=callback,
                          measure="optimality")
    duals = make_duals()  # the class blocks (S_l): on the solver clock
    blocks = duals.blocks
    qps = [duals.box_qp(b.matvec, duals.array(-np.ones(len(b.other_rows))), c, lower=-tau_p * c) for b in blocks]
    J = c * np.array([len(b.other_rows) for b in blocks], float)  # at λ = 0: u = 0, every hinge/pinball = 1
    gaps = J / np.maximum(1.0, J)  # dual value 0 at λ = 0
    U = duals.array(np.zeros((duals.p, K)))
    solved = 0  # QP iterations of the duals already solved
    for l, (b, qp) in enumerate(zip(blocks, qps)):
        steps = qp.iterate(b.S)
        while rec.status is None:
            next(steps)
            # With u = Q_lΨ_{−l}ᵀλ: ½‖Ψ_l u‖² + (r₁/2)‖u‖² = ½λᵀS_lλ and Ψ_{−l}u = S_lλ, so primal and dual
            # values come from the QP state at no extra cost.
            quad = float(qp.x @ qp.Sx)
            J[l] = 0.5 * quad + c * float(array_namespace(qp.Sx).maximum(1.0 - qp.Sx, tau_p * (qp.Sx - 1.0)).sum())
            gaps[l] = max((J[l] - (float(qp.x.sum()) - 0.5 * quad)) / max(1.0, abs(J[l])), 0.0)
            finished = gaps[l] <= tol or qp.n_iter >= max_iter or qp.kkt_residual() <= 1e-15
            if not finished and qp.n_iter % 10:
                continue
            train_acc = test_acc = np.nan
            if finished:
                with rec.excluded():
                    U[:, l] = b.hyperplane(0.0, qp.x)
                    train_acc, test_acc = duals.accuracies(U)
            # share of the work for a progress bar: duals done, plus this one's budget used (capped below 1)
            progress = (l + (1.0 if finished else min(qp.n_iter / max_iter, 0.99))) / K
            rec.record(solved + qp.n_iter, objective=float(J.max()), optimality=float(gaps.max()),
                       train_acc=train_acc, test_acc=test_acc, qp_iters=solved + qp.n_iter, progress=progress,
                       **chebyshev_columns(J, _uniform(K)))
            if finished:
                break
        solved += qp.n_iter
        if rec.status is not None:
            break
    if rec.status is None:  # every dual stopped, some on its budget (or exact stationarity) above tol
        rec.stop("max_iter")
    for l, (b, qp) in enumerate(zip(blocks, qps)):
        U[:, l] = b.hyperplane(0.0, qp.x)
    if np.isnan(rec.rows[-1]["train_acc"]):  # stopped inside a dual (Stop, time limit): the table reads this row
        rec.rows[-1]["train_acc"], rec.rows[-1]["test_acc"] = duals.accuracies(U)
    U = to_host(U)
    return rec.result({"U": U, "norms": np.linalg.norm(U, axis=0), "lambdas": [to_host(q.x).copy() for q in qps]})


def run_lstsvm(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, c=1.0, r1=0.1) -> Result:
    features = problem.features
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="optimality")
    Psi, own = features.Psi, problem.own_mask()
    # A_l = Ψ_lᵀΨ_l + cΨ_{−l}ᵀΨ_{−l} + r₁I = B + (1 − c)Ψ_lᵀΨ_l with B = cΨᵀΨ + r₁I shared by all classes:
    # one p×p Cholesky, then Woodbury with an n_l×n_l system per class.
    B = c * (Psi.T @ Psi)
    B[np.diag_indices_from(B)] += r1
    B_factor = sla.cho_factor(B, lower=True)
    U = np.empty((features.p, problem.n_classes))
    residual = 0.0
    for l in range(problem.n_classes):
        Psi_l = Psi[own[:, l]]
        b = c * Psi[~own[:, l]].sum(0)
        u = sla.cho_solve(B_factor, b)
        if c != 1.0:
            BinvT = sla.cho_solve(B_factor, Psi_l.T)
            small = Psi_l @ BinvT
            small[np.diag_indices_from(small)] += 1.0 / (1.0 - c)
            u = u - BinvT @ sla.solve(small, Psi_l @ u)
        U[:, l] = u
        Au = B @ u + (1.0 - c) * (Psi_l.T @ (Psi_l @ u))
        residual = max(residual, float(np.linalg.norm(Au - b) / max(np.linalg.norm(b), 1e-300)))
    F = Psi @ U
    J = class_objectives(F, own, c, loss="squared") + 0.5 * r1 * (U * U).sum(0)
    _record(rec, problem, 1, U, F, J, residual)
    if rec.status is None:  # a closed form cannot improve on its residual: above tol, its one step is all it has
        rec.stop("max_iter")
    return rec.result({"U": U, "norms": np.linalg.norm(U, axis=0)})


def run_npsvm(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, c=1.0, r1=0.1,
              eps=0.1) -> Result:
    features = problem.features
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="optimality")
    own = problem.own_mask()
    Ss, Bs, qps = [], [], []
    for l in range(problem.n_classes):
        mine, other = np.flatnonzero(own[:, l]), np.flatnonzero(~own[:, l])
        rows = np.r_[other, mine, mine]
        sign = np.r_[np.ones(len(other)), -np.ones(len(mine)), np.ones(len(mine))]
        S = np.outer(sign, sign) * features.gram(rows, rows) / r1  # BBᵀ/r₁ from Gram blocks
        upper = np.r_[np.full(len(other), c), np.ones(2 * len(mine))]
        q = np.r_[-np.ones(len(other)), np.full(2 * len(mine), eps)]
        Ss.append(S)
        Bs.append(sign[:, None] * features.Psi[rows])
        qps.append(BoxQP(lambda v, S=S: S @ v, q, upper))

    def hyperplanes() -> np.ndarray:
        return np.column_stack([B.T @ qp.x / r1 for B, qp in zip(Bs, qps)])

    sizes = [(int((~own[:, l]).sum()), int(own[:, l].sum())) for l in range(problem.n_classes)]
    for k in itertools.count(1):
        advance(qps, Ss, k)
        # With u = Bᵀx/r₁: (r₁/2)‖u‖² = ½xᵀSx and Bu = Sx, whose λ and α⁻ rows are ψ_iᵀu on the other and own
        # rows, so primal and dual come from the QP state (no n×n product per iteration).
        quad = np.array([qp.x @ qp.Sx for qp in qps])
        loss = np.array([np.maximum(np.abs(qp.Sx[n_o + n_l:]) - eps, 0.0).sum() + c * np.maximum(1.0 - qp.Sx[:n_o], 0.0).sum()
                         for qp, (n_o, n_l) in zip(qps, sizes)])
        J = 0.5 * quad + loss
        dual = -np.array([qp.objective() for qp in qps])
        gap = float(np.max((J - dual) / np.maximum(1.0, np.abs(J))))
        with rec.excluded():
            U = hyperplanes()
            train_acc, test_acc = problem.accuracies(U, np.linalg.norm(U, axis=0))
        if rec.record(k, objective=float(J.max()), optimality=max(gap, 0.0), train_acc=train_acc, test_acc=test_acc,
                      qp_iters=sum(q.n_iter for q in qps), **chebyshev_columns(J, _uniform(problem.n_classes))):
            break
    return rec.result({"U": U, "norms": np.linalg.norm(U, axis=0), "duals": [q.x.copy() for q in qps]})

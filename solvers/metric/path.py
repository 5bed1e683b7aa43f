"""Regularisation path with path screening, dynamic screening and the range-based extension (Sec. 4, 5).

λ_0 = λ_max = λ_L where M* = K/λ is exact (digest §1.7), then λ_t = ρ λ_{t−1}, warm-started from M_{t−1}.
At each λ_t, before optimising:
  1. path screening over all of T: the first bound (GB, PGB, DGB, CDGB, or RRPB of Thm 3.10 from
     (M_{t−1}, λ_{t−1}, ε_{t−1})) at M_{t−1} with λ_t, then the rule, as Table 4 compares them (Sec. 5.2); or,
     with ``range_screening`` (Sec. 4, 5.3, Table 2), RRPB kept across λ as ranges (Thm 4.1, L side from digest
     §4; ``ranges.RangeLedger``): a triplet whose range from an earlier reference still contains λ_t is
     screened with no work at all, and only the rest is checked against the fresh reference;
  2. the other bounds on the reduced problem step 1 left (and RRPB's sphere after the ranges when the rule is
     stronger than the sphere rule), evaluated at M_{t−1} with λ_t, then the rule;
  3. projected gradient with dynamic screening every ``period`` iterations (RRPB at λ0 = λ1 is DGB).
Step 2 runs only while it pays (``PaidScreening``): on iris, wine and segment PGB screened a median 2–3 % of the
triplets RRPB's ranges left, 0.1–0.2 solver iterations' worth a λ, for 1.7–2.6 iterations' worth of work (one
evaluation of the reduced problem, then the rule, forming the margins at its centre as it reads them, and the
narrowing, one compiled pass each). Where it does pay, it runs at every λ.
Ranges are the default only where a margin costs O(d²) (the triplets backend, the paper's cost model): on the pair
backend at ρ = 0.9 they cover a few grid steps, so most of T comes back as candidates at every λ, and deciding a
candidate's range costs several times what the rule's pass over a triplet does.
ε_t = sqrt(2 gap_t/λ_t) (DGB radius at termination, after Thm 3.10). The path stops when the elasticity of
the loss, [(loss_{t−1} − loss_t)/loss_{t−1}]·[λ_{t−1}/(λ_{t−1} − λ_t)], drops below ``stop`` (Sec. 5),
with loss = Σ_t ℓ(⟨M, H_t⟩) of the reduced problem at the solution (ambiguity 9).
Range screening uses RRPB only: GB and DGB ranges would need P over all triplets (App. K.3, ambiguity 23).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import InputError, now
from .bounds import DYNAMIC_BOUNDS, PATH_BOUNDS, dynamic_sphere, relaxed_regularization_path_bound
from .problem import ReducedProblem, TripletProblem, inner, lambda_max, loss, margin_partition
from .projected_gradient import Screening, minimize
from . import kernels
from .device_ranges import TorchRangeLedger
from .ranges import RangeLedger
from .rules import screen_subset


#: Step 2's cost in solver iterations on the reduced problem (module docstring: 1.7–2.6 on iris, wine, segment).
PATH_BOUND_COST = 2.0
#: The longest run of λ steps that skips step 2 before trying it again.
MAX_SKIPPED_STEPS = 16


class PaidScreening:
    """When step 2 (path screening by the bounds after RRPB's ranges or the first bound) runs: at a λ where, at its
    last run, it paid, that is, the share of the active triplets it screened times the solver's iterations at
    that λ (the iterations' worth of work it saved) was at least PATH_BOUND_COST. After a run that did not pay it
    skips 1 step, then 2, 4, … up to MAX_SKIPPED_STEPS while it keeps not paying, and pays again as soon as it runs
    and pays. Skipping a safe screening test is safe: the reduced problem is only larger. Deterministic (counts,
    not timings), so a path is the same from run to run."""

    def __init__(self) -> None:
        self.skip = 0  # steps to skip after a run that did not pay
        self.waiting = 0  # steps still to skip

    def due(self) -> bool:
        if self.waiting > 0:
            self.waiting -= 1
            return False
        return True

    def record(self, screened_share: float, iterations: int) -> None:
        if screened_share * iterations >= PATH_BOUND_COST:
            self.skip = 0
        else:
            self.skip = min(max(1, 2 * self.skip), MAX_SKIPPED_STEPS)
        self.waiting = self.skip


@dataclass
class PathResult:
    """``table``: one row per λ; ``history``: iterations of every λ; ``rounds``: dynamic screening rounds;
    ``solutions``: M per λ; ``masks``: final (L̂, R̂) per λ when kept.

    ``status`` is ``converged`` only when the path ended by its elasticity test and every λ's solve met its gap
    test; ``max_iter`` when a λ stopped on its iteration budget (``n_capped`` says how many) or the path ran out
    of λ steps."""

    table: pd.DataFrame
    history: pd.DataFrame
    rounds: pd.DataFrame
    solutions: list
    masks: list = field(default_factory=list)
    status: str = "converged"

    @property
    def n_capped(self) -> int:
        """λ whose solve stopped at ``max_iter`` before its relative duality gap reached ``tol``."""
        return int((self.table["status"] == "max_iter").sum())


def uses_ranges(problem: TripletProblem, bounds: tuple[str, ...], range_screening: bool | None) -> bool:
    """Whether a path keeps RRPB's ranges across λ: as asked, or by default (None) where RRPB is a bound and a
    margin costs O(d²) (``regularization_path``)."""
    if range_screening is None:
        return "rrpb" in bounds and problem.backend == "triplets"
    return bool(range_screening)


def _check_bounds(bounds) -> tuple[str, ...]:
    bounds = tuple(bounds)
    bad = [b for b in bounds if b not in PATH_BOUNDS]
    if bad:
        raise InputError(f"unknown bound(s) {bad}; choose from {', '.join(PATH_BOUNDS)}")
    return bounds


def regularization_path(problem: TripletProblem, *, bounds=("rrpb", "pgb"), rule: str = "sphere",
                        rho: float = 0.9, tol: float = 1e-6, max_iter: int = 10_000, max_steps: int = 200,
                        stop: float = 0.01, period: int = 10, active_set: bool = False, refresh: int = 10,
                        range_screening: bool | None = None, lam_start: float | None = None,
                        time_limit: float | None = None, analysis: bool = True, keep_masks: bool = False,
                        paid_screening: bool = True, callback=None) -> PathResult:
    """Solve along λ_t = ρ^t λ_max with the chosen screening; ``bounds=()`` is the naive path.

    ``range_screening``: RRPB as ranges across λ (step 1 of the module docstring), with or without RRPB among
    ``bounds``; None: where RRPB is a bound and a margin costs O(d²) (the triplets backend), since a covered
    triplet's margin is then never recomputed, and not on the pair backend, where a margin is two reads of the
    pair values and a pass over T costs less than deciding ranges.

    ``paid_screening``: step 2 runs only where it pays (``PaidScreening``); False runs it at every λ, as the
    paper's path does (to reproduce its RRPB+PGB row).

    ``analysis`` adds, outside the timed work, the true partition |L*|, |C*|, |R*| at each solution and the
    radius of every bound at the start of each λ. ``callback(row)`` sees each λ's row; False stops the path.
    """
    bounds = _check_bounds(bounds)
    kernels.warm_up()  # compile or load the kernels (screening's, the pair products') now, outside the timed steps
    if not 0 < rho < 1:
        raise InputError(f"rho = {rho} must be in (0, 1)")
    lam_L, K = lambda_max(problem)
    if lam_L == 0:
        raise InputError("no triplet has a positive margin under K = [Σ H_t]_+, so M* = K/λ at every λ and there is no "
                         "path to trace (are the features constant, or the classes indistinguishable?)")
    lam = lam_L if lam_start is None else float(lam_start)
    if lam <= 0:
        raise InputError(f"the starting λ must be positive, got {lam}")
    M, start_status = K / lam, "closed-form"
    if lam < lam_L:  # not the closed form: solve the first point without screening
        first = minimize(problem, lam, M, tol=tol, max_iter=max_iter)
        M, start_status = first.solution["M"], first.status
    gamma = problem.gamma
    eps = 0.0 if lam >= lam_L else math.nan  # ε_0 = 0: K/λ_max is exact
    prev_loss = float(loss(problem.margins(M), gamma).sum())
    rows, histories, rounds, solutions, masks = [], [], [], [M], []
    ledger_type = RangeLedger if problem.torch is None else TorchRangeLedger
    ledger = ledger_type(problem, rho, keep_masks, max_steps) if uses_ranges(problem, bounds, range_screening) else None
    # the ledger applies RRPB with the sphere rule; a stronger rule still gets RRPB's sphere on what is left
    path_bounds = tuple(b for b in bounds if b != "rrpb" or rule != "sphere" or ledger is None)
    # at every λ: the ledger's ranges, or else the first bound over all of T; the bounds after them where they pay
    every, after = (path_bounds[:0], path_bounds) if ledger is not None else (path_bounds[:1], path_bounds[1:])
    dynamic = Screening(tuple(dict.fromkeys("dgb" if b == "rrpb" else b for b in bounds)), rule, period)
    # one unscreened problem for the whole path: it keeps the margins of its last evaluation, so the first
    # iterate at λ_t (M_{t−1}, the solver's last full pass at λ_{t−1}) reads them, as a screened path's does
    unscreened = ReducedProblem.unscreened(problem)
    paid = PaidScreening() if paid_screening else None
    elapsed, status = 0.0, "converged"
    warm_step = None  # the first λ starts from η_0; each later one from the BB step its predecessor ended with
    rows.append({"step": 0, "iter": 0, "lam": lam, "neg_log10_lam": -math.log10(lam), "iters": 0, "time": 0.0,
                 "screen_time": 0.0, "gap": 0.0, "eps": 0.0 if eps == 0 else math.nan, "loss": prev_loss,
                 "objective": prev_loss + 0.5 * lam * inner(M, M), "status": start_status})
    for step in range(1, max_steps + 1):
        lam_prev, M_prev, lam = lam, M, lam * rho
        started = now()
        reference = (M_prev, lam_prev, eps) if math.isfinite(eps) else None
        if ledger is None:
            reduced, n_range = unscreened, 0
        else:
            reduced = ledger.step(step, lam, reference)
            n_range = ledger.n_range
        path_share = None  # the share of the active triplets the later bounds screened, when they ran
        if reference is not None and every:
            reduced = _path_screen(problem, every, rule, M_prev, lam_prev, lam, eps, reduced)
        if reference is not None and after and (paid is None or paid.due()):
            before = len(reduced.active)
            reduced = _path_screen(problem, after, rule, M_prev, lam_prev, lam, eps, reduced)
            path_share = (before - len(reduced.active)) / max(before, 1)
        screen_time = now() - started
        n_path = (reduced.n_L, reduced.n_R)
        remaining = None if time_limit is None else max(time_limit - elapsed - screen_time, 1e-3)
        res = minimize(problem, lam, M_prev, tol=tol, max_iter=max_iter, time_limit=remaining, reduced=reduced,
                       screening=dynamic, active_set=active_set, refresh=refresh, screen_at_start=False,
                       masks=keep_masks, step=warm_step)
        warm_step = res.info["step"]
        if paid is not None and path_share is not None:
            paid.record(path_share, res.info["n_iter"])
        M, gap, eps_prev = res.solution["M"], res.info["abs_gap"], eps
        eps = math.sqrt(2.0 * gap / lam)
        step_time = screen_time + res.info["time"]
        elapsed += step_time
        row = {"step": step, "iter": step, "lam": lam, "neg_log10_lam": -math.log10(lam), "iters": res.info["n_iter"],
               "time": step_time, "screen_time": screen_time + res.info["screen_time"], "gap": gap, "eps": eps,
               "loss": res.info["loss"], "objective": float(res.history["objective"].iloc[-1]),
               "rel_gap": float(res.history["gap"].iloc[-1]), "status": res.status,
               "path_L": n_path[0], "path_R": n_path[1], "range_screened": n_range,
               "final_L": res.info["n_L"], "final_R": res.info["n_R"]}
        if analysis:
            row.update(_analyse(problem, M, M_prev, lam_prev, lam, row, eps_prev))
            row["pairs_share"] = pairs_in_use(reduced.active) / max(len(problem.triplets.pairs), 1)
        rows.append(row)
        solutions.append(M)
        if keep_masks:
            masks.append((res.solution["in_L"], res.solution["in_R"]))
        histories.append((step, lam, elapsed - step_time, res.history))
        rounds.extend({"step": step, "lam": lam, "round": r, **d} for r, d in enumerate(res.info["screening_rounds"]))
        if res.status in ("diverged", "stopped"):
            status = res.status
            break
        if callback is not None and callback(dict(row)) is False:
            status = "stopped"
            break
        elasticity = (prev_loss - row["loss"]) / max(prev_loss, 1e-300) * lam_prev / (lam_prev - lam)
        prev_loss = row["loss"]
        if elasticity < stop:
            break
        if time_limit is not None and elapsed >= time_limit:
            status = "time_limit"
            break
    else:
        status = "max_iter"  # out of λ steps before the elasticity test
    if status == "converged" and any(row["status"] == "max_iter" for row in rows):
        status = "max_iter"  # a λ stopped on its iteration budget, not on its gap test
    return PathResult(pd.DataFrame(rows), _stack_histories(histories), pd.DataFrame(rounds), solutions, masks, status)


def _stack_histories(histories: list) -> pd.DataFrame:
    """One frame of every λ's iterations with its step, λ and the path's running solver time."""
    if not histories:
        return pd.DataFrame()
    frame = pd.concat([h for *_, h in histories], ignore_index=True)
    sizes = [len(h) for *_, h in histories]
    frame["step"] = np.repeat([s for s, *_ in histories], sizes)
    frame["lam"] = np.repeat([lam for _, lam, *_ in histories], sizes)
    frame["time"] += np.repeat([offset for _, _, offset, _ in histories], sizes)
    return frame


def _path_screen(problem: TripletProblem, bounds: tuple[str, ...], rule: str, M_prev: np.ndarray, lam_prev: float,
                 lam: float, eps: float, rp: ReducedProblem) -> ReducedProblem:
    """Screen at a new λ from the previous solution with every chosen bound in turn, each applied only to the
    triplets ``rp`` (range-screened, or nothing screened) and the earlier bounds left; returns ``rp`` narrowed.

    Every screened set is safe at λ, so the reduced problem shares the minimiser and a later bound (GB, PGB,
    DGB) is built from it: one pass over the triplets still active, not over T.
    """
    for name in bounds:
        A = rp.active
        if len(A) == 0:
            break
        if name == "rrpb":
            sphere, known = relaxed_regularization_path_bound(M_prev, lam_prev, lam, eps), None
        else:
            ev = rp.evaluate(M_prev, lam)
            sphere, known = dynamic_sphere(name, rp, ev, lam, rp.gap(ev, lam)), (ev.M, ev.margins)
        to_L, to_R = screen_subset(A, sphere, rule, known=known)  # pair values over the active pairs only
        if to_L.any() or to_R.any():
            rp = rp.narrowed(to_L, to_R)
    return rp


def pairs_in_use(subset) -> int:
    """Distinct pairs that the triplets of ``subset`` use: the pair work an evaluation cannot avoid."""
    used = np.zeros(subset.pair_rows.size, dtype=bool)
    used[subset.same] = True
    used[subset.diff] = True
    return int(np.count_nonzero(used))


def _analyse(problem: TripletProblem, M: np.ndarray, M_prev: np.ndarray, lam_prev: float, lam: float, row: dict,
             eps_prev: float) -> dict:
    """Untimed diagnostics: the partition at the solution, screening rates, and every bound's radius at the
    start of this λ (built from the unscreened problem at M_{t−1})."""
    x = problem.margins(M)
    L_star, R_star = margin_partition(x, problem.gamma)
    n_L, n_R = int(L_star.sum()), int(R_star.sum())
    denominator = max(n_L + n_R, 1)
    out = {"L_star": n_L, "R_star": n_R, "C_star": problem.n_triplets - n_L - n_R,
           "rate_path": (row["path_L"] + row["path_R"]) / denominator,
           "rate_final": (row["final_L"] + row["final_R"]) / denominator,
           "rate_path_T": (row["path_L"] + row["path_R"]) / problem.n_triplets}
    rp = ReducedProblem.unscreened(problem)
    ev = rp.evaluate(M_prev, lam)
    gap = rp.gap(ev, lam)
    for name in DYNAMIC_BOUNDS:
        out[f"r_{name}"] = dynamic_sphere(name, rp, ev, lam, gap).radius
    out["r_rrpb"] = relaxed_regularization_path_bound(M_prev, lam_prev, lam, eps_prev).radius
    return out

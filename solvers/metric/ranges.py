"""RRPB path screening kept across λ: each triplet is decided once per range, not once per λ (Sec. 4).

Thm 4.1 turns the RRPB sphere rule at a reference (M0, λ0, ε) into an interval (λ_a, λ0] of λ on which a
triplet stays in R* (or L*). On the grid λ_t = λ_0 ρ^t that interval is a number of steps, so a triplet
screened by a range goes into the bucket of the step at which its range ends and is not looked at again
until then. At each new λ_t only the *candidates* are examined with the fresh reference (M_{t−1}, λ_{t−1},
ε_{t−1}): the triplets the previous λ left unscreened after its range screening, and those whose range has
just ended. The screened set is a superset of what the RRPB sphere rule at λ_t alone gives (a triplet covered
by an older range is safe at λ_t; every other triplet gets the fresh rule). With its buckets (``RangeLedger``)
the work per λ is O(#candidates) plus the pair values they need, instead of O(|T|).

H_L̂ = Σ_{L̂} H_t is kept the same way: the triplets entering L̂ are added and those whose L range ends are
subtracted, in one signed scatter-add onto the pairs.
"""
from __future__ import annotations

import math

import numpy as np

from . import kernels
from .problem import ReducedProblem, TripletProblem, inner

#: Ranges are converted to whole steps with this much slack in log(λ)/log(ρ), so that a range ending within
#: rounding of a grid point releases its triplet one step early (safe) rather than one step late (unsafe).
_STEP_SLACK = 1e-7
_FOREVER = 1 << 30  # steps of a range that reaches λ = 0 (int32: no path has that many λ)
#: The compiled ledger passes over T (``ledger_scan``) while its candidates are many and reads them from buckets
#: (``ledger_step``) while they are few. Per λ the pass reads every triplet's release step (≈ 5 ns each) and the
#: buckets write and read a record per candidate (≈ 50 ns), so buckets pay below about a tenth of T examined; moving
#: to them costs a pass that buckets every covered triplet (≈ 90 ns each: segment at 2,000 rows, 800,000 triplets,
#: 72 ms, a dozen passes). So the ledger moves to buckets after _SETTLE_STEPS steps in a row examined fewer than
#: _TO_BUCKETS·|T| candidates, and back to the pass after one step that examined more than _TO_SCAN·|T|. Measured
#: (ms per λ, pass only / these rules): a9a*1 at ρ = 0.99 7.00 / 5.37 (examines ≈ 6 % of T); segment and pendigits
#: at 2,000 rows and ρ = 0.9, whose candidates grow from under 1 % to a third of T within 30 steps, keep the pass.
_TO_BUCKETS = 0.06
_TO_SCAN = 0.12
_SETTLE_STEPS = 8
#: Steps a ledger keeps buckets for unless told (``RangeLedger``'s ``last_step``; a path passes its ``max_steps``).
_LAST_STEP = 10_000


def range_lower_ends(h: np.ndarray, nu: np.ndarray, m: float, eps: float, lam0: float, gamma: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Lower ends λ_a of the RRPB ranges below λ0 (Thm 4.1): the triplet stays in R* (resp. L*) for λ_a < λ ≤ λ0.

    R side: λ_a = λ0 (mν − h + 2εν)/(h − 2 + νm), non-empty iff h − εν > 1.
    L side: λ_a = λ0 (h + mν + 2εν)/(2(1 − γ) + mν − h), non-empty iff h + εν < 1 − γ (digest §4).
    Returns (lower end for R, lower end for L), +inf where the range is empty.
    """
    e_nu, m_nu = eps * nu, m * nu
    with np.errstate(divide="ignore", invalid="ignore"):
        r_side = np.where(h - e_nu > 1.0, lam0 * (m_nu - h + 2 * e_nu) / (h - 2.0 + m_nu), np.inf)
        l_side = np.where(h + e_nu < 1.0 - gamma, lam0 * (h + m_nu + 2 * e_nu) / (2 * (1.0 - gamma) + m_nu - h), np.inf)
    return r_side, l_side


def steps_covered(lower_end: np.ndarray, lam: float, rho: float) -> np.ndarray:
    """How many grid points λ, λρ, λρ², ... lie strictly above ``lower_end`` (0 for an empty range).

    λρ^k > λ_a ⇔ k < z = log(λ_a/λ)/log ρ, so the count is ⌈z⌉, taken with a little slack towards fewer steps.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log(lower_end / lam) * (1.0 / math.log(rho))  # λ_a = inf → −inf, λ_a = 0 → +inf, λ_a < 0 → nan
    z[lower_end <= 0] = np.inf
    z -= _STEP_SLACK
    np.clip(z, 0, _FOREVER, out=z)
    return np.ceil(z, out=z).astype(np.int32)


def range_steps(h: np.ndarray, nu: np.ndarray, m: float, eps: float, lam0: float, lam: float, gamma: float,
                rho: float) -> tuple[np.ndarray, np.ndarray]:
    """(steps, to_L): how many grid points λ, λρ, ... the RRPB range of each triplet covers, and whether it is
    an L* range — the same numbers as ``steps_covered(min(range_lower_ends(...)))``, with the range ends
    computed only for the triplets whose range is non-empty (Thm 4.1; R: h − εν > 1, L: h + εν < 1 − γ).

    With s = −h (R side) or +h (L side) and c = 2 (R) or −2(1 − γ) (L) both sides read
    λ_a = λ0 (mν + s + 2εν)/(mν − s − c), the two formulas of ``range_lower_ends``.
    """
    e_nu = eps * nu
    to_L = h + e_nu < 1.0 - gamma
    rows = np.flatnonzero(to_L | (h - e_nu > 1.0))
    steps = np.zeros(h.size, np.int32)
    if rows.size:
        on_L = to_L[rows]
        s = h[rows]
        s *= np.where(on_L, 1.0, -1.0)  # (a masked np.negative costs ~5 plain passes)
        m_nu = m * nu[rows]
        num = m_nu + s
        num += 2.0 * e_nu[rows]
        den = m_nu - s
        den -= np.where(on_L, -2.0 * (1.0 - gamma), 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            steps[rows] = steps_covered(lam0 * num / den, lam, rho)
    return steps, to_L


class RangeLedger:
    """The triplets screened by RRPB ranges: for each, the step at which its range ends (0: not screened).

    The compiled step (``kernels.USE_NUMBA``, pairs backend) passes over T while most triplets are candidates
    (``compiled_kernels.ledger_scan``); once few are, it keeps them, and the screened triplets in one bucket per
    step at which their ranges end, as records (triplet, diff pair, same pair, side; and ‖H_t‖) that it reads
    in order (``ledger_step``), and never passes over the triplets an older range still covers (_TO_BUCKETS,
    _SETTLE_STEPS, _TO_SCAN). Ranges ending after ``last_step`` are not bucketed (the ledger is not stepped that far).
    """

    def __init__(self, problem: TripletProblem, rho: float, keep_masks: bool = False,
                 last_step: int = _LAST_STEP) -> None:
        self.problem, self.rho, self.keep_masks = problem, rho, keep_masks
        n = problem.n_triplets
        self.release = np.zeros(n, np.int32)  # first step the triplet's range no longer covers
        self.side_L = np.zeros(n, bool)  # its range is an L* range (else R*)
        self.candidates = np.arange(n)  # left unscreened at the last step
        self.H_L = problem.zeros()
        self.n_L = self.n_R = self.n_range = 0
        self.last_step = last_step
        self._records = None  # with buckets: the candidates as records, and the buckets (``_fill_buckets``)
        self._buckets = None
        self._seen = None  # the pairs ``ledger_step`` listed as touched, cleared after each step
        self._few_steps = 0  # steps in a row, up to the last, that examined fewer than _TO_BUCKETS·|T| candidates

    def _fill_buckets(self, t: int) -> None:
        """Move the compiled ledger to buckets after step ``t``: the candidates as records, every range that
        covers t in the bucket of its end step. Chunks enough for every triplet in full chunks plus a part-filled
        one per bucket, and one being read; memory is touched only when used."""
        problem, T = self.problem, self.problem.triplets
        size = self.last_step + 1
        chunks = -(-problem.n_triplets // kernels.LEDGER_CHUNK) + size + 1
        b = dict(pool=np.empty((chunks * kernels.LEDGER_CHUNK, 4), np.int32),
                 pool_nu=np.empty(chunks * kernels.LEDGER_CHUNK), head=np.full(size, -1, np.int32),
                 tail=np.full(size, -1, np.int32), sizes=np.zeros(size, np.int64),
                 next_chunk=np.full(chunks, -1, np.int32), fill=np.zeros(chunks, np.int32),
                 free=np.arange(chunks, dtype=np.int32)[::-1].copy(), n_free=np.array([chunks], np.int64))
        kernels.compiled().fill_buckets(self.release, self.side_L, T.diff, T.same, problem.h_norm, t, **b)
        c = self.candidates
        self._records = (np.column_stack([c.astype(np.int32), T.diff[c], T.same[c], np.zeros(c.size, np.int32)]),
                         problem.h_norm[c])
        self._buckets = b
        if self._seen is None:
            self._seen = np.zeros(len(T.pairs), bool)

    def step(self, t: int, lam: float, reference: tuple[np.ndarray, float, float] | None) -> ReducedProblem:
        """The reduced problem at λ_t = ``lam``: ranges that still cover λ_t, plus the fresh RRPB ranges from
        ``reference`` = (M_{t−1}, λ_{t−1}, ε_{t−1}) over the candidates (None: no usable reference).

        Steps come in order t = 1, 2, …: the candidates at t are the triplets left unscreened at t − 1 and those
        whose range ends at t. Everything is O(#candidates) plus the pair values they need and one scatter-add
        onto the pairs; only the triplets left active are built into a subset (their own pair indices), the
        examined ones are not (the numpy step finds the ranges ending at t with one comparison per triplet).
        """
        if not 1 <= t <= self.last_step:
            raise ValueError(f"step {t} is outside this ledger's steps 1..{self.last_step}")
        if kernels.USE_NUMBA and self.problem.backend == "pairs":
            return self._compiled_step(t, lam, reference)
        problem = self.problem
        released = np.flatnonzero(self.release == t) if self.n_L + self.n_R else np.zeros(0, np.int64)
        out_L = released[self.side_L[released]]
        self.n_L -= out_L.size
        self.n_R -= released.size - out_L.size
        self.n_range = self.n_L + self.n_R  # still covered by an older range
        candidates = np.concatenate([self.candidates, released]) if released.size else self.candidates
        in_L = np.zeros(0, np.int64)
        known = None
        if reference is not None and candidates.size:
            M0, lam0, eps = reference
            # the candidates' margins straight from the pair values (no subset of the candidates is built: only
            # the triplets left active become one)
            x0 = problem.margins(M0, candidates)
            steps, to_L = range_steps(x0, problem.h_norm[candidates], math.sqrt(inner(M0, M0)), eps, lam0, lam,
                                      problem.gamma, self.rho)
            covered = steps > 0
            newly = candidates[covered]
            to_L = to_L[covered]
            self.release[newly] = steps[covered] + t
            self.side_L[newly] = to_L
            in_L = newly[to_L]
            self.n_L += in_L.size
            self.n_R += newly.size - in_L.size
            if newly.size:
                candidates = candidates[~covered]
                x0 = x0[~covered]
            known = (M0, x0)  # margins at M_{t−1} over the new active set: the solver's first evaluation
        examined = problem.subset(candidates)
        self.candidates = candidates
        if out_L.size or in_L.size:
            self.H_L = self.H_L + problem.signed_sum(in_L, out_L)
        return ReducedProblem.assemble(problem, examined, self.H_L, (self.n_L, self.n_R), self._masks_at(t), known)

    def _compiled_step(self, t: int, lam: float, reference: tuple[np.ndarray, float, float] | None
                       ) -> ReducedProblem:
        """``step`` in one compiled pass, over T (``compiled_kernels.ledger_scan``) or over the candidates from
        their buckets (``ledger_step``): the same ranges, sets and H_L̂. The pair values at M0 are computed for
        the pairs the candidates use when those are few (``TripletProblem.pair_values_where``), else for all;
        then one product over the pairs whose H_L̂ weight changed.
        """
        problem, T = self.problem, self.problem.triplets
        weights = np.zeros(len(T.pairs))
        rule = None  # (M0, λ0, ε, ‖M0‖) of the fresh RRPB ranges
        if reference is not None:
            rule = (*reference, math.sqrt(inner(reference[0], reference[0])))
        step = self._scan if self._records is None else self._from_buckets
        examined, n_left, in_L, in_R, out_L, out_R, margins, changed, active = step(t, lam, rule, weights)
        self.n_range = self.n_L + self.n_R - out_L - out_R  # still covered by an older range
        self.n_L += in_L - out_L
        self.n_R += in_R - out_R
        if changed is None:
            changed = np.flatnonzero(weights)
        if changed.size:
            self.H_L = self.H_L + problem.weighted_pairs(changed, weights[changed])
        self._few_steps = self._few_steps + 1 if examined < _TO_BUCKETS * problem.n_triplets else 0
        if self._records is None and self._few_steps >= _SETTLE_STEPS:
            self._fill_buckets(t)
        elif self._records is not None and examined > _TO_SCAN * problem.n_triplets:
            self._records = self._buckets = None
        known = None if reference is None else (reference[0], margins[:n_left])
        return ReducedProblem.assemble(problem, active, self.H_L, (self.n_L, self.n_R), self._masks_at(t), known)

    def _scan(self, t, lam, rule, weights):
        """The step as one pass over T (``ledger_scan``); the candidates it leaves are in T's order. Pair values
        for all pairs: the pass runs while the candidates are many (and for the few steps before buckets)."""
        problem, T = self.problem, self.problem.triplets
        candidates, margins = np.empty(problem.n_triplets, np.int64), np.empty(problem.n_triplets)
        M0, lam0, eps, m = rule or (None, lam, 0.0, 0.0)
        q = weights if rule is None else problem.everything.pair_values(M0)
        examined, n_left, in_L, in_R, out_L, out_R = kernels.compiled().ledger_scan(
            self.release, self.side_L, t, T.diff, T.same, q, problem.h_norm, rule is not None, m, float(eps),
            float(lam0), float(lam), problem.gamma, float(self.rho), weights, candidates, margins)
        self.candidates = candidates[:n_left]
        return examined, n_left, in_L, in_R, out_L, out_R, margins, None, problem.subset(self.candidates)

    def _from_buckets(self, t, lam, rule, weights):
        """The step over the last candidates and step t's bucket (``ledger_step``), in T's order. Pair values for
        the pairs the candidates use when those are at most half of all pairs, else for all. The active set is
        built from the records left."""
        problem, T, k = self.problem, self.problem.triplets, kernels.compiled()
        previous, previous_nu = self._records
        b = self._buckets
        n = previous.shape[0] + int(b["sizes"][t])
        left, left_nu, margins = np.empty((n, 4), np.int32), np.empty(n), np.empty(n)
        M0, lam0, eps, m = rule or (None, lam, 0.0, 0.0)
        q = weights
        if rule is not None and 2 * n >= len(T.pairs):
            q = problem.everything.pair_values(M0)
        elif rule is not None:
            used = np.zeros(len(T.pairs), bool)
            k.candidate_pairs(previous, t, b["pool"], b["head"], b["next_chunk"], b["fill"], used)
            q = problem.pair_values_where(M0, used)
        touched = np.empty(2 * n, np.int32)
        n_left, in_L, in_R, out_L, out_R, n_touched = k.ledger_step(
            t, previous, previous_nu, q, rule is not None, m, float(eps), float(lam0), float(lam), problem.gamma,
            float(self.rho), weights, touched, self._seen, self.release, self.side_L, left, left_nu, margins, **b)
        changed = touched[:n_touched]
        self._seen[changed] = False
        records = left[:n_left]
        self._records = records, left_nu[:n_left]
        self.candidates = records[:, k.IDX].astype(np.int64)
        active = problem.subset(self.candidates, (records[:, k.DIFF].copy(), records[:, k.SAME].copy()))
        return n, n_left, in_L, in_R, out_L, out_R, margins, changed[weights[changed] != 0], active

    def _state_copy(self) -> tuple[np.ndarray, np.ndarray]:
        return self.release.copy(), self.side_L.copy()

    def _masks_at(self, t: int):
        """The masks (in L̂, in R̂) over T at step t, built only if asked for, from a copy taken now (a copy of
        O(|T|) per λ: taken only when the path keeps its masks)."""
        if not self.keep_masks:
            return _masks_not_kept
        release, side_L = self._state_copy()

        def masks() -> tuple[np.ndarray, np.ndarray]:
            covered = release > t
            return covered & side_L, covered & ~side_L
        return masks


def _masks_not_kept():
    raise RuntimeError("the screened sets over T were not kept: run the path with keep_masks=True")

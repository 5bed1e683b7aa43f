"""RRPB path screening kept across λ: each triplet is decided once per range, not once per λ (Sec. 4).

Thm 4.1 turns the RRPB sphere rule at a reference (M0, λ0, ε) into an interval (λ_a, λ0] of λ on which a
triplet stays in R* (or L*). On the grid λ_t = λ_0 ρ^t that interval is a number of steps, so a triplet
screened by a range goes into the bucket of the step at which its range ends and is not looked at again
until then. At each new λ_t only the *candidates* are examined with the fresh reference (M_{t−1}, λ_{t−1},
ε_{t−1}): the triplets the previous λ left unscreened after its range screening, and those whose range has
just ended. The screened set is a superset of what the RRPB sphere rule at λ_t alone gives (a triplet covered
by an older range is safe at λ_t; every other triplet gets the fresh rule), and the work per λ is
O(#candidates + #pairs·d²) instead of O(|T|).

H_L̂ = Σ_{L̂} H_t is kept the same way: the triplets entering L̂ are added and those whose L range ends are
subtracted, in one signed scatter-add onto the pairs.
"""
from __future__ import annotations

import math

import numpy as np

from . import kernels
from .problem import _GATHER_SHARE, ReducedProblem, TripletProblem, inner

#: Ranges are converted to whole steps with this much slack in log(λ)/log(ρ), so that a range ending within
#: rounding of a grid point releases its triplet one step early (safe) rather than one step late (unsafe).
_STEP_SLACK = 1e-7
_FOREVER = 1 << 30  # steps of a range that reaches λ = 0 (int32: no path has that many λ)
#: The compiled ledger can give a whole row of triplets its worst case's range (``row_bounds``) when that range
#: covers at least this many grid steps; shorter, each candidate of the row gets its own (longer) range, so
#: that rows decided early do not come back as candidates at the next step. 0: no row test, the default: a row's
#: worst case covers fewer steps than its triplets' own ranges, so they return sooner. Measured (RRPB screening,
#: CPU s, numba, row test off / from 2 steps): segment full, ρ = 0.9, 1.91 / 2.00; mnist*1 at 4,000 rows,
#: ρ = 0.99 (Table 2), 3.34 / 4.32.
_ROW_MIN_STEPS = 0


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


def row_bounds(problem: TripletProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The rows of T for the block test of the compiled ledger: (row starts + [|T|], each row's anchor's first
    row, σ_p per pair), or None when T is not made of anchor blocks whose rows share their diff pairs.

    A row is the triplets (i, j, l) of one anchor i and one same-class j, l over the anchor's other-class
    neighbours D_i (``build_triplets``: anchor-major, j-major within an anchor, the same l order in every row).
    With q_p = u_pᵀ M0 u_p, h_t = ⟨H_t, M0⟩ = q_il − q_ij (digest §1.6) and, since
    ‖H_t‖²_F = ‖u_il‖⁴ + ‖u_ij‖⁴ − 2(u_ilᵀu_ij)² (digest §0; diagonal M: ‖u_il∘u_il − u_ij∘u_ij‖² =
    ‖u_il∘u_il‖² + ‖u_ij∘u_ij‖² − 2 Σ_k u_il,k² u_ij,k²),

        min_{l∈D_i} q_il − q_ij ≤ h_t ≤ max_{l∈D_i} q_il − q_ij,   ‖H_t‖ ≤ (max_{l∈D_i} σ_il + σ_ij)^½,

    with σ_p = ‖u_p‖⁴ (diagonal: ‖u_p∘u_p‖²). **Safety.** The RRPB ball at λ ≤ λ0 (Thm 3.10) has centre
    ((λ0 + λ)/(2λ)) M0 and radius ((λ0 − λ)‖M0‖ + 2λ0ε)/(2λ); the sphere rule (eq. (4)) screens t to R* iff
    (λ0 + λ) h_t − ((λ0 − λ)‖M0‖ + 2λ0ε) ‖H_t‖ > 2λ, increasing in h_t and non-increasing in ‖H_t‖, and to
    L* iff (λ0 + λ) h_t + ((λ0 − λ)‖M0‖ + 2λ0ε) ‖H_t‖ < 2λ(1 − γ), increasing in both. So at every λ at which
    the row's worst case — (lower h bound, upper ‖H‖ bound) for R*, (upper h bound, upper ‖H‖ bound) for L* —
    is screened, every triplet of the row is: the worst case's range of Thm 4.1 is contained in each triplet's
    range, and giving its steps to every triplet of the row is safe (the triplets keep a range no longer than
    their own). The bounds are read once per anchor (its first row) and once per row, not per triplet.
    """
    T = problem.triplets
    n = len(T)
    new_anchor = np.empty(n, bool)
    new_anchor[0] = True
    np.not_equal(T.i[1:], T.i[:-1], out=new_anchor[1:])
    new_row = new_anchor.copy()
    new_row[1:] |= T.same[1:] != T.same[:-1]
    starts = np.flatnonzero(new_row)
    first_rows = np.flatnonzero(new_anchor[starts])
    anchor_row = first_rows[np.cumsum(new_anchor[starts]) - 1]
    row_start = np.append(starts, n)
    lengths = np.diff(row_start)
    if not np.array_equal(lengths, lengths[anchor_row]):
        return None
    row_of = np.repeat(np.arange(starts.size), lengths)
    in_first_row = row_start[anchor_row][row_of] + (np.arange(n) - starts[row_of])
    if not np.array_equal(T.diff, T.diff[in_first_row]):
        return None
    sq = np.einsum("ij,ij->i", problem.U, problem.U)  # ‖u_p‖² (diagonal: ‖u_p∘u_p‖², as U holds u_p∘u_p)
    sigma = sq if problem.diagonal else sq * sq
    return row_start.astype(np.int64), anchor_row.astype(np.int64), sigma


class RangeLedger:
    """The triplets screened by RRPB ranges: for each, the step at which its range ends (0: not screened)."""

    def __init__(self, problem: TripletProblem, rho: float, keep_masks: bool = False) -> None:
        self.problem, self.rho, self.keep_masks = problem, rho, keep_masks
        self.release = np.zeros(problem.n_triplets, np.int32)  # first step the triplet's range no longer covers
        self.side_L = np.zeros(problem.n_triplets, bool)  # its range is an L* range (else R*)
        self.candidates = np.arange(problem.n_triplets)  # left unscreened at the last step
        self.H_L = problem.zeros()
        self.n_L = self.n_R = self.n_range = 0
        # the compiled step's outputs (candidates left, their margins), rewritten at every step: the reduced
        # problem of the last step, which reads them, is done by then
        self._scan_out = np.empty(problem.n_triplets, np.int64), np.empty(problem.n_triplets)
        self._rows = None  # the compiled step's rows of T (``row_bounds``), built at its first step
        self.by_rows = 0  # candidates the last compiled step screened by the row test

    def step(self, t: int, lam: float, reference: tuple[np.ndarray, float, float] | None) -> ReducedProblem:
        """The reduced problem at λ_t = ``lam``: ranges that still cover λ_t, plus the fresh RRPB ranges from
        ``reference`` = (M_{t−1}, λ_{t−1}, ε_{t−1}) over the candidates (None: no usable reference).

        Finding the triplets whose range ends at λ_t is one comparison per triplet; everything else is
        O(#candidates) plus one pass over the pair values and one scatter-add onto the pairs; only the triplets
        left active are built into a subset (their own pair indices), the examined ones are not.
        """
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
        """``step`` as one compiled pass over T (``kernels.ledger_scan``): the same ranges, sets and H_L̂.

        The candidates are the triplets with ``release ≤ t``: at most the last step's candidates and the
        screened ones. Only when those could touch few pairs (``_GATHER_SHARE``) are the pairs they use marked
        (a compiled pass) and only their values at M0 computed; otherwise all pair values are. Per λ: one pass
        over the int32 release steps reading the candidates' pair values, and one product over the pairs whose
        H_L̂ weight changed.
        """
        problem, T = self.problem, self.problem.triplets
        n_pairs = len(T.pairs)
        weights = np.zeros(n_pairs)
        candidates, margins = self._scan_out
        if reference is None:
            M0, lam0, eps, m = None, lam, 0.0, 0.0
            q = np.zeros(n_pairs)
        else:
            M0, lam0, eps = reference
            m = math.sqrt(inner(M0, M0))
            used = np.ones(n_pairs, bool)
            if 2 * (self.candidates.size + self.n_L + self.n_R) <= _GATHER_SHARE * n_pairs:
                used[:] = False
                kernels.compiled().candidate_pairs(self.release, t, T.diff, T.same, used)
            q = problem.pair_values_where(M0, used)
        if self._rows is None:
            rows = row_bounds(problem) if _ROW_MIN_STEPS > 0 else None  # off: one row, no bounds to build
            self._rows = (rows or (np.array([0, problem.n_triplets], np.int64), np.zeros(1, np.int64),
                                   np.zeros(n_pairs))) + (_ROW_MIN_STEPS if rows else 0,)
        n_left, in_L, in_R, out_L, out_R, self.by_rows = kernels.compiled().ledger_scan(
            self.release, self.side_L, t, T.diff, T.same, q, problem.h_norm, reference is not None, m, float(eps),
            float(lam0), float(lam), problem.gamma, float(self.rho), weights, candidates, margins, *self._rows)
        self.n_range = self.n_L + self.n_R - out_L - out_R  # still covered by an older range
        self.n_L += in_L - out_L
        self.n_R += in_R - out_R
        self.candidates = candidates[:n_left]
        if in_L or out_L:
            self.H_L = self.H_L + problem.pair_weighted_sum(weights)
        known = None if reference is None else (M0, margins[:n_left])
        return ReducedProblem.assemble(problem, problem.subset(self.candidates), self.H_L, (self.n_L, self.n_R),
                                       self._masks_at(t), known)

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

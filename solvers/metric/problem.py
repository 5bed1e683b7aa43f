"""RTLM: regularised triplet metric learning (Sec. 2), its dual, and the screened (reduced) problem (Sec. 2.3).

    P_λ(M) = Σ_t ℓ(⟨M, H_t⟩) + (λ/2)‖M‖²_F,  M ⪰ O                    ("Primal")
    D_λ(α) = −(γ/2)‖α‖² + αᵀ1 − (1/(2λ))‖[Σ_t α_t H_t]_+‖²_F,  0 ≤ α ≤ 1   (dual, App. A, Γ maximised out)

with H_t = (x_i − x_l)(x_i − x_l)ᵀ − (x_i − x_j)(x_i − x_j)ᵀ and ℓ the γ-smoothed hinge (γ = 0: hinge).
Given screened sets L̂ ⊆ L*, R̂ ⊆ R*, the reduced primal replaces the loss on L̂ by its linear part and drops
R̂; it has the same minimiser (digest §1.5):

    P̃_λ(M) = Σ_{t∈A} ℓ(⟨M, H_t⟩) + (1 − γ/2)|L̂| − ⟨M, H_L̂⟩ + (λ/2)‖M‖²,   A = T − L̂ − R̂.

With ``diagonal=True`` M = diag(m) (App. B): H_t is replaced by its diagonal h_t, the PSD cone by m ≥ 0.
Matrices (full) and vectors (diagonal) share one code path: ``inner``, ``psd_split``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ..core import InputError, check_array, check_labels, check_memory, check_same_length, psd_part
from . import kernels
from .device import TorchPairs, resolve_device
from .triplets import Triplets, build_triplets, scale_to_unit_box

_CHUNK = 4_000_000  # floats per temporary block when computing per-triplet norms
#: A subset keeps its parent's pair table while the pair work per evaluation is at most this many flops per
#: triplet (an evaluation does about this much elementwise work per triplet); beyond it, pairs are renumbered.
_PAIR_WORK_PER_TRIPLET = 8
#: The sample form of the pair arithmetic (``TripletSubset.sample_form``) is used where the pair table's P·d² flops
#: exceed _SAMPLE_FORM_GAIN times its own fixed·n·d² + _SPARSE_FLOP·P·d, fixed = _SAMPLE_FIXED[compiled]: a pair's
#: gathered or scattered flop costs several BLAS flops, and numpy's form (through E) pays its n·d² part twice.
#: Measured crossovers with the compiled kernels (margins and Σ αH of a random subset, full M): phishing (n = 9,950,
#: d = 68) ≈ 12,000 pairs, a9a*1 (29,305, 16) ≈ 70,000, pendigits (2,000, 16) ≈ 3,500; the rule gives 11,300,
#: 58,600 and 4,000.
_SAMPLE_FORM_GAIN = 1.0
_SPARSE_FLOP = 8
_SAMPLE_FIXED = {True: 1.0, False: 2.0}
#: Eigenvalues of M below this fraction of the largest (in modulus) are dropped in the sample form's pair values:
#: rounding of the PSD projection's zero eigenvalues, whose terms are below the dense form's own rounding.
_RANK_TOL = 1e-13
#: ``TripletProblem.pair_values_over`` computes only the listed pairs when they are at most this share of all pairs
#: (gathering their rows costs more per pair than the all-pairs products: on mnist*1 at 0.3 of the pairs about the
#: same, 2.2 ms, at 0.1 a quarter).
_GATHER_SHARE = 0.3
#: With the compiled kernels, u_pᵀ M u_p alone over listed pairs (no Σ αH to follow: the ledger's candidates, the
#: rules' margins) goes through the samples from this many pairs per sample on, without gathering rows of U.
#: Measured crossovers (M of rank d/2, sorted rows): a9a*1 0.4 n, phishing 0.6 n, pendigits 0.75 n, segment 0.8 n.
_PAIR_VALUES_PER_SAMPLE = 0.75
#: λM* = [Σ_t α_t H_t]_+ with α ∈ [0, 1], so ‖M*‖ and ‖∇P/λ‖ are up to about Σ_t ‖H_t‖/λ; the spheres square
#: such norms (r_GB² = ‖∇P‖²/(4λ²)), which overflows float64 once they pass √(1.8e308) ≈ 1.3e154.
_MAX_SOLUTION_SCALE = 1e150
#: A full M costs a d × d symmetric eigendecomposition per iteration (the PSD projection) and in set-up (λ_max),
#: about 10·d³ flops: at d = 2,000 about 10¹¹ (5–20 s on one core here), at duke's 7,129 some 3.6·10¹² (minutes
#: each). Beyond this d a full metric on the CPU is refused; on CUDA only the memory check applies.
MAX_FULL_DIM_CPU = 2048
#: d × d float64 matrices alive at once in a full-M run: M, ∇P, the BB pair, the step, Σ αH, the centres,
#: the eigendecomposition's eigenvectors and workspace.
_FULL_DIM_COPIES = 16


# -- loss (Sec. 2.1, App. A) -----------------------------------------------------------------------------------
def loss(x: np.ndarray, gamma: float) -> np.ndarray:
    """Smoothed hinge: 0 for x > 1, (1 − x)²/(2γ) on [1 − γ, 1], 1 − x − γ/2 below; γ = 0 is the hinge."""
    z = np.maximum(1.0 - x, 0.0)
    if gamma == 0:
        return z
    quadratic = np.minimum(z, gamma)  # z ≤ γ: z²/(2γ); z > γ: γ/2 + (z − γ) = z − γ/2
    return quadratic * quadratic / (2 * gamma) + (z - quadratic)


def dual_alpha(x: np.ndarray, gamma: float) -> np.ndarray:
    """α = −ℓ'(x) ∈ [0, 1] (eq. (2)); for the hinge the kink takes α = 0 (any value in [0, 1] is valid)."""
    if gamma == 0:
        return (x < 1.0).astype(float)
    return np.clip((1.0 - x) / gamma, 0.0, 1.0)


def conjugate(alpha: np.ndarray, gamma: float) -> np.ndarray:
    """ℓ*(−α) = (γ/2)α² − α for α ∈ [0, 1] (App. A)."""
    return 0.5 * gamma * alpha * alpha - alpha


def margin_partition(x: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Masks of L (⟨H, M⟩ < 1 − γ) and R (⟨H, M⟩ > 1), eq. (11)."""
    return x < 1.0 - gamma, x > 1.0


def _samples_are_cheaper(n_pairs: int, n: int, d: int) -> bool:
    """The flop rule between the two forms of the pair products over ``n_pairs`` pairs (full M): the pair table's
    n_pairs·d² against the sample form's fixed·n·d² + _SPARSE_FLOP·n_pairs·d (compiled kernels or numpy's E)."""
    fixed = _SAMPLE_FIXED[kernels.USE_NUMBA]
    return n_pairs * d * d >= _SAMPLE_FORM_GAIN * (fixed * n * d * d + _SPARSE_FLOP * n_pairs * d)


def _nonzero_eigenpairs(mu: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The eigenpairs with |μ_k| above _RANK_TOL of the largest (the sample form's pair values)."""
    keep = np.abs(mu) > _RANK_TOL * max(float(np.abs(mu).max(initial=0.0)), np.finfo(float).tiny)
    return mu[keep], V[:, keep]


# -- the problem ---------------------------------------------------------------------------------------------------
@dataclass
class TripletProblem:
    """Data, triplets and the pair quantities every evaluation needs."""

    X: np.ndarray
    codes: np.ndarray
    triplets: Triplets
    gamma: float
    diagonal: bool
    name: str = "data"
    backend: str = "pairs"  # "pairs": O(1) per triplet via pair values; "triplets": O(d²) per triplet (paper's cost)
    device: str = "numpy"  # "numpy", or a torch device for the pair/triplet arithmetic and eigh (device.py)
    U: np.ndarray = field(init=False, repr=False)  # pair features: u_p (full) or u_p∘u_p (diagonal)
    h_norm: np.ndarray = field(init=False, repr=False)  # ‖H_t‖_F (or ‖h_t‖₂)
    #: (A_+, μ, V) of the last PSD projection (numpy, full M): the solver evaluates each projected iterate next,
    #: and its pair values through the samples need that spectrum (``spectrum``)
    _projected: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(init=False, repr=False, default=None)
    #: (M, μ, X V) of the last M whose pair values went through the samples (``sample_coordinates``)
    _coordinates: tuple[np.ndarray, np.ndarray, np.ndarray] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=float)  # the compiled kernels read rows of X (one layout)
        T = self.triplets
        diffs = self.X[T.pairs[:, 0]] - self.X[T.pairs[:, 1]]
        self.U = diffs * diffs if self.diagonal else diffs
        self.h_norm = self._triplet_norms(diffs)
        self.device = resolve_device(self.device)
        self.torch = None if self.device == "numpy" else TorchPairs(self.U, self.device, self.diagonal)

    def _triplet_norms(self, diffs: np.ndarray) -> np.ndarray:
        """‖H‖²_F = ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² (digest §0); diagonal: ‖a∘a − b∘b‖²; in chunks of triplets."""
        T = self.triplets
        out = np.empty(len(T))
        step = max(1, _CHUNK // self.dim)
        sq = np.einsum("ij,ij->i", diffs, diffs)
        for s in range(0, len(T), step):
            a, b = T.diff[s:s + step], T.same[s:s + step]
            if self.diagonal:
                out[s:s + step] = np.einsum("ij,ij->i", *(2 * [self.U[a] - self.U[b]]))
            else:
                ab = np.einsum("ij,ij->i", diffs[a], diffs[b])
                out[s:s + step] = sq[a] ** 2 + sq[b] ** 2 - 2.0 * ab * ab
        return np.sqrt(np.maximum(out, 0.0))

    # -- sizes and the space of M ------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.X.shape[1]

    @property
    def n_triplets(self) -> int:
        return len(self.triplets)

    def zeros(self) -> np.ndarray:
        return np.zeros(self.dim) if self.diagonal else np.zeros((self.dim, self.dim))

    def as_matrix(self, M: np.ndarray) -> np.ndarray:
        return np.diag(M) if self.diagonal else M

    def psd_split(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A_+, A_-) with A = A_+ + A_- and ⟨A_+, A_-⟩ = 0: core's PSD projection, or clipping for diagonal M."""
        plus = np.maximum(A, 0.0) if self.diagonal else self._project_psd(A)
        return plus, A - plus

    def _project_psd(self, A: np.ndarray) -> np.ndarray:
        if self.torch is not None:
            return self.torch.project_psd(A)
        self._projected = psd_part(A)
        return self._projected[0]

    def spectrum(self, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(μ, V) with M = V diag(μ) Vᵀ, the eigenpairs with μ_k ≠ 0 only (the sample form's pair values): the
        last projection's when M is that projection (the solver's new iterate), else an eigendecomposition."""
        last = self._projected
        return _nonzero_eigenpairs(*(last[1:] if last is not None and last[0] is M else np.linalg.eigh(M)))

    def positive_part_norm_sq(self, A: np.ndarray) -> float:
        """‖[A]_+‖²_F from A's eigenvalues alone (no eigenvectors; entries for diagonal M)."""
        if self.diagonal:
            plus = np.maximum(A, 0.0)
            return float(plus @ plus)
        if self.torch is not None:
            plus = self.torch.project_psd(A)
            return inner(plus, plus)
        vals = np.linalg.eigvalsh(0.5 * (A + A.T))
        vals = vals[vals > 0]
        return float(vals @ vals)

    def supporting_normal(self, A: np.ndarray) -> np.ndarray:
        """P = −A_- = [−A]_+, built as a PSD matrix so that ⟨P, X⟩ ≥ 0 for every X ⪰ O holds exactly (Fig. 2).

        Not A_+ − A: when A_- is tiny that difference is rounding noise, not PSD, and the half-space it defines
        can cut the cone (we saw false screens from it).
        """
        return np.maximum(-A, 0.0) if self.diagonal else self._project_psd(-A)

    # -- triplet quantities through pairs (digest §1.6) --------------------------------------------------------
    def pair_features(self, rows: np.ndarray) -> np.ndarray:
        """The rows ``rows`` of the pair table U, gathered by ``np.take``: 4× faster than ``U[rows]`` on a path
        (0.26 against 1.17 ms for 17,000 of the 222,729 pairs of a9a*1 at d = 16)."""
        return np.take(self.U, rows, axis=0)

    def pair_values(self, M: np.ndarray, U: np.ndarray | None = None) -> np.ndarray:
        """u_pᵀ M u_p for the rows u_p of ``U`` (default: every pair of the problem)."""
        U = self.U if U is None else U
        return U @ M if self.diagonal else np.einsum("ij,ij->i", U @ M, U)

    @cached_property
    def incidence(self) -> sp.csr_matrix:
        """The P × n pair–sample incidence matrix E (+1 at a, −1 at b for pair p = (a, b)), so that U = E X."""
        return self.incidence_rows(None)

    def incidence_rows(self, rows: np.ndarray | None) -> sp.csr_matrix:
        """The rows ``rows`` (None: all) of E, built directly in CSR form: two entries per row, at a < b."""
        ends = self.triplets.pairs if rows is None else self.triplets.pairs[rows]
        P = ends.shape[0]
        return sp.csr_matrix((np.tile([1.0, -1.0], P), ends.ravel(), np.arange(0, 2 * P + 1, 2)),
                             shape=(P, self.X.shape[0]))

    def margins(self, M: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """⟨H_t, M⟩ = d²_M(x_i, x_l) − d²_M(x_i, x_j) for all triplets or those in ``idx``."""
        if self.backend == "triplets" or self.torch is not None:
            return self.subset(np.arange(self.n_triplets) if idx is None else idx).margins(M)
        T = self.triplets
        if idx is None:
            q = self.everything.pair_values(M)
            return _margins_from_pairs(q, T.diff, T.same)
        diff, same = T.diff[idx], T.same[idx]
        q = self.pair_values_over(M, diff, same)  # only the pairs these triplets use, when they are few
        return _margins_from_pairs(q, diff, same)

    def pair_values_over(self, M: np.ndarray, *pair_lists: np.ndarray) -> np.ndarray:
        """u_pᵀ M u_p for the pairs listed (with repeats) in ``pair_lists``: a table over all pairs in which
        only those are computed — in the cheaper form for that many pairs — when they are at most
        _GATHER_SHARE of all pairs (the ledger's candidates after screening touch few), else all of them."""
        used = np.zeros(len(self.triplets.pairs), dtype=bool)
        for pairs in pair_lists:
            used[pairs] = True
        return self.pair_values_where(M, used)

    def pair_values_where(self, M: np.ndarray, used: np.ndarray) -> np.ndarray:
        """u_pᵀ M u_p in a table over all pairs that is valid where ``used`` (a mask over the pairs) is True:
        only those are computed when they are at most _GATHER_SHARE of all pairs or go through the compiled
        sample form (which reads each pair's two ends where they are: a pair costs the same in a few or in all),
        else all of them."""
        P = used.size
        rows = np.flatnonzero(used)
        if not np.isfinite(M).all() or (rows.size > _GATHER_SHARE * P
                                        and not (kernels.USE_NUMBA and self._by_samples(rows.size))):
            return self.everything.pair_values(M)
        q = np.empty(P)  # entries outside ``rows`` are never read
        q[rows] = self._gathered_pair_values(M, rows)
        return q

    def _by_samples(self, n_pairs: int) -> bool:
        """Whether u_pᵀ M u_p over ``n_pairs`` listed pairs goes through the samples (full M): compiled, from
        _PAIR_VALUES_PER_SAMPLE pairs per sample on; numpy, by the flop rule (``_samples_are_cheaper``)."""
        if self.diagonal:
            return False
        n = self.X.shape[0]
        if kernels.USE_NUMBA:
            return n_pairs >= _PAIR_VALUES_PER_SAMPLE * n
        return _samples_are_cheaper(n_pairs, n, self.dim)

    def _gathered_pair_values(self, M: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """u_pᵀ M u_p for the pairs ``rows``: the pair table's rows, or through the samples with M's eigenvectors
        (``sample_pair_values``), as ``_by_samples`` says."""
        if not self._by_samples(rows.size):
            return self.pair_values(M, self.pair_features(rows))
        return self.sample_pair_values(M, rows)

    def sample_coordinates(self, M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(μ, Z = X V) with M = V diag(μ) Vᵀ (μ_k ≠ 0 only), the samples' coordinates in M's eigenbasis, kept for
        the last M (same object): the path's range ledger takes its pair values at M_{t−1}, the matrix the
        solver's last evaluation at λ_{t−1} took its own at (X V is n·d·rank flops, 0.4 ms a λ on mnist*1)."""
        last = self._coordinates
        if last is not None and last[0] is M:
            return last[1], last[2]
        mu, V = self.spectrum(M)
        Z = self.X @ V
        self._coordinates = (M, mu, Z)
        return mu, Z

    def sample_pair_values(self, M: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """u_pᵀ M u_p = Σ_k μ_k ((X V)_a − (X V)_b)_k² for the pairs p = (a, b) of ``rows``, M = V diag(μ) Vᵀ:
        one compiled pass over the pairs, or (numpy) a gather of both ends' rows of X V."""
        mu, Z = self.sample_coordinates(M)
        if kernels.USE_NUMBA:
            out = np.empty(rows.size)
            kernels.compiled().sample_pair_values(Z, mu, self.triplets.pairs, rows, out)
            return out
        ends = self.triplets.pairs[rows]
        D = Z[ends[:, 0]]
        D -= Z[ends[:, 1]]
        return (D * D) @ mu

    def subset(self, idx: np.ndarray, pairs: tuple[np.ndarray, np.ndarray] | None = None) -> "TripletSubset":
        """The triplets ``idx`` (sorted) as a subset; ``pairs``: their (diff, same) pair indices when the caller
        holds them (the range ledger's records), read in order instead of gathered from T at random (0.55 against
        0.86 ms per λ on a9a*1's path at ρ = 0.99, 15,000 triplets of 732,625)."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size == self.n_triplets:  # the whole set (indices are unique and sorted): reuse the pair table
            return self.everything
        if pairs is None:
            return self.everything.part(idx)
        listed = TripletSubset(self, idx, self.everything.pair_rows, pairs[1], pairs[0])
        return listed.part(np.arange(idx.size))

    @cached_property
    def everything(self) -> "TripletSubset":
        T = self.triplets
        return TripletSubset(self, np.arange(self.n_triplets), np.arange(len(T.pairs)), T.same, T.diff)

    @cached_property
    def H_sum(self) -> np.ndarray:
        """Σ_t H_t over all triplets (computed once per problem)."""
        return self.everything.combine(None)

    def sum_over(self, mask: np.ndarray, count: int) -> np.ndarray:
        """Σ_{t ∈ mask} H_t from the smaller side: directly, or Σ_all H_t minus the complement."""
        if count == 0:
            return self.zeros()
        if 2 * count <= self.n_triplets:
            return self.everything.combine(None, where=mask)
        return self.H_sum - self.everything.combine(None, where=~mask)

    def signed_sum(self, plus: np.ndarray, minus: np.ndarray) -> np.ndarray:
        """Σ_{t ∈ plus} H_t − Σ_{t ∈ minus} H_t (index arrays): one signed scatter-add onto the pairs, one product."""
        if self.torch is not None:
            return self.subset(plus).combine(None) - self.subset(minus).combine(None)
        T, P = self.triplets, len(self.triplets.pairs)
        w = (np.bincount(T.diff[plus], minlength=P) - np.bincount(T.same[plus], minlength=P)
             - np.bincount(T.diff[minus], minlength=P) + np.bincount(T.same[minus], minlength=P)).astype(float)
        return self.pair_weighted_sum(w)

    def pair_weighted_sum(self, w: np.ndarray) -> np.ndarray:
        """Σ_p w_p u_p u_pᵀ (diagonal: Σ_p w_p u_p∘u_p) over the pairs with w_p ≠ 0 only."""
        used = np.flatnonzero(w)  # pairs whose count changed: the product is over these only
        return self.weighted_pairs(used, w[used])

    def weighted_pairs(self, rows: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Σ_k w_k u_p u_pᵀ over the pairs p = rows[k], from their rows of the pair table (through the samples
        this would first build their rows of E, which costs more than it saves: 0.32 against 0.24 ms at 8,000
        pairs, n = 2,000, d = 16)."""
        U = self.pair_features(rows)
        return U.T @ w if self.diagonal else (U.T * w) @ U

    @cached_property
    def h_norm_sq_sum(self) -> float:
        """Σ_t ‖H_t‖²_F (the initial step's Lipschitz-type constant, computed once per problem)."""
        return float(self.h_norm @ self.h_norm)


def _margins_from_pairs(q: np.ndarray, diff: np.ndarray, same: np.ndarray) -> np.ndarray:
    """⟨H_t, M⟩ = q_diff − q_same from the pair values q (digest §1.6), gathered by ``np.take``: with int32 pair
    indices it is 2.5× faster than ``q[diff]`` (9 against 22 µs for 15,000 triplets)."""
    out = np.take(q, diff)
    out -= np.take(q, same)
    return out


def inner(A: np.ndarray, B: np.ndarray) -> float:
    """⟨A, B⟩ = tr(AᵀB) (vectors for diagonal M)."""
    return float(np.vdot(A, B))


@dataclass
class TripletSubset:
    """A set of triplets with its own compact pair table, so work scales with the subset, not with T."""

    problem: TripletProblem
    idx: np.ndarray
    pair_rows: np.ndarray
    same: np.ndarray
    diff: np.ndarray

    def part(self, keep: np.ndarray) -> "TripletSubset":
        """The triplets ``keep`` (a mask or positions in this subset), O(len(self)), nothing from the rest of T.

        Their pairs get their own compact table (mark the pairs used and renumber them, no sorting) only when
        the pair work (#pairs·d² per evaluation) would otherwise outweigh the per-triplet work; with many
        triplets per pair (all triplets, small d) the renumbering costs more than it saves.
        """
        d = self.problem.dim
        pair_work = self.pair_rows.size * (d if self.problem.diagonal else d * d)
        if kernels.USE_NUMBA:  # the same subset in one compiled pass (no mask or cumsum over the pairs' copies)
            positions = np.flatnonzero(keep) if keep.dtype == bool else keep.astype(np.int64, copy=False)
            renumber = self.problem.backend != "triplets" and pair_work > _PAIR_WORK_PER_TRIPLET * positions.size
            idx, same, diff, rows, renumbered = kernels.compiled().gather_renumber(
                positions, self.idx, self.same, self.diff, self.pair_rows.size, renumber)
            return TripletSubset(self.problem, idx, self.pair_rows[rows] if renumbered else self.pair_rows, same, diff)
        same, diff = self.same[keep], self.diff[keep]
        if self.problem.backend == "triplets" or pair_work <= _PAIR_WORK_PER_TRIPLET * same.size:
            return TripletSubset(self.problem, self.idx[keep], self.pair_rows, same, diff)
        used = np.zeros(self.pair_rows.size, dtype=bool)
        used[same] = True
        used[diff] = True
        if used.all():  # nothing to drop: keep the table (a renumbering would be an identity map)
            return TripletSubset(self.problem, self.idx[keep], self.pair_rows, same, diff)
        local = np.cumsum(used, dtype=np.int32) - 1
        return TripletSubset(self.problem, self.idx[keep], self.pair_rows[used], local[same], local[diff])

    @cached_property
    def pair_table_rows(self) -> np.ndarray | None:
        """Rows of the problem's pair table this subset uses, None when it uses all of them (no copy of U)."""
        return None if self.pair_rows.size == len(self.problem.triplets.pairs) else self.pair_rows

    @cached_property
    def pair_table(self) -> np.ndarray:
        """The pair features u_p of this subset's pairs: the problem's table in place, or its rows gathered once
        per subset (a subset is the solver's active set, evaluated twice per iteration: margins and Σ αH)."""
        rows = self.pair_table_rows
        return self.problem.U if rows is None else self.problem.pair_features(rows)

    @cached_property
    def uses_samples(self) -> bool:
        """Whether this subset's pair arithmetic goes through the samples (``sample_form``): full M on the numpy
        pairs backend, where the flop rule (``_samples_are_cheaper``) says so (large d, many pairs per sample)."""
        p = self.problem
        return (not p.diagonal and p.backend == "pairs" and p.torch is None
                and _samples_are_cheaper(self.pair_rows.size, p.X.shape[0], p.dim))

    @cached_property
    def sample_form(self) -> tuple[sp.csr_matrix, sp.csr_matrix] | None:
        """(E_S, E_Sᵀ): this subset's rows of the pair–sample incidence, when ``uses_samples``, else None. The
        compiled kernels (``kernels.USE_NUMBA``) do the same products from the pairs' ends and X, with neither E_S
        nor the subset's pair table built (``sample_pair_values``, ``laplacian_product``); numpy uses E_S.

        With U_S = E_S X, both per-evaluation pair products go through the n samples instead of the P_S pairs:
          Σ_p w_p u_p u_pᵀ = U_Sᵀ diag(w) U_S = Xᵀ (E_Sᵀ (w ∘ U_S))            (the Laplacian form Xᵀ L X)
          u_pᵀ M u_p = Σ_k μ_k (u_pᵀ v_k)² = ((E_S (X V))² μ)_p,  M = V diag(μ) Vᵀ   (only μ_k ≠ 0 kept)
        n·d² + O(P_S·d) flops instead of P_S·d²; M is PSD of rank about d/2 on the paper's data, which halves the
        second further. Exact up to rounding (the sums are reordered), for any symmetric M.
        """
        p = self.problem
        if not self.uses_samples:
            return None
        E = p.incidence if self.pair_table_rows is None else p.incidence_rows(self.pair_rows)
        return E, E.T.tocsr()

    def pair_values(self, M: np.ndarray) -> np.ndarray:
        """u_pᵀ M u_p for this subset's pairs (numpy, pairs backend), in the cheaper of the two forms."""
        if not self.uses_samples or not np.isfinite(M).all():  # a diverged iterate: NaN margins, not a LinAlgError
            return self.problem.pair_values(M, self.pair_table)
        if kernels.USE_NUMBA:
            return self.problem.sample_pair_values(M, self.pair_rows)
        mu, Z = self.problem.sample_coordinates(M)
        D = self.sample_form[0] @ Z  # rows: V_kᵀ u_p
        return (D * D) @ mu

    @cached_property
    def device_index(self):
        """This subset's pair indices on the problem's torch device (uploaded once per subset)."""
        return self.problem.torch.index(self.same, self.diff, self.pair_table_rows)

    @cached_property
    def h_norm(self) -> np.ndarray:
        """‖H_t‖_F of these triplets (gathered once per subset)."""
        return self.problem.h_norm[self.idx]

    def __len__(self) -> int:
        return int(self.idx.size)

    @cached_property
    def triplet_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(a_t, b_t) = (u_diff, u_same) of every triplet, the per-triplet data of the paper's cost model, gathered
        once per subset (backend "triplets"): gathered per evaluation they were a third of its time at d = 19,
        and a subset is evaluated at every iteration of a λ."""
        return self.problem.pair_features(self.diff), self.problem.pair_features(self.same)

    def margins(self, M: np.ndarray) -> np.ndarray:
        if self.problem.backend == "triplets":  # aᵀMa − bᵀMb per triplet, O(d²) each as in the paper's cost model
            a, b = self.triplet_vectors
            if self.problem.diagonal:
                return a @ M - b @ M
            return np.einsum("ij,ij->i", a @ M, a) - np.einsum("ij,ij->i", b @ M, b)
        if self.problem.torch is not None:
            return self.problem.torch.margins(self.device_index, M).cpu().numpy()
        q = self.pair_values(M)
        return _margins_from_pairs(q, self.diff, self.same)

    def margin_pairs(self, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(q, diff, same) with ⟨H_t, M⟩ = q_diff − q_same, for a compiled pass to form the margins as it reads them
        (``rules.screen``'s ``pairs``); None where margins are not pair values (triplets backend, the device) or
        without the kernels."""
        p = self.problem
        if not kernels.USE_NUMBA or p.backend != "pairs" or p.torch is not None:
            return None
        return self.pair_values(M), self.diff, self.same

    def combine(self, weights: np.ndarray | None, where: np.ndarray | None = None) -> np.ndarray:
        """Σ_t w_t H_t = Σ_p (Σ_{t: diff=p} w_t − Σ_{t: same=p} w_t) u_p u_pᵀ (scatter-add, then one product);
        ``weights=None`` means all ones; ``where`` restricts the sum to a mask of these triplets (``weights`` then
        given for the masked ones only) and the product to the pairs they touch."""
        if self.problem.backend == "triplets":  # Σ w (aaᵀ − bbᵀ) = Aᵀ diag(w) A − Bᵀ diag(w) B
            a, b = self.triplet_vectors
            if where is not None:
                a, b = a[where], b[where]
            if weights is None:
                weights = np.ones(a.shape[0])
            if self.problem.diagonal:
                return weights @ a - weights @ b
            return (a.T * weights) @ a - (b.T * weights) @ b
        diff, same = (self.diff, self.same) if where is None else (self.diff[where], self.same[where])
        if self.problem.torch is not None:
            index = self.device_index if where is None else self.problem.torch.index(same, diff, self.pair_table_rows)
            return self.problem.torch.combine(index, None if weights is None else self.problem.torch.tensor(weights))
        P = self.pair_rows.size
        w = np.bincount(diff, weights, minlength=P) - np.bincount(same, weights, minlength=P)
        return self.pair_sum(w) if where is None else self.sparse_pair_sum(w)

    def sparse_pair_sum(self, w: np.ndarray) -> np.ndarray:
        """``pair_sum(w)`` for weights on a few of these pairs (a part of the triplets, such as the newly screened
        ones): the product over the pairs with w_p ≠ 0 only, unless this subset's sample form is cheaper for that
        many pairs."""
        used = np.flatnonzero(w)
        p = self.problem
        if not self.uses_samples or not _samples_are_cheaper(used.size, p.X.shape[0], p.dim):
            return p.weighted_pairs(self.pair_rows[used], w[used])
        return self.pair_sum(w)

    def loss_terms(self, M: np.ndarray, margins: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
        """(⟨H_t, M⟩, α = −ℓ'(⟨H_t, M⟩) (eq. (2)), Σ_t ℓ(⟨H_t, M⟩), Σ_t α_t H_t) over these triplets, the margins
        from the pair values at M (or ``margins``, already known at M): one compiled pass over the triplets
        (``compiled_kernels.triplet_terms``, pairs backend) instead of the dozen numpy passes of ``margins``,
        ``dual_alpha``, ``loss`` and ``combine``'s scatter-adds, then the one pair product."""
        gamma = self.problem.gamma
        if not kernels.USE_NUMBA or self.problem.backend != "pairs" or self.problem.torch is not None:
            x = self.margins(M) if margins is None else margins
            alpha = dual_alpha(x, gamma)
            return x, alpha, float(loss(x, gamma).sum()), self.combine(alpha)
        n = len(self)
        x, q = (np.empty(n), self.pair_values(M)) if margins is None else (margins, np.empty(0))
        alpha, w = np.empty(n), np.zeros(self.pair_rows.size)
        total = kernels.compiled().triplet_terms(x, q, self.diff, self.same, gamma, margins is None, alpha, w)
        return x, alpha, total, self.pair_sum(w)

    def pair_sum(self, w: np.ndarray) -> np.ndarray:
        """Σ_p w_p u_p u_pᵀ over this subset's pairs (diagonal M: Σ_p w_p u_p∘u_p), in the cheaper of the pair table
        and the sample form (pairs backend)."""
        X = self.problem.X
        if self.uses_samples and kernels.USE_NUMBA:  # Xᵀ (L X), L X from the pairs' ends: no pair table gathered
            LX = np.empty_like(X)
            kernels.compiled().laplacian_product(X, w, self.problem.triplets.pairs, self.pair_rows, LX)
            return X.T @ LX
        U = self.pair_table
        if self.problem.diagonal:
            return U.T @ w
        if self.uses_samples:
            return X.T @ (self.sample_form[1] @ (U * w[:, None]))
        return (U.T * w) @ U


# -- the reduced problem at one λ ----------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """Everything one pass over the active triplets gives at M: margins, α(M), S = Σ_A αH + H_L̂, P̃, ∇P̃."""

    M: np.ndarray
    margins: np.ndarray
    alpha: np.ndarray
    S: np.ndarray
    loss: float
    primal: float
    grad: np.ndarray


class ReducedProblem:
    """P̃_λ and D̃_λ for fixed screened sets L̂ (``in_L``) and R̂ (``in_R``) (digest §1.5)."""

    #: (M, ⟨H_t, M⟩ over ``active``) from the last pass over the active triplets, or None: a later evaluation
    #: at the same M (same object) reads the margins instead of recomputing them (the ledger's margins at
    #: M_{t−1} serve the path bounds and the solver's first iterate; a narrowed problem keeps its share).
    known: tuple[np.ndarray, np.ndarray] | None = None
    #: (M, margins, α, the active triplets' loss, Σ_A αH) of the last pass over all the active triplets: none of
    #: them depends on λ, so an unscreened path's first evaluation at λ_t (at M_{t−1}, the pass that confirmed
    #: λ_{t−1}'s solution) is read, not recomputed.
    _evaluated: tuple | None = None
    #: (L̂'s mask over ``active``, H_L̂) of the last ``narrowed`` of this problem (compiled kernels): the next one
    #: sums only the triplets that changed sides
    _last_narrowing: tuple[np.ndarray, np.ndarray] | None = None

    def __init__(self, problem: TripletProblem, in_L: np.ndarray, in_R: np.ndarray, *,
                 active: TripletSubset | None = None, H_L: np.ndarray | None = None,
                 counts: tuple[int, int] | None = None) -> None:
        self.problem = problem
        self._masks: tuple[np.ndarray, np.ndarray] | None = (in_L, in_R)
        self._mask_source = None  # () -> (in_L, in_R), called once if the masks over T are ever needed
        self.n_L, self.n_R = (int(np.count_nonzero(in_L)), int(np.count_nonzero(in_R))) if counts is None else counts
        self.active = problem.subset(np.flatnonzero(~(in_L | in_R))) if active is None else active
        self.H_L = problem.sum_over(in_L, self.n_L) if H_L is None else H_L

    @classmethod
    def assemble(cls, problem: TripletProblem, active: TripletSubset, H_L: np.ndarray, counts: tuple[int, int],
                 mask_source, known: tuple[np.ndarray, np.ndarray] | None = None) -> "ReducedProblem":
        """From parts already at hand (no pass over T): the active set, H_L̂, (|L̂|, |R̂|), a function that
        builds the masks over T when a caller asks for them, and optionally margins already computed."""
        rp = cls.__new__(cls)
        rp.problem, rp.active, rp.H_L, rp.known = problem, active, H_L, known
        rp.n_L, rp.n_R = counts
        rp._masks, rp._mask_source = None, mask_source
        return rp

    @classmethod
    def unscreened(cls, problem: TripletProblem) -> "ReducedProblem":
        none = np.zeros(problem.n_triplets, dtype=bool)
        return cls(problem, none, none, active=problem.everything, H_L=problem.zeros(), counts=(0, 0))

    def narrowed(self, to_L: np.ndarray, to_R: np.ndarray) -> "ReducedProblem":
        """This problem with more of its active triplets screened (masks over ``active``, as screening finds
        them): the new active set and H_L̂ come from the active triplets only, O(|A|); the masks over all of T
        are built only when asked for (once per λ, for the result)."""
        A = self.active

        def masks() -> tuple[np.ndarray, np.ndarray]:
            in_L, in_R = (m.copy() for m in self._screened_masks())
            in_L[A.idx[to_L]] = True
            in_R[A.idx[to_R]] = True
            return in_L, in_R
        if kernels.USE_NUMBA and self.problem.backend == "pairs" and self.problem.torch is None:
            # one compiled pass splits the active triplets (kept, to L̂, to R̂) and sums the pair weights of the
            # change in L̂ since this problem's last narrowing (a path without ranges narrows its one unscreened
            # problem at every λ, and few triplets change sides between two λ), or of all of the new L̂
            has_known = self.known is not None
            keep, w_L = np.empty(len(A), np.int64), np.zeros(A.pair_rows.size)
            known_kept = np.empty(len(A) if has_known else 0)
            was_L, H_L = self._last_narrowing or (np.zeros(len(A), bool), self.H_L)
            n_keep, new_L, new_R = kernels.compiled().split_screened(
                to_L, to_R, A.diff, A.same, self.known[1] if has_known else known_kept, has_known, keep,
                known_kept, was_L, w_L)
            keep = keep[:n_keep]
            known = (self.known[0], known_kept[:n_keep]) if has_known else None
            if w_L.any():
                H_L = H_L + A.sparse_pair_sum(w_L)
            self._last_narrowing = (was_L, H_L)  # was_L now holds to_L
        else:
            new_L, new_R = int(np.count_nonzero(to_L)), int(np.count_nonzero(to_R))
            H_L = self.H_L + A.combine(None, where=to_L) if new_L else self.H_L
            keep = ~(to_L | to_R)
            known = None if self.known is None else (self.known[0], self.known[1][keep])
        return ReducedProblem.assemble(self.problem, A.part(keep), H_L,
                                       (self.n_L + new_L, self.n_R + new_R), masks, known)

    def _screened_masks(self) -> tuple[np.ndarray, np.ndarray]:
        if self._masks is None:
            self._masks, self._mask_source = self._mask_source(), None
        return self._masks

    @property
    def in_L(self) -> np.ndarray:
        return self._screened_masks()[0]

    @property
    def in_R(self) -> np.ndarray:
        return self._screened_masks()[1]

    @property
    def n_screened(self) -> int:
        return self.n_L + self.n_R

    def evaluate(self, M: np.ndarray, lam: float, working: TripletSubset | None = None) -> Evaluation:
        """P̃ and its gradient −Σ_A α_t H_t − H_L̂ + λM (eq. (16)); ``working`` ⊆ A restricts the pass (active set)."""
        if working is None and self._evaluated is not None and self._evaluated[0] is M:
            _, x, alpha, part_loss, S = self._evaluated
            return self._evaluation(M, x, alpha, part_loss, S + self.H_L, lam)
        gamma = self.problem.gamma
        part = self.active if working is None else working
        known = working is None and self.known is not None and self.known[0] is M
        if self.problem.torch is not None and not known:  # the whole pass on the device (device.py)
            x, alpha, part_loss, S = self.problem.torch.evaluate(part.device_index, M, gamma)
        else:
            x, alpha, part_loss, S = part.loss_terms(M, self.known[1] if known else None)
        if working is None:
            self.known = (M, x)
            self._evaluated = (M, x, alpha, part_loss, S)
        return self._evaluation(M, x, alpha, part_loss, S + self.H_L, lam)

    def _evaluation(self, M, x, alpha, part_loss: float, S, lam: float) -> Evaluation:
        total_loss = part_loss + (1.0 - self.problem.gamma / 2) * self.n_L - inner(M, self.H_L)
        primal = total_loss + 0.5 * lam * inner(M, M)
        return Evaluation(M, x, alpha, S, total_loss, primal, lam * M - S)

    def dual(self, ev: Evaluation, lam: float) -> float:
        """D̃_λ(α) = −(γ/2)(‖α_A‖² + |L̂|) + 1ᵀα_A + |L̂| − (1/(2λ))‖[S]_+‖² with α = α(M) (digest §1.5, ambiguity 19)."""
        gamma = self.problem.gamma
        a = ev.alpha
        return (-0.5 * gamma * (float(a @ a) + self.n_L) + float(a.sum()) + self.n_L
                - self.problem.positive_part_norm_sq(ev.S) / (2.0 * lam))

    def gap(self, ev: Evaluation, lam: float) -> float:
        """Absolute duality gap P̃(M) − D̃(α(M)) ≥ 0."""
        return max(ev.primal - self.dual(ev, lam), 0.0)


def relative_gap(gap: float, primal: float) -> float:
    """(P̃ − D̃)/max(1, |P̃|), the default stopping measure (ambiguity 8)."""
    return gap / max(1.0, abs(primal))


# -- closed form at large λ and λ_max (digest §1.7) ----------------------------------------------------------------
def lambda_max(problem: TripletProblem) -> tuple[float, np.ndarray]:
    """(λ_L, K) with K = [Σ_t H_t]_+ and λ_L = max_t ⟨H_t, K⟩/(1 − γ): for λ ≥ λ_L, M* = K/λ exactly.

    If no margin ⟨H_t, K⟩ is positive, every triplet stays in L* (α_t = 1) at every λ > 0, so K/λ is optimal for
    all λ and λ_L = 0.
    """
    K, _ = problem.psd_split(problem.H_sum)
    top = float(problem.margins(K).max())
    return max(top, 0.0) / (1.0 - problem.gamma), K


# -- construction and validation -----------------------------------------------------------------------------------
def check_lambda(problem: TripletProblem, lam: float) -> None:
    """Refuse a λ so small that M* and the sphere radii (up to Σ_t ‖H_t‖/λ, squared) overflow float64."""
    floor = float(problem.h_norm.sum()) / _MAX_SOLUTION_SCALE
    if lam < floor:
        raise InputError(f"lam = {lam:g} is too small for this problem: below {floor:.3g} (Σ_t ‖H_t‖ / 1e150) the "
                         "solution's norm and the screening radii overflow float64; choose a larger lam")


def check_full_metric(d: int, device: str) -> None:
    """Refuse, before any work, a full d × d metric whose per-iteration eigendecomposition is impractical."""
    advice = "use diagonal=True (a diagonal M, App. B) or fewer features (e.g. PCA)"
    if device != "cuda" and d > MAX_FULL_DIM_CPU:
        raise InputError(f"a full metric on {d:,} features needs a {d:,} × {d:,} eigendecomposition per iteration "
                         f"(about {10 * d ** 3:.1e} flops, minutes each on a CPU; the limit is d ≤ {MAX_FULL_DIM_CPU:,}); "
                         f"{advice}, or device='cuda'")
    check_memory(_FULL_DIM_COPIES * 8.0 * d * d, f"a full {d:,} × {d:,} metric ({advice})")


def make_triplet_problem(X, y, *, k: int | None = None, gamma: float = 0.05, diagonal: bool = False,
                         scale: bool = True, name: str = "data", backend: str = "pairs",
                         device: str = "numpy") -> TripletProblem:
    """Validated problem from raw data: checks labels, NaNs and the memory budget before building triplets."""
    X = check_array(X, "X", allow_sparse=True)
    if hasattr(X, "toarray"):
        X = X.toarray()
    check_same_length(X, y)
    _, codes = check_labels(y, min_classes=2, min_per_class=2, what="triplet metric learning")
    if not 0 <= gamma < 1:
        raise InputError(f"gamma = {gamma} must be in [0, 1) (0 is the hinge loss)")
    if backend not in ("pairs", "triplets"):
        raise InputError(f"backend = {backend!r}; choose pairs or triplets")
    device = resolve_device(device)
    if backend == "triplets" and device != "numpy":
        raise InputError("backend = 'triplets' (the paper's per-triplet cost model) runs on numpy only; "
                         "use backend='pairs' with a torch device")
    if k is not None and k < 1:
        raise InputError(f"k = {k} must be at least 1 (or None for all triplets)")
    if not diagonal:
        check_full_metric(X.shape[1], device)
    X = scale_to_unit_box(X) if scale else X
    triplets = build_triplets(X, codes, k)
    return TripletProblem(X, codes, triplets, float(gamma), bool(diagonal), name, backend, device)

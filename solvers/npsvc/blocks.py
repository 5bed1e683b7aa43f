"""Per-class precomputation shared by TWSVM and K-NPSVC++ (Alg. 1 lines 9–10 and App. B, corrected).

For hyperplane l with own rows Ψ_l (n_l×p) and other rows Ψ_{−l} (n_{−l}×p):

    Q_l = (r₁I + Ψ_lᵀΨ_l)⁻¹ = (1/r₁)[I − Ψ_lᵀ(r₁I + Ψ_lΨ_lᵀ)⁻¹Ψ_l]     (eq. 14, Woodbury)
    R_l = Q_l Ψ_{−l}ᵀ   (p×n_{−l});    S_l = Ψ_{−l} Q_l Ψ_{−l}ᵀ   (n_{−l}×n_{−l})

The paper writes Q_{K,Ψ} = Ψ_{−l}ᵀQ and Q_{K,K} = Ψ_{−l}ᵀQΨ_{−l} (eq. 14, A.11), which have the
wrong shapes in either orientation convention; the forms above are the ones that make the dual
(16) equal the primal (checked against cvxpy in tests/npsvc/test_qp.py).

Q_l is applied through whichever Cholesky factor is smaller (p×p or n_l×n_l) and never stored
as a dense p×p inverse. S_l is formed explicitly when that is cheaper than applying it as
Ψ_{−l}Q_lΨ_{−l}ᵀ (p not small against n_{−l}) or small enough to hold (EXPLICIT_ROWS), from Gram blocks
with a kernel: with ΨΨᵀ = G and
r₁I + G_{l,l} = L_lL_lᵀ,
S_l = (1/r₁)[G_{−l,−l} − G_{−l,l}(r₁I + G_{l,l})⁻¹G_{l,−l}] = (1/r₁)[G_{−l,−l} − W_lᵀW_l],  W_l = L_l⁻¹G_{l,−l}:
one triangular solve and a symmetric rank-n_l product (numpy's WᵀW is BLAS syrk, exactly symmetric), in place
of two triangular solves and a general product (DNA, n_l ≈ 290, n_{−l} ≈ 910: 0.021 → 0.012 CPU s per class).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.linalg as sla
from scipy.linalg.lapack import dtrtrs

from .arrays import array_namespace
from .problem import KernelFeatures

# S_l is also formed explicitly below this many other-class rows (128 MiB), whatever the feature dimension: the
# box QP's Newton steps (qp.BoxQP.newton_step) need the matrix, and without them its BB steps took 1 300–1 500
# iterations per dual on ill-conditioned linear-kernel duals (digits, 300 rows, unstandardised, r₁ = 1).
EXPLICIT_ROWS = 4096


def lower_solve(L: np.ndarray, b: np.ndarray, transpose: bool = False) -> np.ndarray:
    """L⁻¹b (or L⁻ᵀb) for a lower triangular L and a vector b: LAPACK's trtrs directly for numpy (no per-call
    checks), torch's triangular solve for a tensor (the device path, knpsvc_torch.py)."""
    if isinstance(L, np.ndarray):
        return dtrtrs(L, b, lower=1, trans=int(transpose))[0]
    solve = array_namespace(L).linalg.solve_triangular
    return solve(L.mT if transpose else L, b[:, None], upper=transpose)[:, 0]


class RidgeInverse:
    """x ↦ (r I + AᵀA)⁻¹ x for A (k×p), through the smaller of the two Cholesky factors; ``AAt`` = AAᵀ when the
    caller has it (a kernel's Gram block G_ll: a gather instead of a k²p product, 0.015 → 0.0025 CPU s on DNA).
    With ``rows``, A is those rows of the matrix given, copied only if x ↦ (r I + AᵀA)⁻¹ x is ever applied."""

    def __init__(self, A: np.ndarray, r: float, AAt: np.ndarray | None = None, rows: np.ndarray | None = None):
        self._source, self._rows, self.r = A, rows, r
        k, p = (A.shape[0] if rows is None else len(rows)), A.shape[1]
        self.primal = p <= k
        if self.primal:
            small = self.A.T @ self.A
        else:
            small = self.A @ self.A.T if AAt is None else AAt
        small[np.diag_indices_from(small)] += r
        self.factor = sla.cho_factor(small, lower=True)

    @cached_property
    def A(self) -> np.ndarray:
        return self._source if self._rows is None else self._source[self._rows]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.primal:
            return sla.cho_solve(self.factor, x)
        return (x - self.A.T @ sla.cho_solve(self.factor, self.A @ x)) / self.r

    def dense(self) -> np.ndarray:
        return self(np.eye(self.A.shape[1]))


class ClassBlocks:
    """Q_l, and S_l as a matrix or an operator, for one hyperplane."""

    def __init__(self, features: KernelFeatures, own: np.ndarray, r1: float):
        Psi = self.Psi = features.Psi
        self.own_rows = np.flatnonzero(own)
        self.other_rows = np.flatnonzero(~own)
        gram = None if features.gram_matrix is None else features.gram(self.own_rows, self.own_rows)
        self.Q = RidgeInverse(Psi, r1, gram, rows=self.own_rows)
        n_other, p = len(self.other_rows), Psi.shape[1]
        self.S = None
        self.W = None  # L_l⁻¹G_{l,−l} of the Gram form, kept for K-NPSVC++'s U-step (ustep.py)
        if 2 * p >= n_other or n_other <= EXPLICIT_ROWS:
            self.S = self._explicit_S(features, r1)

    def _explicit_S(self, features: KernelFeatures, r1: float) -> np.ndarray:
        own, other = self.own_rows, self.other_rows
        if self.Q.primal:
            S = self.Psi_other @ self.Q(self.Psi_other.T)
            return 0.5 * (S + S.T)
        # Woodbury in Gram blocks: no p×p work at all
        self.W = sla.solve_triangular(self.Q.factor[0], features.gram(own, other), lower=True, check_finite=False)
        S = features.gram(other, other)
        S -= self.W.T @ self.W
        S /= r1
        return S

    @cached_property
    def Psi_other(self) -> np.ndarray:
        """Ψ_{−l}, copied only where S_l is an operator or the U-step goes class by class (linear kernel): with a
        kernel it is n_{−l} × n, and copying it cost 0.016 (digits) to 0.019 CPU s (USPS) per fit."""
        return self.Psi[self.other_rows]

    def matvec(self, lam: np.ndarray) -> np.ndarray:
        if self.S is not None:
            return self.S @ lam
        return self.Psi_other @ self.Q(self.Psi_other.T @ lam)

    def hyperplane(self, center: np.ndarray | float, lam: np.ndarray) -> np.ndarray:
        """u = Q_l(center + Ψ_{−l}ᵀλ): eq. (15) with center = r₁P̂v_l (0 for TWSVM), without copying Ψ_l or Ψ_{−l}.
        In Gram form, Q_l(c + Ψ_{−l}ᵀλ) = (c + Ψᵀy)/r₁ with y = λ on N_l and −L_l⁻ᵀ(L_l⁻¹Ψ_lc + W_lλ) on S_l
        (Woodbury, as in ustep.py); otherwise Ψ_{−l}ᵀλ = Ψᵀy with y = λ on N_l and 0 elsewhere."""
        y = array_namespace(self.Psi).zeros_like(self.Psi[:, 0])  # numpy, or torch (DeviceClassBlocks)
        y[self.other_rows] = lam
        if self.W is None:
            return self.Q(center + self.Psi.T @ y)
        L = self.Q.factor[0]
        rhs = self.W @ lam
        if np.ndim(center):
            rhs += lower_solve(L, (self.Psi @ center)[self.own_rows])
        y[self.own_rows] = -lower_solve(L, rhs, transpose=True)
        return (center + self.Psi.T @ y) / self.Q.r

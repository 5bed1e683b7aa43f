"""The K-NPSVC++ U-step's linear algebra for all K classes at once, through Gram blocks (eqs. 14–16).

With a kernel, Ψ is the lower Cholesky factor of G = K + εI and Q_l is applied through the n_l × n_l
factor of r₁I + G_ll (``ClassBlocks``' RidgeInverse, Woodbury). Per class the U-step needs

    q_l = r₁R_lᵀP̂v_l − 1 = Ψ_{−l}Q_lc_l − 1 = (Ψ_{−l}c_l − G_{−l,l}y_l)/r₁ − 1,  y_l = (r₁I + G_ll)⁻¹Ψ_lc_l
    û_l = Q_l(c_l + Ψ_{−l}ᵀλ_l) = (c_l + Ψᵀỹ_l)/r₁                                   (eq. 15)

with c_l = r₁P̂v_l, ỹ_l = λ_l on the rows N_l and −(r₁I + G_ll)⁻¹(Ψ_lc_l + G_{l,−l}λ_l) on S_l. Done
class by class, that is four products with an n_{−l} × n block of Ψ per class, each streaming a matrix
too large for the cache; here ΨC, ΨᵀY and ΨÛ are one triangular product each for all K columns, and
per class only the n_l × n_{−l} Gram block is touched (digits, n = 1 078, K = 10: the U-step outside
its QPs ≈ 0.16 → 0.05 CPU s over 10 outer iterations, cProfile).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dtrmm

from .blocks import ClassBlocks
from .problem import KernelFeatures


def lower_times(Psi: np.ndarray, B: np.ndarray, transpose: bool = False) -> np.ndarray:
    """Ψ B (or ΨᵀB) for the lower triangular Ψ through BLAS trmm: half the flops of a general product."""
    return dtrmm(1.0, Psi, B, side=0, lower=1, trans_a=int(transpose))


class GramUStep:
    """q_l and (Û, ΨÛ) for every class from the Gram blocks G_{l,−l}, kept once per class."""

    def __init__(self, features: KernelFeatures, blocks: list[ClassBlocks], r1: float):
        G = features.gram_matrix
        self.Psi, self.blocks, self.r1 = features.Psi, blocks, r1
        self.G_own_other = [G[np.ix_(b.own_rows, b.other_rows)] for b in blocks]

    @staticmethod
    def applies(features: KernelFeatures, blocks: list[ClassBlocks]) -> bool:
        """A kernel's triangular Ψ with every Q_l in Gram form (always so for a kernel: n_l < p = n)."""
        return features.chol is not None and not any(b.Q.primal for b in blocks)

    def linear_terms(self, C: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        """(ΨC, [q_l]) for the centres C = r₁P̂V (p × K): the QPs' linear terms r₁R_lᵀP̂v_l − 1 (eq. 16)."""
        Z = lower_times(self.Psi, C)
        terms = []
        for l, (b, G_lo) in enumerate(zip(self.blocks, self.G_own_other)):
            y = sla.cho_solve(b.Q.factor, Z[b.own_rows, l], check_finite=False)
            terms.append((Z[b.other_rows, l] - G_lo.T @ y) / self.r1 - 1.0)
        return Z, terms

    def hyperplanes(self, C: np.ndarray, Z: np.ndarray, lambdas: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(Û, ΨÛ) from the duals λ_l (eq. 15), with Z = ΨC from ``linear_terms``."""
        Y = np.empty_like(Z)
        for l, (b, G_lo, lam) in enumerate(zip(self.blocks, self.G_own_other, lambdas)):
            Y[b.other_rows, l] = lam
            Y[b.own_rows, l] = -sla.cho_solve(b.Q.factor, Z[b.own_rows, l] + G_lo @ lam, check_finite=False)
        U = (C + lower_times(self.Psi, Y, transpose=True)) / self.r1
        return U, lower_times(self.Psi, U)

"""The K-NPSVC++ U-step's linear algebra for all K classes at once, through Gram blocks (eqs. 14–16).

With a kernel, Ψ is the lower Cholesky factor of G = K + εI and Q_l is applied through the n_l × n_l
factor L_l of r₁I + G_ll = L_lL_lᵀ (``ClassBlocks``' RidgeInverse, Woodbury), with W_l = L_l⁻¹G_{l,−l}, which
``ClassBlocks`` keeps from building S_l. Per class the U-step needs

    q_l = r₁R_lᵀP̂v_l − 1 = Ψ_{−l}Q_lc_l − 1 = (Ψ_{−l}c_l − W_lᵀa_l)/r₁ − 1,  a_l = L_l⁻¹Ψ_lc_l
    û_l = Q_l(c_l + Ψ_{−l}ᵀλ_l) = (c_l + Ψᵀỹ_l)/r₁                                   (eq. 15)

with c_l = r₁P̂v_l, ỹ_l = λ_l on the rows N_l and −L_l⁻ᵀ(a_l + W_lλ_l) on S_l. Done
class by class, that is four products with an n_{−l} × n block of Ψ per class, each streaming a matrix
too large for the cache; here ΨC, ΨᵀY and ΨÛ are one triangular product each for all K columns (ΨC comes
free when the caller has ΨP̂ from the Laplacian term: ΨC = r₁(ΨP̂)V), and per class only W_l (n_l × n_{−l})
and a triangular solve with L_l are touched (digits, n = 1 078, K = 10: the U-step outside its QPs
≈ 0.16 → 0.05 CPU s over 10 outer iterations, cProfile).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dtrmm

from .arrays import array_namespace
from .blocks import ClassBlocks, lower_solve
from .problem import KernelFeatures


def lower_times(Psi: np.ndarray, B: np.ndarray, transpose: bool = False) -> np.ndarray:
    """Ψ B (or ΨᵀB) for the lower triangular Ψ through BLAS trmm: half the flops of a general product.
    A torch tensor (the device path) takes a general product: n²K flops, no trmm for a matrix there."""
    if not isinstance(Psi, np.ndarray):
        return (Psi.mT if transpose else Psi) @ B
    return dtrmm(1.0, Psi, B, side=0, lower=1, trans_a=int(transpose))


class GramUStep:
    """q_l and (Û, ΨÛ) for every class from the Gram blocks G_{l,−l}, kept once per class."""

    def __init__(self, features: KernelFeatures, blocks: list[ClassBlocks], r1: float):
        self.Psi, self.blocks, self.r1 = features.Psi, blocks, r1

    @staticmethod
    def applies(features: KernelFeatures, blocks: list[ClassBlocks]) -> bool:
        """A kernel's triangular Ψ with every Q_l and S_l in Gram form (always so for a kernel: n_l < p = n)."""
        return features.chol is not None and all(b.W is not None for b in blocks)

    def linear_terms(self, C: np.ndarray, Z: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray], list]:
        """(ΨC, [q_l], [a_l]) for the centres C = r₁P̂V (p × K): the QPs' linear terms r₁R_lᵀP̂v_l − 1 (eq. 16);
        Z = ΨC when the caller has it."""
        Z = lower_times(self.Psi, C) if Z is None else Z
        terms, solved = [], []
        for l, b in enumerate(self.blocks):
            a = lower_solve(b.Q.factor[0], Z[b.own_rows, l])
            terms.append((Z[b.other_rows, l] - b.W.T @ a) / self.r1 - 1.0)
            solved.append(a)
        return Z, terms, solved

    def hyperplanes(self, C: np.ndarray, solved: list, lambdas: list[np.ndarray],
                    other_scores: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(Û, ΨÛ) from the duals λ_l (eq. 15), with the a_l of ``linear_terms``.

        ΨÛ needs no product with Ψ: on the rows N_l, Ψ_{−l}û_l = Ψ_{−l}Q_l(c_l + Ψ_{−l}ᵀλ_l) = (q_l + 1) + S_lλ_l, the
        QP's gradient plus one (``other_scores``); on S_l, Ψ_lQ_l = (r₁I + G_ll)⁻¹Ψ_l gives
        Ψ_lû_l = L_l⁻ᵀ(a_l + W_lλ_l) = −ỹ_l. One triangular product per U-step instead of two."""
        xp = array_namespace(C)  # numpy, or torch on the device path
        Y, F = xp.empty_like(C), xp.empty_like(C)
        for l, (b, a, lam, scores) in enumerate(zip(self.blocks, solved, lambdas, other_scores)):
            own_scores = lower_solve(b.Q.factor[0], a + b.W @ lam, transpose=True)  # Ψ_lû_l = −ỹ_l on S_l
            Y[b.other_rows, l], Y[b.own_rows, l] = lam, -own_scores
            F[b.other_rows, l], F[b.own_rows, l] = scores, own_scores
        return (C + lower_times(self.Psi, Y, transpose=True)) / self.r1, F

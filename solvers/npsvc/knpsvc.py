"""K-NPSVC++: the kernel machine of seed 004 (Algorithm 1, with the errata of App. B fixed).

Hypothesis (12): f_l(x) = ⟨w_l, φ(x)⟩ + v_lᵀz(x) = û_lᵀψ(x) with z(x) = P̂ᵀψ(x), P̂ᵀP̂ = I (d columns).
Per-class objective (the "eventual objective" after eq. 13):

    J_l = ½‖Ψ_l û_l‖² + c Σ_{N_l}[1 − ψ_iᵀû_l]₊ + (r₁/2)‖û_l − P̂v_l‖² + (r₂/2)‖v_l‖² + (μ/2)Tr(P̂ᵀMP̂),

M = ΨᵀLΨ with L the normalised Laplacian of the kNN graph (A.12). One outer iteration:

1. U-step (eqs. 14–16, corrected): λ_l = argmin_{0≤λ≤c} ½λᵀS_lλ + (r₁R_lᵀP̂v_l − 1)ᵀλ and
   û_l = Q_l(r₁P̂v_l + Ψ_{−l}ᵀλ_l). The paper's linear term lacks the factor r₁ (eq. 16, A.9)
   and its A.5 has the wrong sign on λ; both were re-derived from the Lagrangian here.
2. V-step (eq. 17): V = r₁P̂ᵀÛ/(r₁ + r₂).
3. P-step (eqs. 18–19): generalised power iteration P ← π_St(HP + E), H = σI − μM,
   E = r₁Û diag(τ)Vᵀ. It increases Tr(PᵀHP) + 2Tr(PᵀE), i.e. it decreases τᵀJ (the paper's
   "converges to the minimum of (19)" should read maximum).
4. τ-step (eq. 20): τ* = argmin_{τ∈Δ} ½‖Σ τ_l ∇^St J_l‖² − γτᵀJ with the Riemannian gradient
   ∇^St J_l = μ(I − P̂P̂ᵀ)MP̂ + r₁(P̂v_l û_lᵀP̂ − û_l v_lᵀ), then τ ← (1 − β)τ + βτ*
   (β = 1 is the paper's Algorithm 1; momentum is eq. 26, which the paper states for D-NPSVC++).
5. Extra descent on P̂ (Thm. 2, Alg. 1 line 20): P̂ ← π_St(P̂ − η Σ τ_l ∇^St J_l).

History rows carry each J_l, primal max_l J_l (8), dual τᵀJ (9), their gap, τ, the Pareto
stationarity ‖Σ τ_l ∇^St J_l‖_F and train/test accuracy. The stopping measure ``optimality`` is the larger of
``relative_gap`` = (max J − τᵀJ)/max(1, max J), the paper's convergence picture (Fig. 2a), and ``primal_change`` =
|Δ max J|/max(1, max J) over the last iteration. The gap alone is no optimality test: every run ends with τ on
the vertex of the class with the largest J_l, and the gap then only measures τ's distance to that vertex, which
contracts by 1 − β per iteration whatever the hyperplanes do. At β = 1 it was exactly 0 after one or two
iterations, 64 % (DNA) and 4.5 % (digits) above the max J that later iterations reach
(docs/benchmarks/npsvc.md, item 10 of the disagreements).
"""
from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.neighbors import kneighbors_graph

from ..core import HistoryRecorder, InputError, Param, Result, relative_change, validate_params
from .arrays import array_namespace, to_host
from .blocks import ClassBlocks
from .kernel_params import DEVICE, C, R1
from .problem import MAX_WEIGHT, NPSVCProblem, chebyshev_columns, class_objectives, mean_squared_distance
from .qp import BoxQP, simplex_qp
from .ustep import GramUStep, lower_times

OFFICIAL_MAX_ITER = 10  # the official code's outer iterations (digest §3.6): the estimator's default, Table 2's budget

STATE_PARAMS = (  # Algorithm 1's parameters: what KNPSVCState takes
    C, R1,
    Param("r2", 0.1, float, low=0, low_strict=True, high=MAX_WEIGHT, log=True, ui_range=(1e-4, 1e3),
          help="ridge on the weights v_l of the learned features (eq. 13)", symbol="r_2"),
    Param("mu", 1e-3, float, low=0, high=MAX_WEIGHT, ui_range=(0.0, 10.0),
          help="manifold regularisation of z on the kNN graph (eq. 13)", symbol=r"\mu"),
    Param("d", 0, int, low=0, high=4096, help="dimension of the learned features z; 0 = min(2K, p − 1)", symbol="d"),
    Param("gamma", 0.1, float, low=0, high=MAX_WEIGHT, ui_range=(0.0, 100.0),
          help="trade-off between Pareto stationarity and dual ascent in the τ-step (eq. 20)", symbol=r"\gamma"),
    Param("eta", 0.1, float, low=0, high=MAX_WEIGHT, ui_range=(0.0, 1.0),
          help="step of the extra descent on P̂ (Alg. 1 line 20)", symbol=r"\eta"),
    Param("beta", 0.75, float, low=0, low_strict=True, high=1,
          help="momentum τ ← (1 − β)τ + βτ* (eq. 26; 1 = the paper's Alg. 1, 0.75 = the official code); the duality "
               "gap tracks τ reaching its vertex, shrinking by 1 − β per iteration (at 1 it was 0 after 1–2 "
               "iterations on DNA and digits), which is why the fit also waits for max J to stop moving",
          symbol=r"\beta"),
    Param("gpi_iter", 25, int, low=1, high=1000, help="generalised power iterations per P-step (Nie et al. 2017)"),
    Param("inner_tol", 1e-6, float, low=0, low_strict=True, log=True, ui_range=(1e-12, 1e-2),
          help="KKT residual at which each U-step box QP stops"),
    Param("seed", 0, int, low=0, high=2**31 - 1, help="seed of the random P̂₀, V₀, Û₀ (§3.3)"),
)
KNPSVC_PARAMS = (*STATE_PARAMS, DEVICE)


# -- pieces of one iteration --------------------------------------------------
def normalized_laplacian(X: np.ndarray) -> sp.csr_matrix:
    """L = I − D^{−½}GD^{−½} of the kNN graph (A.12): G_ij = exp(−‖x_i − x_j‖²/t) when i ∈ N_k(j) or
    j ∈ N_k(i), k = ⌊log₂ n⌋, t the mean pairwise squared distance."""
    n = X.shape[0]
    k = max(1, min(int(np.floor(np.log2(n))), n - 1))
    dist = kneighbors_graph(X, k, mode="distance", include_self=False)
    t = max(mean_squared_distance(X), 1e-300)
    G = dist.copy()
    G.data = np.exp(-(G.data**2) / t)
    G = G.maximum(G.T).tocsr()
    deg = np.asarray(G.sum(1)).ravel()
    inv_sqrt = sp.diags(1.0 / np.sqrt(np.maximum(deg, 1e-300)))
    return (sp.identity(n, format="csr") - inv_sqrt @ G @ inv_sqrt).tocsr()


class LaplacianTerm:
    """M = ΨᵀLΨ (Alg. 1 line 9), applied as M P = Ψᵀ(L(ΨP)) when Ψ is the kernel's lower Cholesky factor.

    Every use of M is a product M P̂ (GPI, J_l's manifold term, the Riemannian gradient) or a largest
    eigenvalue (GPI's σ), so the n × n matrix is never formed: two BLAS trmm on the n × d block cost the
    flops of the dense M P̂ (n²d each) and save building M (n³) and its n² memory (digits, n = 1 078:
    the trmm build measured 0.06 CPU s). For the linear kernel (Ψ = X, p ≪ n) the p × p matrix is formed once.
    """

    def __init__(self, X: np.ndarray, Psi: np.ndarray, lower_triangular: bool = False):
        self.L = normalized_laplacian(X)
        self.Psi = Psi
        self.matrix = None if lower_triangular else _symmetric(Psi.T @ np.asarray(self.L @ Psi))
        self.shape = (Psi.shape[1], Psi.shape[1])

    def __matmul__(self, P: np.ndarray) -> np.ndarray:
        if self.matrix is not None:
            return self.matrix @ P
        vector = P.ndim == 1
        out = self.products(P[:, None] if vector else P)[0]
        return out[:, 0] if vector else out

    def products(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """(M P, ΨP) for a p × d block P; ΨP is the inner product of Ψᵀ(L(ΨP)) (None when M is a matrix).
        The U-step reuses it: its centres' ΨC = r₁(ΨP̂)V need no triangular product of their own."""
        if self.matrix is not None:
            return self.matrix @ P, None
        PsiP = lower_times(self.Psi, P)
        return lower_times(self.Psi, self.L @ PsiP, transpose=True), PsiP  # sparse L: scipy's, or torch's

    def dense(self) -> np.ndarray:
        return self.matrix if self.matrix is not None else _symmetric(self @ np.eye(self.shape[0]))


def _symmetric(M: np.ndarray) -> np.ndarray:
    return 0.5 * (M + M.T)


def largest_eigenvalue(M: LaplacianTerm) -> float:
    n = M.shape[0]
    if n <= 64:
        return float(np.linalg.eigvalsh(M.dense())[-1])
    operator = LinearOperator((n, n), matvec=lambda v: M @ np.ravel(v), dtype=float)
    # ncv = 5 Lanczos vectors instead of ARPACK's default 20: M's top eigenvalue is well separated, so a 5-step
    # factorization has converged (6–9 products M v instead of 21 on DNA, digits and USPS, each two passes over Ψ;
    # λ_max equal to 5e-16 relative; ARPACK restarts where it has not, so a closer eigenvalue costs time, not accuracy)
    return float(eigsh(operator, k=1, which="LA", return_eigenvectors=False, tol=1e-6, ncv=5)[0])


def polar(A: np.ndarray) -> np.ndarray:
    """π_St(A) = U_A V_Aᵀ = A(AᵀA)^{−½}: the nearest matrix with orthonormal columns.

    Through the d × d eigendecomposition of AᵀA when A is well conditioned (its error grows like ε·cond(A)²:
    ≤ 1e-10 for cond(A) ≤ 1e3; GPI's A had cond 80–160 on DNA and digits), else the thin SVD. The SVD of the
    p × d matrix cost 0.40 ms on digits (p = 1 078, d = 20) against 0.08 ms, ≈ 45 times per fit.
    A numpy array or a torch tensor (the device path).
    """
    linalg = array_namespace(A).linalg
    w, Q = linalg.eigh(A.T @ A)
    if w[0] > 1e-6 * w[-1]:
        return A @ ((Q / w**0.5) @ Q.T)
    U, _, Vt = linalg.svd(A, full_matrices=False)
    return U @ Vt


# GPI's stopping test once the outer iteration has converged (see ``gpi``): the digest's "change below 1e-8", which
# 25 steps (gpi_iter, the official code's fixed count) rarely reach, so late P-steps run as the official code's do.
# Stopping at 1e-5 instead (measured): after the 10 outer iterations of a default fit max J was 1.8e-4 (DNA) and 2.9e-4
# (digits) above the official P-steps', and after 40 iterations it was still above where those were after 10; over
# Table 2's 10 DNA splits K-NPSVC++ lost 0.16 points (95.09 vs 95.25 %, paired p = 0.03) for 19–22 % less time
# (docs/benchmarks/npsvc.md, item 10 of the disagreements).
GPI_RTOL = 1e-8
# Early P-steps are solved loosely: GPI stops at a relative rise ≤ max(GPI_RTOL, GPI_PROGRESS · gap_{k−1}), with
# gap_{k−1} the relative duality gap of the last outer iterate. Each GPI step increases its objective whatever the
# tolerance, so an early stop keeps the P-step a descent step for τᵀJ (an inexact block step), and the outer
# stopping test is evaluated exactly at every iterate. τ still moves in those iterations, and the loose early steps
# cost no accuracy: K-NPSVC++ matched 25 steps' mean accuracy over 10 splits (DNA 95.25 / 95.25, digits 97.97 /
# 97.94, USPS 93.26 / 93.24 %) in 60–62 % of the fit's time. The gap contracts by 1 − β per iteration, so from
# iteration ≈ 8 on the P-steps are solved to GPI_RTOL.
GPI_PROGRESS = 0.1


def gpi(P: np.ndarray, MP_fn, sigma: float, E: np.ndarray, n_iter: int, rtol: float = GPI_RTOL) -> np.ndarray:
    """max_{PᵀP=I} Tr(PᵀHP) + 2Tr(PᵀE), H = σI − μM, by P ← π_St(HP + E) (eq. 19).

    The objective ⟨P, HP + E⟩ + ⟨P, E⟩ comes free with the next iterate's HP + E; the loop stops
    when it rises by less than ``rtol`` (relative), or after ``n_iter`` steps (the code's 25).
    Every step increases it, so stopping early keeps the P-step a descent step for τᵀJ.
    MP_fn(P) is called for the P returned when the loop stops early (KNPSVCState caches it for the τ-step).
    """
    previous = -np.inf
    for _ in range(n_iter):
        MP = MP_fn(P)
        A = sigma * P - MP + E
        value = float((P * A).sum() + (P * E).sum())
        if value - previous <= rtol * max(1.0, abs(value)):
            return P
        previous = value
        P = polar(A)
    return P


def objectives(Psi, own, U, V, P, M, c, r1, r2, mu, F=None, MP=None) -> np.ndarray:
    """J_l for every class (the eventual objective after eq. 13); F = ΨÛ and MP = M P̂ when already known.
    numpy arrays, or torch tensors on one device (the device path: the same function, knpsvc_torch.py)."""
    W = U - P @ V  # ŵ_l = û_l − P̂v_l
    manifold = 0.0 if M is None else 0.5 * mu * float((P * (M @ P if MP is None else MP)).sum())
    return (class_objectives(Psi @ U if F is None else F, own, c) + 0.5 * r1 * (W * W).sum(0) + 0.5 * r2 * (V * V).sum(0)
            + manifold)


class RiemannianGradients:
    """∇^St J_l = Ω_l + π for every class (§3.4 step 5), kept in factored form.

    Ω_l = r₁(P̂v_l û_lᵀP̂ − û_l v_lᵀ) = r₁(a_l b_lᵀ − û_l v_lᵀ) with a_l = P̂v_l (p) and b_l = P̂ᵀû_l (d), and
    π = μ(I − P̂P̂ᵀ)MP̂ (p×d). The paper's Euclidean gradient omits r₁P̂v_lv_lᵀ, which the projection
    (∇P̂ᵀ − P̂∇ᵀ)P̂ removes anyway. Each Ω_l has rank 2, so the τ-step's K × K Gram matrix and ⟨Ω_l, π⟩ come from
    p × K and d × K products, never from the K × p × d array (digits: 0.63 vs 2.7 ms per τ-step).
    MP = M P̂ when known.
    """

    def __init__(self, U, V, P, M, mu, r1, MP=None):
        self.U, self.V, self.r1 = U, V, r1
        self.A, self.B = P @ V, P.T @ U
        if M is None:
            self.pi = array_namespace(P).zeros_like(P)
        else:
            MP = M @ P if MP is None else MP
            self.pi = mu * (MP - P @ (P.T @ MP))

    def gram(self) -> tuple[np.ndarray, np.ndarray]:
        """(⟨Ω_l, Ω_m⟩ for all l, m; ⟨Ω_l, π⟩ for all l), by ⟨abᵀ, cdᵀ⟩ = (aᵀc)(bᵀd) and ⟨abᵀ, π⟩ = aᵀπb."""
        A, B, U, V, pi, r1 = self.A, self.B, self.U, self.V, self.pi, self.r1
        mixed = (A.T @ U) * (B.T @ V)  # ⟨a_l b_lᵀ, u_m v_mᵀ⟩; its transpose is ⟨u_l v_lᵀ, a_m b_mᵀ⟩
        G = r1 * r1 * ((A.T @ A) * (B.T @ B) - mixed - mixed.T + (U.T @ U) * (V.T @ V))
        cross = r1 * (((A.T @ pi) * B.T).sum(1) - ((U.T @ pi) * V.T).sum(1))
        return G, cross

    def combined(self, tau: np.ndarray) -> np.ndarray:
        """Σ_l τ_l ∇^St J_l = r₁(A diag(τ)Bᵀ − U diag(τ)Vᵀ) + π (Σ τ = 1)."""
        return self.r1 * ((self.A * tau) @ self.B.T - (self.U * tau) @ self.V.T) + self.pi


def hyperplane_norms(U, V, P) -> np.ndarray:
    """√(‖û_l − P̂v_l‖² + ‖v_l‖²): the norm of the stacked normal [w_l; v_l] in eq. (21)."""
    W = U - P @ V
    return array_namespace(W).sqrt((W * W).sum(0) + (V * V).sum(0))


# -- the algorithm ------------------------------------------------------------
def resolve_dimension(d: int, p: int, K: int) -> int:
    d = d or max(1, min(2 * K, p - 1))
    if d > p:
        raise InputError(f"d = {d} exceeds the feature dimension p = {p}; choose d ≤ {p}")
    return d


class KNPSVCState:
    """The iterate (Û, V, P̂, τ, λ) and the precomputed blocks; one method per step of Algorithm 1.

    The steps are written once for numpy arrays and torch tensors; a subclass on a torch device
    (knpsvc_torch.DeviceKNPSVCState) overrides only the precomputation, the conversions and the two QP solvers
    below, so its iterates are these up to rounding."""

    box_qp = BoxQP  # the U-step's dual (eq. 16)
    tau_qp = staticmethod(simplex_qp)  # the τ-step's QP (eq. 20)

    def __init__(self, problem: NPSVCProblem, *, c, r1, r2, mu, d, gamma, eta, beta, gpi_iter, inner_tol, seed):
        K = problem.n_classes
        d = resolve_dimension(d, problem.feature_dim, K)
        self.problem, self.K = problem, K
        self.c, self.r1, self.r2, self.mu, self.gamma, self.eta, self.beta = c, r1, r2, mu, gamma, eta, beta
        self.gpi_iter, self.inner_tol = gpi_iter, inner_tol
        self._precompute(problem)
        p = self.Psi.shape[1]
        self.sigma = mu * largest_eigenvalue(self._eigen_operator()) if self.M is not None else 0.0
        # Initialisation (§3.3): P̂₀ orthonormal, V₀ and Û₀ Gaussian, τ₀ uniform (drawn on the host on every device).
        rng = np.random.default_rng(seed)
        self.P = self._array(polar(rng.standard_normal((p, d))))
        self.V = self._array(rng.standard_normal((d, K)))
        self.U = self._array(rng.standard_normal((p, K)))
        self.tau = self._array(np.full(K, 1.0 / K))
        self.lambdas: list[np.ndarray | None] = [None] * K
        self._S_lambdas: list[np.ndarray | None] = [None] * K  # S_lλ_l: the next u-step's warm start needs it
        self.qp_iters = 0
        self.stationarity = float("nan")
        self.F = self._scores(self.U)  # ΨÛ, refreshed by the u-step (the only step that moves Û)
        self._MP: tuple | None = None  # (P̂, M P̂, ΨP̂) for the last P̂ at which M P̂ was computed

    def _precompute(self, problem: NPSVCProblem) -> None:
        """Ψ, the own-row masks, the class blocks and M (Alg. 1 lines 9–10), with numpy."""
        features = problem.features
        self.Psi, self.own = features.Psi, problem.own_mask()
        self.blocks = [ClassBlocks(features, self.own[:, l], self.r1) for l in range(self.K)]
        self.gram = GramUStep(features, self.blocks, self.r1) if GramUStep.applies(features, self.blocks) else None
        self.M = LaplacianTerm(problem.X_train, self.Psi, features.chol is not None) if self.mu > 0 else None

    def _eigen_operator(self) -> LaplacianTerm:
        """M as ``largest_eigenvalue`` takes it (numpy vectors in and out)."""
        return self.M

    def _array(self, A: np.ndarray) -> np.ndarray:
        """A host array as this state's arrays are kept (here: as is)."""
        return A

    def _scores(self, U: np.ndarray) -> np.ndarray:
        """ΨU; a kernel's Ψ is triangular: trmm, half the flops."""
        return lower_times(self.Psi, U) if self.problem.features.chol is not None else self.Psi @ U

    def accuracies(self) -> tuple[float, float]:
        """Train and test accuracy of the current hyperplanes (eq. 21)."""
        return self.problem.accuracies(self.U, self.norms(), self.F)

    def solution(self) -> dict:
        """The iterate as numpy arrays, for the Result."""
        return {"U": to_host(self.U), "V": to_host(self.V), "P": to_host(self.P), "tau": to_host(self.tau),
                "norms": to_host(self.norms()), "lambdas": [to_host(lam) for lam in self.lambdas]}

    def objectives(self) -> np.ndarray:
        return objectives(self.Psi, self.own, self.U, self.V, self.P, self.M, self.c, self.r1, self.r2, self.mu,
                          F=self.F, MP=self.MP())

    def MP(self) -> np.ndarray | None:
        """M P̂ for the current P̂, computed once per P̂: the objectives, the τ-step and the next P-step's first
        GPI iteration all need it (and the U-step ΨP̂, see ``products``)."""
        return None if self.M is None else self._products(self.P)[1]

    def _products(self, P: np.ndarray) -> tuple:
        if self._MP is None or self._MP[0] is not P:
            self._MP = (P, *self.M.products(P))
        return self._MP

    def _PsiP(self) -> np.ndarray | None:
        """ΨP̂ for the current P̂ if the Laplacian term has computed it, else None."""
        return self._MP[2] if self._MP is not None and self._MP[0] is self.P else None

    def u_step(self) -> None:
        """Eqs. (14)–(16) corrected, each box QP warm-started from the previous λ_l."""
        C = self.r1 * (self.P @ self.V)  # centres r₁P̂v_l
        if self.gram is not None:  # a kernel: all classes' products at once (ustep.py)
            PsiP = self._PsiP()
            _, terms, solved = self.gram.linear_terms(C, None if PsiP is None else PsiP @ (self.r1 * self.V))
        else:
            terms = [b.Psi_other @ b.Q(C[:, l]) - 1.0 for l, b in enumerate(self.blocks)]  # r₁R_lᵀP̂v_l − 1
        self.qp_iters = 0
        qps = []
        for l, (b, q) in enumerate(zip(self.blocks, terms)):
            qps.append(self.box_qp(b.matvec, q, self.c, self.lambdas[l], Sx0=self._S_lambdas[l])
                       .solve(self.inner_tol, S=b.S))
            self.lambdas[l], self._S_lambdas[l] = qps[l].x, qps[l].Sx
            self.qp_iters += qps[l].n_iter
        if self.gram is not None:  # Ψ_{−l}û_l = ∇_l + 1 at each QP's solution (GramUStep.hyperplanes)
            self.U, self.F = self.gram.hyperplanes(C, solved, self.lambdas, [qp.grad + 1.0 for qp in qps])
        else:
            self.U = np.column_stack([b.hyperplane(C[:, l], lam)
                                      for l, (b, lam) in enumerate(zip(self.blocks, self.lambdas))])
            self.F = self.Psi @ self.U

    def v_step(self) -> None:
        """Eq. (17)."""
        self.V = (self.r1 / (self.r1 + self.r2)) * (self.P.T @ self.U)

    def p_step(self, rtol: float = GPI_RTOL) -> None:
        """GPI on eq. (19) with the current τ, stopped at a relative rise of its objective ≤ ``rtol``."""
        E = self.r1 * (self.U * self.tau) @ self.V.T
        self.P = gpi(self.P, self._mu_MP, self.sigma, E, self.gpi_iter, rtol)

    def _mu_MP(self, P: np.ndarray):
        return 0.0 if self.M is None else self.mu * self._products(P)[1]

    def tau_step(self) -> np.ndarray:
        """Eq. (20) with momentum (eq. 26); returns the common direction Σ τ_l ∇^St J_l."""
        J = self.objectives()
        gradients = RiemannianGradients(self.U, self.V, self.P, self.M, self.mu, self.r1, MP=self.MP())
        gram, cross = gradients.gram()
        tau_star = self.tau_qp(gram, cross - self.gamma * J, self.tau)
        self.tau = (1.0 - self.beta) * self.tau + self.beta * tau_star
        direction = gradients.combined(self.tau)
        self.stationarity = float(array_namespace(direction).linalg.norm(direction))  # Frobenius
        return direction

    def descent_step(self, direction: np.ndarray) -> None:
        """P̂ ← π_St(P̂ − η Σ τ_l ∇^St J_l) (Thm. 2, Alg. 1 line 20)."""
        if self.eta > 0:
            self.P = polar(self.P - self.eta * direction)

    def iterate(self, gap: float = 0.0) -> None:
        """One outer iteration; ``gap`` is the last iterate's relative duality gap, to which the P-step's tolerance is
        tied (GPI_PROGRESS). The U-step's QPs stay at ``inner_tol``: tied to the gap as well, they saved 4–24 of
        70–362 QP iterations and no time (measured)."""
        self.u_step()
        self.v_step()
        self.p_step(max(GPI_RTOL, GPI_PROGRESS * gap))
        self.descent_step(self.tau_step())

    def norms(self) -> np.ndarray:
        return hyperplane_norms(self.U, self.V, self.P)


def run_knpsvc(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, **params) -> Result:
    """Algorithm 1 with numpy (kernel_runs.run_knpsvc also takes ``device``, for the torch path)."""
    params = validate_params(STATE_PARAMS, params)
    problem.features  # kernel and Cholesky: problem set-up, outside the solver clock
    return iterate_knpsvc(problem, lambda: KNPSVCState(problem, **params), tol=tol, max_iter=max_iter,
                          time_limit=time_limit, callback=callback)


def iterate_knpsvc(problem: NPSVCProblem, make_state, *, tol, max_iter, time_limit=None, callback=None) -> Result:
    """Algorithm 1's outer loop and its history from ``make_state()`` (its precomputation is on the solver clock)."""
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="optimality")
    state = make_state()

    def record(k: int) -> str | None:
        J, tau = to_host(state.objectives()), to_host(state.tau)
        with rec.excluded():
            train_acc, test_acc = state.accuracies()
        primal = float(J.max())
        gap = (primal - float(tau @ J)) / max(1.0, abs(primal))
        # row 0 (the random start) has no previous iterate: its change counts as 1, so no fit stops before a step.
        # Not named "progress": the page's progress bar reads that column as the share of the work done.
        change = relative_change(primal, rec.rows[-1]["objective"]) if rec.rows else 1.0
        return rec.record(k, objective=primal, optimality=max(gap, change), relative_gap=gap, primal_change=change,
                          stationarity=state.stationarity, train_acc=train_acc, test_acc=test_acc,
                          qp_iters=state.qp_iters, **chebyshev_columns(J, tau))

    if not record(0):  # row 0: the random initial point
        for t in itertools.count(1):
            state.iterate(rec.rows[-1]["relative_gap"])  # GPI's tolerance follows the last iterate's gap (GPI_PROGRESS)
            if record(t):
                break
    return rec.result(state.solution(), n_classes=state.K, d=state.P.shape[1])

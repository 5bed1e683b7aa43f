"""K-NPSVC++ and TWSVM with the heavy work in torch on one device (a GPU; tests run it on the CPU).

Everything that grows with n lives on the device, in float64: the kernel matrix G = K + εI (ε as
problem.KernelFeatures), its lower Cholesky factor Ψ (Alg. 1 lines 3–8), ψ(X_test) = Ψ⁻¹k(X, X_test), per class
the factor L_l of r₁I + G_ll, W_l = L_l⁻¹G_{l,−l} and S_l = (G_{−l,−l} − W_lᵀW_l)/r₁ (eq. 14, blocks.py), the
Laplacian term M P̂ = Ψᵀ(L(ΨP̂)) with L sparse (A.12), the U-step's box QPs with their Newton steps
(torch_boxqp.py), the V-, P- (GPI, eq. 19), τ- (eq. 20, torch_qp.py) and descent steps. The steps themselves are
knpsvc.KNPSVCState's, written once for numpy and torch; only the precomputation below is the device's own. Host
work: the kNN graph of the Laplacian (scikit-learn, sparse), ARPACK's Lanczos for GPI's σ (its products M v on the
device), the K × K τ-step's scalars and the history row.

S_l is formed, not applied matrix-free. At n = 20 000 on a9a (K = 2, 15 183 / 4 817 rows) forming both costs
≈ 2.5 TFLOP (the triangular solves for W_l and the rank-n_l products; float64 on an H200: seconds) and 2 GB, while
each box-QP iteration then reads S_l once (n_{−l}² numbers) instead of W_l and G_{−l,−l} (n_l n_{−l} + n_{−l}²),
and the Newton steps gather S_FF from it directly; matrix-free they would rebuild the same blocks from W_l.

float64 throughout, not float32: the jittered RBF kernel has cond(G) ≈ n·(1 + mean k)/ε ≈ 1e7 at n = 20 000, the
reciprocal of float32's 6e-8, so its Cholesky factor would carry O(1) relative errors; the duals' Newton systems
S_FF are as badly conditioned; and float64 keeps the device's iterates those of the numpy code up to rounding.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp
import torch

from ..core import InputError
from ..core.device import resolve_device
from .arrays import to_host
from .blocks import ClassBlocks
from .knpsvc import KNPSVCState, LaplacianTerm, normalized_laplacian
from .problem import NPSVCProblem, jitter, kernel_overflow
from .torch_boxqp import TorchBoxQP
from .torch_qp import simplex_qp_device
from .ustep import GramUStep

DTYPE = torch.float64


def device_features(problem: NPSVCProblem, device: str) -> "DeviceFeatures | None":
    """The device's kernel features for ``device`` ("cuda", or "auto"); None where that resolves to the CPU,
    whose kernel methods run the numpy code. Refuses "cuda" without a GPU and the linear kernel before any work."""
    resolved = resolve_device(device)
    if problem.kernel.name == "linear":
        raise InputError("the device path is for kernels (rbf, poly), whose n × n matrices it moves to the GPU; "
                         "the linear kernel's work is p × p: use device='cpu'")
    return None if resolved.type == "cpu" else DeviceFeatures(problem, resolved)


class DeviceFeatures:
    """G = K + εI, Ψ = chol(G) (lower) and, on first use, ψ(X_test) as rows, on ``device`` (problem.KernelFeatures)."""

    def __init__(self, problem: NPSVCProblem, device: torch.device):
        if problem.kernel.name == "linear":
            raise InputError("DeviceFeatures needs a kernel (rbf, poly); the linear kernel runs on the CPU")
        self.problem, self.device = problem, torch.device(device)
        self.X = self.tensor(problem.X_train)
        G = problem.kernel(self.X, self.X)
        if not bool(torch.isfinite(G).all()):
            raise kernel_overflow(problem.kernel)
        G.diagonal().add_(jitter(G.diagonal()))
        self.gram_matrix = G  # released by ``release_gram`` once the class blocks are built
        self.Psi = cholesky(G, "the jittered kernel matrix")
        self._test: torch.Tensor | None = None

    def tensor(self, A: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(A, dtype=np.float64), dtype=DTYPE, device=self.device)

    @property
    def p(self) -> int:
        return self.Psi.shape[1]

    def gram(self, rows_a: torch.Tensor, rows_b: torch.Tensor) -> torch.Tensor:
        return self.gram_matrix.index_select(0, rows_a).index_select(1, rows_b)

    def release_gram(self) -> None:
        """Free G (n² numbers): after the blocks, the fit needs only Ψ."""
        self.gram_matrix = None

    def test_features(self) -> torch.Tensor:
        """ψ(x) = Ψ⁻¹k(X, x) for the test rows, as rows (n_test × n), computed once."""
        if self._test is None:
            K_test = self.problem.kernel(self.X, self.tensor(self.problem.X_test))
            self._test = torch.linalg.solve_triangular(self.Psi, K_test, upper=False).mT
        return self._test

    def accuracies(self, U: torch.Tensor, norms: torch.Tensor, F_train: torch.Tensor) -> tuple[float, float]:
        """problem.accuracies with the scores computed here and the nearest-hyperplane rule (eq. 21) on the host."""
        return self.problem.score_accuracies(to_host(F_train), lambda: to_host(self.test_features() @ U),
                                             to_host(norms))


def cholesky(A: torch.Tensor, what: str) -> torch.Tensor:
    """The lower Cholesky factor, or an error naming the matrix (numpy's path raises LinAlgError the same way:
    the jitter ε = 1e-3·mean diag K, the same on both, is what keeps it positive definite)."""
    factor, info = torch.linalg.cholesky_ex(A)
    if int(info) != 0:
        raise torch.linalg.LinAlgError(f"{what} is not positive definite (leading minor {int(info)}); with the "
                                       "Gaussian kernel a larger width t helps, with the polynomial one a lower degree")
    return factor


class DeviceClassBlocks(ClassBlocks):
    """blocks.ClassBlocks in Gram form on the device: L_l, W_l = L_l⁻¹G_{l,−l}, S_l = (G_{−l,−l} − W_lᵀW_l)/r₁
    (eq. 14 with Woodbury); ``matvec`` and ``hyperplane`` (eq. 15) are ClassBlocks'."""

    def __init__(self, features: DeviceFeatures, own: np.ndarray, r1: float):
        self.Psi = features.Psi
        self.own_rows = torch.as_tensor(np.flatnonzero(own), device=features.device)
        self.other_rows = torch.as_tensor(np.flatnonzero(~own), device=features.device)
        G_ll = features.gram(self.own_rows, self.own_rows)
        G_ll.diagonal().add_(r1)
        L = cholesky(G_ll, f"r₁I + G_ll ({len(self.own_rows)} own rows)")
        self.Q = SimpleNamespace(factor=(L, True), r=r1)  # RidgeInverse's fields that the Gram form reads
        self.W = torch.linalg.solve_triangular(L, features.gram(self.own_rows, self.other_rows), upper=False)
        S = features.gram(self.other_rows, self.other_rows)
        S -= self.W.mT @ self.W
        S /= r1
        self.S = S


class HostOperator:
    """M as knpsvc.largest_eigenvalue takes it (numpy vectors in and out); the products run on the device."""

    def __init__(self, M: LaplacianTerm, features: DeviceFeatures):
        self.M, self.features, self.shape = M, features, M.shape

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return to_host(self.M @ self.features.tensor(v))

    def dense(self) -> np.ndarray:
        D = self @ np.eye(self.shape[0])
        return 0.5 * (D + D.T)


class DeviceLaplacianTerm(LaplacianTerm):
    """knpsvc.LaplacianTerm with the kNN graph's L (built on the host: sparse, n·k entries) as a torch sparse
    matrix and Ψ the device's triangular factor, so M P̂ = Ψᵀ(L(ΨP̂)) runs there (Alg. 1 line 9, A.12)."""

    def __init__(self, X: np.ndarray, features: DeviceFeatures):
        L = sp.coo_matrix(normalized_laplacian(X))
        indices = torch.as_tensor(np.vstack([L.row, L.col]).astype(np.int64), device=features.device)
        self.L = torch.sparse_coo_tensor(indices, features.tensor(L.data), L.shape, check_invariants=True).coalesce()
        self.Psi, self.matrix, self.shape = features.Psi, None, (features.p, features.p)


class DeviceKNPSVCState(KNPSVCState):
    """knpsvc.KNPSVCState with its arrays on the device of ``features``: the same steps (Algorithm 1)."""

    box_qp = TorchBoxQP
    tau_qp = staticmethod(simplex_qp_device)  # exact over the simplex's faces for K ≤ 12 (torch_qp.py)

    def __init__(self, problem: NPSVCProblem, features: DeviceFeatures, **params):
        self.features = features
        super().__init__(problem, **params)

    def _precompute(self, problem: NPSVCProblem) -> None:
        f = self.features
        own = problem.own_mask()
        self.Psi, self.own = f.Psi, torch.as_tensor(own, device=f.device)
        self.blocks = [DeviceClassBlocks(f, own[:, l], self.r1) for l in range(self.K)]
        f.release_gram()
        self.gram = GramUStep(f, self.blocks, self.r1)
        self.M = DeviceLaplacianTerm(problem.X_train, f) if self.mu > 0 else None

    def _eigen_operator(self) -> HostOperator:
        return HostOperator(self.M, self.features)

    def _array(self, A: np.ndarray) -> torch.Tensor:
        return self.features.tensor(A)

    def _scores(self, U: torch.Tensor) -> torch.Tensor:
        return self.Psi @ U

    def accuracies(self) -> tuple[float, float]:
        return self.features.accuracies(self.U, self.norms(), self.F)


class DeviceTwinDuals:
    """baselines.TwinDuals on the device: TWSVM's class blocks and box QPs in torch."""

    box_qp = TorchBoxQP

    def __init__(self, problem: NPSVCProblem, features: DeviceFeatures, r1: float):
        self.features, self.p = features, features.p
        own = problem.own_mask()
        self.blocks = [DeviceClassBlocks(features, own[:, l], r1) for l in range(problem.n_classes)]
        features.release_gram()

    def array(self, A: np.ndarray) -> torch.Tensor:
        return self.features.tensor(A)

    def accuracies(self, U: torch.Tensor) -> tuple[float, float]:
        return self.features.accuracies(U, torch.linalg.norm(U, dim=0), self.features.Psi @ U)

"""The τ-step's exact device QP (every face of the simplex in one batch) against the host active-set solver
and the KKT conditions; the dispatch to FISTA beyond FACES_MAX_K."""
import numpy as np
import pytest
import torch

from solvers.npsvc.qp import simplex_qp
from solvers.npsvc.torch_qp import FACES_MAX_K, simplex_qp_device, simplex_qp_faces

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])  # the GPU path where there is one


def random_qp(rng, K, rank, scale):
    G = rng.standard_normal((K, rank)) * scale
    return G @ G.T + 1e-12 * np.eye(K), -scale * rng.random(K)


def kkt_residual(A, b, x):
    """Simplex KKT: g = Ax + b equals its minimum ν on the support and is ≥ ν off it; the residual is
    max(max_{x_i>0} g_i − ν, x·(g − ν)) relative to the scale of g."""
    g = A @ x + b
    nu = g.min()
    return max(float(np.max((g - nu) * x)), 0.0) / (np.abs(g).max() + 1e-300)


@pytest.mark.parametrize("K", [1, 2, 3, 7, 10, FACES_MAX_K])
@pytest.mark.parametrize("rank", [1, 3, None])
@pytest.mark.parametrize("scale", [1e-4, 1.0])
@pytest.mark.parametrize("device", DEVICES)
def test_faces_qp_is_exact(K, rank, scale, device):
    rng = np.random.default_rng(100 * K + (rank or 0))
    for _ in range(5):
        A, b = random_qp(rng, K, min(rank or K, K), scale)
        f = lambda t: 0.5 * t @ A @ t + b @ t  # noqa: E731
        tau = simplex_qp_faces(torch.tensor(A, device=device), torch.tensor(b, device=device)).cpu().numpy()
        assert np.all(tau >= 0) and abs(tau.sum() - 1) <= 1e-12
        reference = simplex_qp(A, b)
        # never worse than the active-set solver, to rounding on the scale of the objective's terms
        assert f(tau) <= f(reference) + 1e-12 * (np.abs(A).max() + np.abs(b).max())
        assert kkt_residual(A, b, tau) <= 1e-7


def test_faces_qp_on_a_singular_hessian_keeps_the_minimum():
    """Two identical gradients (a rank-deficient face): the optimum's value is still reached."""
    g = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    A, b = g @ g.T, np.zeros(3)
    tau = simplex_qp_faces(torch.tensor(A), torch.tensor(b)).numpy()
    assert 0.5 * tau @ A @ tau == pytest.approx(0.25, abs=1e-12)  # τ₁ + τ₂ = τ₃ = ½ is optimal
    assert tau[2] == pytest.approx(0.5, abs=1e-9)


def test_faces_qp_keeps_the_input_dtype_and_device():
    A, b = torch.eye(4, dtype=torch.float32), torch.zeros(4, dtype=torch.float32)
    tau = simplex_qp_faces(A, b)
    assert tau.dtype == torch.float32 and tau.device == A.device
    torch.testing.assert_close(tau, torch.full((4,), 0.25))


def test_device_qp_uses_fista_beyond_the_face_limit():
    rng = np.random.default_rng(3)
    K = FACES_MAX_K + 1
    A, b = random_qp(rng, K, K, 1.0)
    with pytest.raises(ValueError, match="faces"):
        simplex_qp_faces(torch.tensor(A), torch.tensor(b))
    tau = simplex_qp_device(torch.tensor(A), torch.tensor(b)).numpy()
    f = lambda t: 0.5 * t @ A @ t + b @ t  # noqa: E731
    assert np.all(tau >= 0) and abs(tau.sum() - 1) <= 1e-12
    assert f(tau) - f(simplex_qp(A, b)) <= 4 * np.linalg.norm(A) / 101**2 + 1e-12  # FISTA's bound, 100 steps

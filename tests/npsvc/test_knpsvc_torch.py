"""The torch device path (knpsvc_torch.py, torch_boxqp.py), run on the CPU: the numpy code's iterates up to rounding.

Tolerances come from the problem: every iterate passes through solves with the kernel's Cholesky factor Ψ, which
amplify rounding by up to cond(Ψ) = √cond(G); over n-term sums that is n·ε·√cond(G) relative (1e-11 here), while
the two paths differ by 1e-14 — and a wrong formula by orders of magnitude more.
"""
import json
import time

import numpy as np
import pytest
import torch

from solvers import npsvc
from solvers.core import InputError, validate_params
from solvers.npsvc.baselines import TwinDuals, solve_twin_duals
from solvers.bench.limits import hard_cap
from solvers.npsvc.knpsvc import STATE_PARAMS, KNPSVCState, iterate_knpsvc
from solvers.npsvc.knpsvc_torch import DeviceFeatures, DeviceKNPSVCState, DeviceTwinDuals, cholesky
from solvers.npsvc.qp import BoxQP
from solvers.npsvc.torch_boxqp import TorchBoxQP

CPU = torch.device("cpu")
EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def overlapping():
    """Three overlapping Gaussian classes in 3-D: 150 training rows (above largest_eigenvalue's dense cut-off of 64,
    so σ comes from Lanczos on the device's products), 60 test rows; many multipliers strictly inside the box."""
    rng = np.random.default_rng(3)
    centers = np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0]])
    y = np.arange(210) % 3
    X = centers[y] + rng.standard_normal((210, 3))
    return npsvc.problem_from_arrays(X[:150], y[:150], kernel="rbf", X_test=X[150:], y_test=y[150:])


def rounding_scale(problem) -> float:
    """n·ε·√cond(G), the relative size of rounding differences after solves with Ψ."""
    return problem.n_train * EPS * np.sqrt(np.linalg.cond(problem.features.gram_matrix))


def assert_same(a, b, rtol):
    a, b = np.asarray(a, float), np.asarray(b, float)
    np.testing.assert_allclose(a, b, rtol=0, atol=rtol * max(1.0, float(np.abs(b).max())))


@pytest.mark.parametrize("fixture", ["blob_problem", "overlapping"])
def test_device_fit_has_the_numpy_iterates(fixture, request):
    """Five outer iterations on the CPU device: each history row's J_l, τ, objective, gap, stationarity, QP
    iterations and accuracies, and the final Û, V, P̂, λ_l and predictions, against the numpy state's."""
    problem = request.getfixturevalue(fixture)
    params = validate_params(STATE_PARAMS, {"mu": 0.05, "inner_tol": 1e-9})
    ours = iterate_knpsvc(problem, lambda: DeviceKNPSVCState(problem, DeviceFeatures(problem, CPU), **params),
                          tol=1e-12, max_iter=5)
    ref = iterate_knpsvc(problem, lambda: KNPSVCState(problem, **params), tol=1e-12, max_iter=5)
    rtol = rounding_scale(problem)
    assert rtol < 1e-9  # the comparison means something
    h, g = ours.history, ref.history
    assert len(h) == len(g) == 6 and list(h.columns) == list(g.columns)
    exact = ["iter", "qp_iters", "train_acc", "test_acc"]
    np.testing.assert_array_equal(h[exact].to_numpy(), g[exact].to_numpy())
    for column in [c for c in g.columns if c.startswith(("J_", "tau_"))] + ["objective", "dual", "stationarity"]:
        assert_same(h[column], g[column], rtol)
    for key in ("U", "V", "P", "tau", "norms"):
        assert_same(ours.solution[key], ref.solution[key], rtol)
    for a, b in zip(ours.solution["lambdas"], ref.solution["lambdas"]):
        assert_same(a, b, rtol)
    codes = [problem.predict_codes(problem.test_features @ r.solution["U"], r.solution["norms"]) for r in (ours, ref)]
    np.testing.assert_array_equal(*codes)


def test_device_twsvm_has_the_numpy_iterates(overlapping):
    problem = overlapping
    ours = solve_twin_duals(problem, lambda: DeviceTwinDuals(problem, DeviceFeatures(problem, CPU), 0.1),
                            tol=1e-6, max_iter=200)
    ref = solve_twin_duals(problem, lambda: TwinDuals(problem, 0.1), tol=1e-6, max_iter=200)
    rtol = rounding_scale(problem)
    h, g = ours.history, ref.history
    np.testing.assert_array_equal(h[["iter", "qp_iters"]].to_numpy(), g[["iter", "qp_iters"]].to_numpy())
    assert_same(h["objective"], g["objective"], rtol)
    assert ours.history["optimality"].iloc[-1] <= 1e-6 and ours.status == ref.status == "converged"
    assert_same(ours.solution["U"], ref.solution["U"], rtol)
    assert ours.history["test_acc"].iloc[-1] == ref.history["test_acc"].iloc[-1]


def test_device_features_are_the_host_features(overlapping):
    """G, Ψ (lower, ΨΨᵀ = G) and ψ(X_test) = Ψ⁻¹k(X, X_test) equal problem.KernelFeatures'."""
    host = overlapping.features
    device = DeviceFeatures(overlapping, CPU)
    rtol = rounding_scale(overlapping)
    assert_same(device.gram_matrix.numpy(), host.gram_matrix, EPS * overlapping.n_train)
    assert_same(device.Psi.numpy(), host.Psi, rtol)
    assert np.all(np.triu(device.Psi.numpy(), 1) == 0)
    assert_same(device.test_features().numpy(), overlapping.test_features, rtol)


def random_box_qp(seed: int, n: int, rank: int):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, rank))
    S = B @ B.T / rank
    return S, rng.standard_normal(n) - 0.5


def torch_qp(S, q, x0=None, Sx0=None):
    St = torch.from_numpy(S)
    return TorchBoxQP(lambda v: St @ v, torch.from_numpy(q), 1.0,
                      None if x0 is None else torch.from_numpy(x0), Sx0=None if Sx0 is None else torch.from_numpy(Sx0))


@pytest.mark.parametrize("seed, n, rank", [(0, 60, 60), (1, 80, 20), (2, 200, 150)])
def test_torch_box_qp_takes_the_numpy_steps_and_meets_kkt(seed, n, rank):
    """Cold, then warm from a perturbed solution (the u-step's case: it begins with a Newton step): the same
    iteration count and iterate as qp.BoxQP, and the KKT conditions at the end (x in the box, ∇ ≥ 0 at 0,
    ∇ ≤ 0 at c, ∇ = 0 between). Low-rank S has a singular free block: the ridge and re-solves are exercised."""
    S, q = random_box_qp(seed, n, rank)
    ref = BoxQP(lambda v: S @ v, q, 1.0).solve(1e-10, S=S)
    ours = torch_qp(S, q).solve(1e-10, S=torch.from_numpy(S))
    assert ours.n_iter == ref.n_iter
    scale = n * EPS * np.linalg.cond(S[np.ix_(*(2 * [np.flatnonzero((ref.x > 0) & (ref.x < 1))]))])
    assert_same(ours.x.numpy(), ref.x, max(scale, 1e-12))
    x, grad = ours.x.numpy(), ours.grad.numpy()
    assert np.all((x >= 0) & (x <= 1))
    assert np.all(grad[x == 0] >= -1e-10) and np.all(grad[x == 1] <= 1e-10)
    assert np.abs(grad[(x > 0) & (x < 1)]).max(initial=0) <= 1e-10
    x0 = np.clip(ref.x + 0.05 * np.random.default_rng(seed).standard_normal(n), 0, 1)
    warm_ref = BoxQP(lambda v: S @ v, q, 1.0, x0, Sx0=S @ x0).solve(1e-10, S=S)
    warm = torch_qp(S, q, x0, S @ x0).solve(1e-10, S=torch.from_numpy(S))
    assert warm.n_iter == warm_ref.n_iter
    assert_same(warm.x.numpy(), warm_ref.x, max(scale, 1e-12))
    assert warm.kkt_residual() <= 1e-10


def test_bad_requests_are_refused_before_work(blob_problem):
    linear = npsvc.problem_from_arrays(blob_problem.X_train, blob_problem.y_train, kernel="linear")
    with pytest.raises(InputError, match="linear kernel"):
        DeviceFeatures(linear, CPU)
    if not torch.cuda.is_available():
        for method in ("knpsvc", "twsvm"):
            with pytest.raises(InputError, match="no GPU"):
                npsvc.solve(blob_problem, method, device="cuda")
    with pytest.raises(torch.linalg.LinAlgError, match="not positive definite"):
        cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64), "a test matrix")


@pytest.mark.skipif(torch.cuda.is_available(), reason="'auto' picks the GPU there")
def test_auto_without_a_gpu_runs_the_numpy_code(blob_problem):
    ours = npsvc.solve(blob_problem, "knpsvc", device="auto", max_iter=3, tol=1e-12)
    ref = npsvc.solve(blob_problem, "knpsvc", max_iter=3, tol=1e-12)
    np.testing.assert_array_equal(ours.history["objective"], ref.history["objective"])


def test_kernel_gpu_bench_part_runs_on_the_cpu(tmp_path, capsys):
    """``--part kernel-gpu`` on the CPU at a small size: both paths' fits agree, the JSON has the ratio, the
    device's name and every fit's seconds; the table is printed last."""
    from solvers.npsvc.bench import main

    out = tmp_path / "record.json"
    assert main(["--part", "kernel-gpu", "--datasets", "breast_cancer", "--train", "120", "--device", "cpu",
                 "--numpy", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["n_train"] == 120 and record["device"].startswith("CPU")
    runs = {(r["method"], r["path"]): r for r in record["runs"]}
    assert set(runs) == {(m, p) for m in ("K-NPSVC++", "TWSVM") for p in ("torch", "numpy")}
    for method in ("K-NPSVC++", "TWSVM"):
        torch_run, numpy_run = runs[method, "torch"], runs[method, "numpy"]
        assert torch_run["test acc %"] == numpy_run["test acc %"]
        assert torch_run["QP iterations"] == numpy_run["QP iterations"] > 0
    assert runs["K-NPSVC++", "torch"]["iterations"] == 10
    ratio = record["K-NPSVC++ / TWSVM (torch)"]
    assert ratio == pytest.approx(runs["K-NPSVC++", "torch"]["wall [s]"] / runs["TWSVM", "torch"]["wall [s]"])
    assert capsys.readouterr().out.strip().splitlines()[-2].startswith("K-NPSVC++ / TWSVM (torch)")


def test_the_hard_cap_interrupts_a_fit():
    with pytest.raises(TimeoutError, match="hard cap"):
        with hard_cap(0.05):
            time.sleep(1.0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)")
@pytest.mark.parametrize("method", ["knpsvc", "twsvm"])
def test_cuda_fit_matches_the_numpy_fit(overlapping, method):
    """On a GPU the same fit: its reductions are summed in another order, so the iterates agree to rounding
    amplified by the solves with Ψ (1e-11 here), far inside the 1e-6 asked; a QP that stopped at another iteration
    would move max J by more. The predictions on the test rows agree but for at most one row near a boundary."""
    torch.cuda.reset_peak_memory_stats()
    runs = {dev: npsvc.solve(overlapping, method, device=dev, tol=1e-9, max_iter=5) for dev in ("cpu", "cuda")}
    assert torch.cuda.max_memory_allocated() >= overlapping.n_train**2 * 8  # the kernel matrix was on the GPU
    J = {dev: float(r.history["objective"].iloc[-1]) for dev, r in runs.items()}
    assert J["cuda"] == pytest.approx(J["cpu"], rel=1e-6)
    acc = {dev: float(r.history["test_acc"].iloc[-1]) for dev, r in runs.items()}
    assert abs(acc["cuda"] - acc["cpu"]) <= 1.5 / 60, acc

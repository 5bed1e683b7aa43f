"""The torch backend (device.py): the same arithmetic as numpy, the same path, and safe screening, on the CPU
and, where a GPU is present, on CUDA (so the device code paths are checked on real hardware when there is one)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from solvers.core import InputError
from solvers.metric import TripletMetricLearner
from solvers.metric.device import resolve_device
from solvers.metric.path import regularization_path
from solvers.metric.problem import ReducedProblem
from tests.metric.conftest import random_psd, tiny
from tests.metric.test_safety import RHO, assert_safe

TORCH_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.fixture(scope="module", params=TORCH_DEVICES)
def torch_device(request):
    return request.param


@pytest.fixture(scope="module", params=[False, True], ids=["full", "diagonal"])
def pair(request, torch_device):
    return tiny("iris", 6, diagonal=request.param), tiny("iris", 6, diagonal=request.param, device=torch_device)


def test_one_pass_matches_numpy(pair):
    """Margins, Σ αH, loss, gradient, gap and the PSD split agree with numpy to rounding (float64 both)."""
    ref, dev = pair
    rng = np.random.default_rng(1)
    M = rng.uniform(0, 1, ref.dim) if ref.diagonal else random_psd(ref.dim, rng)
    lam = 0.3
    mask_L = rng.uniform(size=ref.n_triplets) < 0.2
    mask_R = ~mask_L & (rng.uniform(size=ref.n_triplets) < 0.2)
    for a, b in [(ReducedProblem.unscreened(ref), ReducedProblem.unscreened(dev)),
                 (ReducedProblem(ref, mask_L, mask_R), ReducedProblem(dev, mask_L, mask_R))]:
        ea, eb = a.evaluate(M, lam), b.evaluate(M, lam)
        scale = 1.0 + np.abs(ea.S).max()
        np.testing.assert_allclose(eb.margins, ea.margins, rtol=0, atol=1e-12 * (1 + np.abs(ea.margins).max()))
        np.testing.assert_allclose(eb.alpha, ea.alpha, rtol=0, atol=1e-9)
        np.testing.assert_allclose(eb.S, ea.S, rtol=0, atol=1e-11 * scale)
        np.testing.assert_allclose(a.H_L, b.H_L, rtol=0, atol=1e-11 * scale)
        assert eb.primal == pytest.approx(ea.primal, rel=1e-12)
        assert b.gap(eb, lam) == pytest.approx(a.gap(ea, lam), rel=1e-9, abs=1e-9 * abs(ea.primal))
    A = np.diag(rng.normal(size=ref.dim)) if not ref.diagonal else rng.normal(size=ref.dim)
    if not ref.diagonal:
        A = A + rng.normal(size=A.shape) * 0.3
        A = A + A.T
    for x, y in zip(ref.psd_split(A), dev.psd_split(A)):
        np.testing.assert_allclose(y, x, atol=1e-12 * (1 + np.abs(A).max()))
    np.testing.assert_allclose(dev.signed_sum(np.arange(5), np.arange(7, 20)), ref.signed_sum(np.arange(5), np.arange(7, 20)),
                               atol=1e-11 * scale)


@pytest.mark.parametrize("bounds", [("rrpb", "pgb"), ("dgb",)], ids="+".join)
def test_torch_path_equals_numpy_path_and_is_safe(bounds, torch_device):
    """Screened path on torch: same λ grid and solutions as numpy (to the gap tolerance), and no screened
    triplet disagrees with the unscreened numpy path (test_safety's check)."""
    ref, dev = tiny("iris", 6), tiny("iris", 6, device=torch_device)
    tol = 1e-8
    naive = regularization_path(ref, bounds=(), rho=RHO, tol=1e-12, max_iter=50_000, analysis=False)
    a = regularization_path(ref, bounds=bounds, rho=RHO, tol=tol, max_iter=50_000, keep_masks=True, analysis=False)
    b = regularization_path(dev, bounds=bounds, rho=RHO, tol=tol, max_iter=50_000, keep_masks=True, analysis=False)
    assert len(a.table) == len(b.table)
    np.testing.assert_allclose(b.table["lam"], a.table["lam"], rtol=1e-12)
    for Ma, Mb, lam, gap_a, gap_b in zip(a.solutions, b.solutions, a.table["lam"], a.table["gap"], b.table["gap"]):
        # both within sqrt(2 gap/λ) of the optimum (DGB, Thm 3.5)
        assert np.linalg.norm(Ma - Mb) <= np.sqrt(2 * gap_a / lam) + np.sqrt(2 * gap_b / lam) + 1e-9
    assert_safe(dev, b, naive, tol)


def test_estimator_on_torch_matches_numpy(torch_device):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    a = TripletMetricLearner(lam=0.5, tol=1e-9).fit(X, y)
    b = TripletMetricLearner(lam=0.5, tol=1e-9, device=torch_device).fit(X, y)
    np.testing.assert_allclose(b.metric_, a.metric_, atol=1e-5 * np.abs(a.metric_).max())


def test_bad_devices_are_input_errors():
    with pytest.raises(InputError, match="choose one of"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA GPU"):
            resolve_device("cuda")
        assert resolve_device("auto") == "numpy"
    with pytest.raises(InputError, match="numpy only"):
        tiny("iris", 3, backend="triplets", device="cpu")


def test_device_ledger_makes_the_numpy_ledgers_decisions(torch_device):
    """TorchRangeLedger (device_ranges.py) screens the same sets, with the same H_L̂, as RangeLedger."""
    import math

    from solvers.metric.device_ranges import TorchRangeLedger
    from solvers.metric.ranges import RangeLedger

    ref, dev = tiny("iris", 6), tiny("iris", 6, device=torch_device)
    naive = regularization_path(ref, bounds=(), rho=0.7, tol=1e-10, max_iter=50_000, analysis=False)
    a, b = RangeLedger(ref, 0.7, keep_masks=True), TorchRangeLedger(dev, 0.7, keep_masks=True)
    lams, gaps = naive.table["lam"].to_numpy(), naive.table["gap"].to_numpy()
    screened = 0
    for t in range(1, len(lams)):
        reference = (naive.solutions[t - 1], lams[t - 1], math.sqrt(2 * max(gaps[t - 1], 0.0) / lams[t - 1]))
        ra, rb = a.step(t, lams[t], reference), b.step(t, lams[t], reference)
        assert np.array_equal(ra.in_L, rb.in_L) and np.array_equal(ra.in_R, rb.in_R), f"step {t}"
        assert np.array_equal(np.sort(ra.active.idx), np.sort(rb.active.idx))
        assert (ra.n_L, ra.n_R, a.n_range) == (rb.n_L, rb.n_R, b.n_range)
        np.testing.assert_allclose(rb.H_L, ra.H_L, atol=1e-10 * (1 + np.abs(ra.H_L).max()))
        M = naive.solutions[t]
        np.testing.assert_allclose(rb.evaluate(M, lams[t]).primal, ra.evaluate(M, lams[t]).primal, rtol=1e-10)
        screened += ra.n_screened
    assert screened > 0

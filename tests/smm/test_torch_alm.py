"""The torch backend of ALM-SNCG (torch_alm.py, torch_spectral.py, torch_synthetic.py, torch_path.py, bench_gpu.py)
on the CPU: every piece against the numpy code it mirrors, or against finite differences and certificates."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from solvers import smm  # noqa: E402
from solvers.core import InputError  # noqa: E402
from solvers.smm.alm import alm_solve  # noqa: E402
from solvers.smm.path import solve_path  # noqa: E402
from solvers.smm.problem import build_problem, dual_objective, kkt_residuals, primal_objective  # noqa: E402
from solvers.smm.spectral import SpectralPoint, svt_jacobian_dense  # noqa: E402
from solvers.smm.synthetic import make_smm_synthetic  # noqa: E402
from solvers.smm.torch_alm import (ROW_BLOCK, TorchSMMProblem, X_adjoint, build_torch_problem,  # noqa: E402
                                   torch_alm_solve)
from solvers.smm.torch_alm import kkt_residuals as torch_kkt  # noqa: E402
from solvers.smm.torch_alm import measures as torch_measures  # noqa: E402
from solvers.smm.torch_alm import TorchALMState  # noqa: E402
from solvers.smm.torch_path import torch_solve_path  # noqa: E402
from solvers.smm.torch_spectral import TorchSpectralPoint  # noqa: E402
from solvers.smm.torch_synthetic import make_smm_synthetic_torch  # noqa: E402

from .conftest import make_instance  # noqa: E402

CPU = torch.device("cpu")
# each solver test also runs on a GPU where torch sees one (the device machine); CI has none
DEVICES = [CPU] + ([torch.device("cuda")] if torch.cuda.is_available() else [])


def as_t(a):
    return torch.as_tensor(np.asarray(a, dtype=float))


# -- the spectral pieces (Sec. 4.1) -------------------------------------------------
@pytest.fixture
def spectral_case():
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((6, 9))
    nu = np.linalg.svd(Z, compute_uv=False)
    tau = 0.5 * (nu[1] + nu[2])  # |α| = 2, no ν_i at τ
    return Z, tau


def test_torch_svt_prox_ball_and_envelope_match_numpy(spectral_case):
    Z, tau = spectral_case
    ref, sp = SpectralPoint.of(Z, tau), TorchSpectralPoint.of(as_t(Z), tau)
    assert sp.rank_alpha == ref.rank_alpha == 2
    np.testing.assert_allclose(sp.ball_projection().numpy(), ref.ball_projection(), atol=1e-12)
    np.testing.assert_allclose(sp.nuclear_prox().numpy(), ref.nuclear_prox(), atol=1e-12)
    assert float(sp.envelope()) == pytest.approx(ref.envelope(), rel=1e-13)


def test_torch_svt_jacobian_matches_numpy_and_finite_differences(spectral_case):
    Z, tau = spectral_case
    sp = TorchSpectralPoint.of(as_t(Z), tau)
    rng = np.random.default_rng(5)
    for _ in range(3):
        D = rng.standard_normal(Z.shape)
        Jd = sp.jacobian(as_t(D)).numpy()
        np.testing.assert_allclose(Jd, svt_jacobian_dense(SpectralPoint.of(Z, tau), D), atol=1e-12)
        h = 1e-6  # Prox is differentiable here (no ν_i = τ): central differences of the torch prox
        fd = (TorchSpectralPoint.of(as_t(Z + h * D), tau).nuclear_prox()
              - TorchSpectralPoint.of(as_t(Z - h * D), tau).nuclear_prox()).numpy() / (2 * h)
        np.testing.assert_allclose(Jd, fd, atol=1e-7)
    inside = TorchSpectralPoint.of(as_t(Z), 10.0 * np.linalg.norm(Z, 2))  # ‖Z‖₂ < τ: 𝒥 = 0, G = I
    assert inside.rank_alpha == 0 and float(inside.jacobian(as_t(Z)).abs().max()) == 0.0


def test_adjoint_sums_blocks_and_the_tail():
    rng = np.random.default_rng(6)
    n = 2 * ROW_BLOCK + 37  # two full blocks and a tail
    X = rng.standard_normal((n, 15))
    z = rng.standard_normal(n)
    ref = X.T @ z
    np.testing.assert_allclose(X_adjoint(as_t(X), as_t(z)).numpy(), ref, rtol=1e-12, atol=1e-10)
    got32 = X_adjoint(torch.as_tensor(X, dtype=torch.float32), as_t(z)).numpy()
    assert np.all(np.abs(got32 - ref) <= 1e-5 * (np.abs(X).T @ np.abs(z)))  # float32 rounding of sums of 1024


# -- the solver against numpy ALM-SNCG ---------------------------------------------
@pytest.fixture(scope="module")
def synthetic():
    ds = make_smm_synthetic(n_train=2000, p=10, q=12, seed=1)
    train = ~ds.test_mask
    return ds.X[train], ds.y[train]


def test_torch_measures_and_kkt_residuals_match_numpy(synthetic):
    X, y = synthetic
    problem = build_problem(X, y, C=1.0, tau=1.0)
    tp = TorchSMMProblem.of(problem, CPU)
    rng = np.random.default_rng(7)
    W, U, Lam = (0.01 * rng.standard_normal(problem.shape) for _ in range(3))
    b, v, lam = 0.1, rng.standard_normal(problem.n), -rng.uniform(0, 1, problem.n)
    ref = kkt_residuals(problem, W, b, v, U, lam, Lam)
    got = torch_kkt(tp, as_t(W), b, as_t(v), as_t(U), as_t(lam), as_t(Lam))
    for key, value in ref.items():
        assert got[key] == pytest.approx(value, rel=1e-10), key
    row = torch_measures(tp, TorchALMState(as_t(W), b, as_t(lam), as_t(Lam), 1.0), None)
    assert row["objective"] == pytest.approx(primal_objective(problem, W, b), rel=1e-12)
    assert row["dual_objective"] == pytest.approx(dual_objective(problem, lam, Lam), rel=1e-12)


def _gap(result) -> float:
    h = result.history.iloc[-1]
    return abs(h["objective"] - h["dual_objective"])


@pytest.mark.parametrize("device", DEVICES, ids=str)
@pytest.mark.parametrize("C,tol,dtype,start_rows", [(0.1, 1e-6, np.float64, 0), (10.0, 1e-6, np.float64, 200),
                                                    (1.0, 1e-6, np.float32, 0)])
def test_torch_alm_reaches_tol_and_agrees_with_numpy(synthetic, C, tol, dtype, start_rows, device):
    """Both runs stop at η_kkt ≤ tol. The objective is 1-strongly convex in W, so each W is within √(2·gap) of W̄
    (gap = its primal − dual objective, plus tol·(1+|obj|) for the y^Tλ residual that weak duality ignores), and
    the objectives differ by at most the two gaps. b is fixed by a margin sample j (0 < −λ_j < C):
    y_j(⟨W, X_j⟩ + b) = 1 up to η_λ, so |Δb| ≤ ‖ΔW‖·max‖X_j‖ plus that residual."""
    X, y = synthetic
    problem = build_problem(X, y, C=C, tau=1.0, dtype=dtype)
    ref, _ = alm_solve(problem, tol=tol, max_iter=500, start_rows=start_rows)
    got, state = torch_alm_solve(TorchSMMProblem.of(problem, device), tol=tol, max_iter=500, start_rows=start_rows)
    assert got.status == ref.status == "converged"
    assert got.history["kkt"].iloc[-1] <= tol
    obj = ref.history["objective"].iloc[-1]
    slack = tol * (1 + abs(obj))
    gaps = _gap(ref) + _gap(got) + 2 * slack
    assert abs(got.history["objective"].iloc[-1] - obj) <= gaps
    dW = np.linalg.norm(got.solution["W"] - ref.solution["W"])
    assert dW <= np.sqrt(2 * (_gap(ref) + slack)) + np.sqrt(2 * (_gap(got) + slack))
    row_norm = np.linalg.norm(problem.X, axis=1).max()
    assert abs(got.solution["b"] - ref.solution["b"]) <= dW * row_norm + 10 * tol * (1 + np.sqrt(problem.n))
    lam = got.solution["lam"]
    assert lam.max() <= 0 and lam.min() >= -C  # λ ∈ −S (Moreau form (39))
    assert np.linalg.norm(got.solution["Lam"], 2) <= problem.tau * (1 + 1e-12)
    assert got.info["newton"] > 0 and got.info["device"].startswith(device.type)


def test_solve_entry_runs_torch_and_refuses_bad_devices(synthetic):
    X, y = synthetic
    problem = build_problem(X[:300], y[:300], C=1.0, tau=1.0)
    res = smm.solve(problem, "alm-sncg", tol=1e-5, device="torch-cpu")
    ref = smm.solve(problem, "alm-sncg", tol=1e-5)
    assert res.info["device"] == "cpu" and "device" not in ref.info
    assert res.history["objective"].iloc[-1] == pytest.approx(ref.history["objective"].iloc[-1], rel=1e-4)
    with pytest.raises(InputError, match="device"):
        smm.solve(problem, "alm-sncg", device="tpu")
    with pytest.raises(InputError, match="warm_start"):
        smm.solve(problem, "alm-sncg", device="torch-cpu", warm_start=4)
    with pytest.raises(InputError, match="SMMProblem"):
        smm.solve(TorchSMMProblem.of(problem, CPU), "alm-sncg")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no GPU"):
            smm.solve(problem, "alm-sncg", device="cuda")


# -- the device generator (Sec. 6.1) ------------------------------------------------
@pytest.mark.parametrize("p,q", [(6, 10), (10, 6)])
def test_device_generator_follows_the_recipe(p, q):
    n, noise = 3000, 2e-4
    d = make_smm_synthetic_torch(n, p, q, seed=3, device=CPU, dtype=torch.float64)
    n_total = int(np.ceil(1.25 * n))
    r = min(20, p, q)
    assert d.X_train.shape == (n, p * q) and d.X_test.shape == (n_total - n, p * q)
    assert d.shape == (min(p, q), max(p, q)) and d.transposed == (p > q)
    basis = d.basis.numpy()
    np.testing.assert_allclose(basis.T @ basis, np.eye(r), atol=1e-12)  # b_1..b_r orthonormal
    sv = np.linalg.svd(d.W_true.numpy(), compute_uv=False)
    np.testing.assert_allclose(sv[:r], 1.0, atol=1e-12)  # W* = PQᵀ: r unit singular values
    X = torch.cat([d.X_train, d.X_test]).numpy().reshape(n_total, *d.shape)
    if d.transposed:
        X = np.swapaxes(X, 1, 2)  # back to the user's p×q samples
    group = np.ceil(r * np.arange(1, q + 1) / q).astype(int) - 1
    noise_part = X - basis[:, group][:, None, :]  # (X_i)_{kℓ} − (b_{⌈rℓ/q⌉})_i
    assert abs(noise_part.mean()) < 5 * noise / np.sqrt(noise_part.size)
    assert noise_part.std() == pytest.approx(noise, rel=0.02)
    y = np.concatenate([d.y_train.numpy(), d.y_test.numpy()])
    scores = np.einsum("ipq,pq->i", X, d.W_true.numpy())
    np.testing.assert_array_equal(y, np.where(scores >= 0, 1.0, -1.0))
    # the numpy generator's data have the same scale: E‖X_i‖² = pq(1/n_total + δ²) in both
    ref = make_smm_synthetic(n_train=n, p=p, q=q, seed=3)
    sq_t, sq_n = (np.einsum("ipq,ipq->i", a, a).mean() for a in (X, ref.X))
    assert sq_t == pytest.approx(sq_n, rel=0.1) and sq_t == pytest.approx(p * q * (1 / n_total + noise**2), rel=0.1)
    again = make_smm_synthetic_torch(n, p, q, seed=3, device=CPU, dtype=torch.float64)
    assert torch.equal(again.X_train, d.X_train) and torch.equal(again.y_test, d.y_test)
    assert not torch.equal(make_smm_synthetic_torch(n, p, q, seed=4, device=CPU).y_train, d.y_train)


def test_device_generator_and_problem_refuse_bad_input():
    with pytest.raises(InputError, match="rank"):
        make_smm_synthetic_torch(100, 4, 5, r=6, device=CPU)
    X = torch.zeros(4, 6)
    with pytest.raises(InputError, match="two classes"):
        build_torch_problem(X, torch.ones(4), (2, 3), C=1.0, tau=1.0)
    with pytest.raises(InputError, match="p ≤ q"):
        build_torch_problem(X, torch.tensor([1.0, -1, 1, -1]), (3, 2), C=1.0, tau=1.0)
    with pytest.raises(InputError, match="C"):
        build_torch_problem(X, torch.tensor([1.0, -1, 1, -1]), (2, 3), C=0.0, tau=1.0)


# -- Algorithm 3 on the device ----------------------------------------------------
@pytest.mark.parametrize("device", DEVICES, ids=str)
def test_torch_as_path_equals_torch_warm_path_and_the_numpy_path(device):
    X, y = make_instance(100, 4, 5, seed=0, flip=0.2)
    problem = build_problem(X, y, C=1.0, tau=0.1)
    tp = TorchSMMProblem.of(problem, device)
    grid, tol = [0.05, 0.5, 5.0, 50.0], 1e-8
    warm = torch_solve_path(tp, grid, method="warm", tol=tol)
    sieved = torch_solve_path(tp, grid, method="as", tol=tol, eps_hat=0.0, d_max=1, max_rounds=500)
    tw, ta = warm.table, sieved.table
    assert ta["rounds"].iloc[1:].max() >= 3  # violators were added one at a time
    assert (ta["n_reduced"].iloc[1:] < problem.n).all()
    assert max(tw["kkt_full"].max(), ta["kkt_full"].max()) <= 10 * tol
    rel = np.abs(tw["objective"] - ta["objective"]) / (1 + np.abs(tw["objective"]))
    assert rel.max() <= 10 * tol
    for (Ww, _), (Wa, _) in zip(warm.solutions, sieved.solutions):
        assert np.linalg.norm(Ww - Wa) / (1 + np.linalg.norm(Ww)) <= 1e-4
    ref = solve_path(problem, grid, method="warm", tol=tol).table
    np.testing.assert_allclose(ta["objective"], ref["objective"], rtol=10 * tol)
    np.testing.assert_array_equal(ta["n_sm"], ref["n_sm"])


# -- the GPU bench, run on the CPU --------------------------------------------------
def test_gpu_bench_runs_on_the_cpu_and_honours_its_time_limit(tmp_path, capsys, monkeypatch):
    from solvers.smm import bench_gpu
    from solvers.smm.bench import main

    out = tmp_path / "gpu.json"
    argv = ["gpu", "--n", "3000", "--p", "5", "--q", "6", "--device", "torch-cpu", "--C", "0.1", "10", "--tol", "1e-4",
            "--path", "--points", "3", "--path-methods", "as", "warm", "--out", str(out)]
    assert main(argv) == 0
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["table4"]] == ["converged", "converged"]
    assert all(r["kkt"] <= 1e-4 and 0.5 < r["test_acc"] <= 1 for r in report["table4"])
    for method in ("as", "warm"):
        assert len(report["paths"][method]) == 3 and report["path_summaries"][method]["worst_kkt_full"] <= 1e-3
    np.testing.assert_allclose([r["objective"] for r in report["paths"]["as"]],
                               [r["objective"] for r in report["paths"]["warm"]], rtol=1e-3)
    printed = capsys.readouterr().out
    assert "ALM-SNCG on cpu" in printed and "Warm / AS path time over the 3 points both finished" in printed
    assert main(argv[:-1] + [str(out), "--time-limit", "1e-3"]) == 0  # nothing fits: every row says so
    report = json.loads(out.read_text())
    assert {r["status"] for r in report["table4"]} == {"skipped (time limit)"}
    assert report["path_summaries"] == {m: {"status": "skipped (time limit)"} for m in ("as", "warm")}
    monkeypatch.setattr(bench_gpu, "HARD_GRACE_S", 0.0)  # SIGALRM stops the measurements wherever they are,
    monkeypatch.setattr(bench_gpu, "table4_rows", lambda *args: time.sleep(30))  # even inside a solve that hangs
    assert main(argv[:-1] + [str(out), "--time-limit", "0.5"]) == 0
    assert "hard time limit" in json.loads(out.read_text())["setup"]["stopped"]


@pytest.mark.parametrize("j1_share", [0.1, 1.0])
def test_torch_newton_direction_solves_the_numpy_newton_system(synthetic, j1_share):
    """The Schur-reduced system (40) with 𝒥 of (35) (|α| ≥ 1) and J1 ≠ ∅: torch's CG and numpy's solver
    (direct or CG) give the same (d_W, d_b) at tight tolerances, with J1's rows gathered (a tenth of the samples)
    or masked over all of X (all of them)."""
    from solvers.smm import newton
    from solvers.smm import torch_alm as ta

    X, y = synthetic
    problem = build_problem(X, y, C=1.0, tau=1.0)
    rng = np.random.default_rng(8)
    W, Lam = 0.3 * rng.standard_normal(problem.shape), 0.4 * rng.standard_normal(problem.shape)  # ‖Λ‖₂ > τ
    sigma, b = 0.01, 0.05  # ω ≈ −λ: λ_j = −1 puts j at the bound, −λ_j ∈ (0, 1) in J1 (37)
    lam = np.where(rng.uniform(size=problem.n) < j1_share, -rng.uniform(0.1, 0.9, problem.n), -1.0)
    sub = newton.Subproblem(problem.X, problem.y, problem.shape, 1.0, 1.0, sigma, lam, Lam)
    pt = newton.evaluate(sub, W, b, problem.X @ W.ravel())
    tsub = ta.TorchSubproblem(TorchSMMProblem.of(problem, CPU), sigma, as_t(lam), as_t(Lam))
    tpt = ta.evaluate(tsub, as_t(W), b, as_t(problem.X @ W.ravel()))
    assert tpt.phi == pytest.approx(pt.phi, rel=1e-12) and tpt.gb == pytest.approx(pt.gb, rel=1e-10)
    np.testing.assert_allclose(tpt.gW.numpy(), pt.gW, atol=1e-10)
    stats = newton.NewtonStats()
    dW, db = newton.newton_direction(sub, pt, 1e-3, 1e-12, 2000, np.zeros(W.size), stats)
    tstats = ta.NewtonStats()
    tdW, tdb = ta.newton_direction(tsub, tpt, 1e-3, 1e-12, 2000, torch.zeros(W.size, dtype=torch.float64), tstats)
    assert tstats.alpha >= 1 and tstats.cg > 0
    assert (tpt.XJ is None) == (j1_share == 1.0) and tstats.j1 == pytest.approx(j1_share * problem.n, rel=0.2)
    np.testing.assert_allclose(tdW.numpy(), dW, atol=1e-8 * (1 + np.linalg.norm(dW)))
    assert tdb == pytest.approx(db, abs=1e-8 * (1 + abs(db)))

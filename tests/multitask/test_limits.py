"""Non-finite targets, extreme α/β, targets near 1e100 (overflow), and the run limits of BCD's LIBSVM U-step and of
the cvxpy reference."""
import dataclasses

import numpy as np
import pytest

from solvers import multitask as mt
from solvers.core import InputError
from solvers.datasets import generate

from .conftest import tiny_problem


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_targets_are_refused(rng, bad):
    X, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    y[2] = bad
    with pytest.raises(InputError, match="targets.*NaN or infinite"):
        mt.from_tasks([(X, rng.standard_normal(6)), (X, y)])
    with pytest.raises(InputError, match="targets.*NaN or infinite"):
        mt.from_groups(np.vstack([X, X]), np.r_[y, y], np.repeat([0, 1], 6))


def test_generator_noise_that_overflows_is_refused():
    with pytest.raises(InputError, match="noise"):
        generate("multitask-subspace", noise=1e308)


@pytest.mark.parametrize("alpha, beta, match", [
    (1e-160, 1e160, "alpha"),       # η = 1e320 overflows
    (1e300, 1e-300, "alpha"),       # η underflows to 0, c = 0
    (1e-10, 1e10, "η = beta/alpha"),  # η = 1e20: M no longer changes ηI + M
    (1.0, 1e-15, "η = beta/alpha"),   # ηI + M numerically singular
])
def test_extreme_alpha_beta_are_refused(alpha, beta, match):
    data = tiny_problem().data
    with pytest.raises(InputError, match=match):
        mt.make_problem(data, alpha=alpha, beta=beta)


def test_small_but_sane_alpha_beta_still_run():
    problem = tiny_problem().with_params(alpha=1e-100, beta=1e-100)
    res = mt.solve(problem, "bcd", max_iter=5)
    assert np.isfinite(res.history["objective"]).all()


def test_hinge_u_step_reports_capped_libsvm():
    problem = tiny_problem("hinge").with_params(alpha=1.0, beta=1e-9)  # C = 1/(2cn) ≈ 6e7
    res = mt.solve(problem, "bcd", max_iter=2, svm_max_iter=3)
    assert res.info["svm_capped"] > 0
    assert res.history["svm_capped"].iloc[1:].sum() == res.info["svm_capped"]


def test_hinge_bcd_stops_inside_a_u_step_at_the_time_limit(monkeypatch):
    from solvers.multitask import bcd

    calls = []
    real = bcd._u_hinge

    def slow_hinge(*args):
        calls.append(1)
        import time
        time.sleep(0.05)
        return real(*args)

    monkeypatch.setattr(bcd, "_u_hinge", slow_hinge)
    problem = tiny_problem("hinge", m=20)
    res = mt.solve(problem, "bcd", max_iter=100, tol=1e-15, time_limit=0.12)
    assert res.status == "time_limit"
    assert len(calls) < 20  # stopped within the first U-step, not after all 20 tasks


@pytest.mark.parametrize("solver, option", [("CLARABEL", "time_limit"), ("SCS", "time_limit_secs")])
def test_cvxpy_passes_the_time_limit_to_the_conic_solver(monkeypatch, solver, option):
    cp = pytest.importorskip("cvxpy")
    seen = {}
    real = cp.Problem.solve

    def spy(self, *args, **kwargs):
        seen.update(kwargs)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", spy)
    res = mt.solve(tiny_problem(d=3, m=2, n=5), "cvxpy", time_limit=30, solver=solver)
    assert 0 < seen[option] <= 30
    assert res.status == "converged"


def test_cvxpy_refuses_a_time_limit_clarabel_cannot_honour():
    problem = tiny_problem(d=60, m=50, n=3)
    with pytest.raises(InputError, match="solver=SCS"):
        mt.solve(problem, "cvxpy", time_limit=1, max_size=10**6)


# The Multi-task page at its defaults (α = 0.1, β = 1, h = 3, tol 1e-3, 200 iterations) with the synthetic
# generator's noise at its largest value, 1e100: targets near 1e100 put eigenvalues near 1e200 into the projection
# onto {tr M = h, 0 ⪯ M ⪯ I}, whose prefix sums overflowed (IndexError in APG at iteration 32, BCD at α = 1 at 43).
def noisy_page_problem(alpha: float, scale: float = 1.0):
    ds = generate("multitask-subspace", noise=1e100)
    train, _ = mt.split_rows(ds, 0.3, seed=0)
    ds = dataclasses.replace(ds, y=ds.y / scale)
    return mt.make_problem(ds, rows=train, alpha=alpha, beta=1.0, h=3)


def test_bcd_at_the_pages_largest_noise_matches_the_rescaled_problem():
    # F(sU, sb, M) = s²F(U, b, M) when y is scaled by s, and BCD's blocks are exact minimisers: its M is the same
    # and its U scales with y. s a power of two makes the rescaling exact.
    s = 2.0 ** 332
    huge, unit = (mt.solve(noisy_page_problem(1.0, scale), "bcd", tol=tol, max_iter=200)
                  for scale, tol in ((1.0, 1e-3), (s, 1e-3 / s)))
    assert huge.status in ("converged", "max_iter")
    np.testing.assert_allclose(huge.solution["M"], unit.solution["M"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(huge.solution["U"] / s, unit.solution["U"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(huge.history["objective"] / s**2, unit.history["objective"], rtol=1e-12)


@pytest.mark.parametrize("method, alpha", [("apg", 0.1), ("pg", 1.0)])
def test_gradient_methods_at_the_pages_largest_noise_stay_feasible_and_above_the_optimum(method, alpha):
    problem = noisy_page_problem(alpha)
    res = mt.solve(problem, method, tol=1e-3, max_iter=200)
    assert res.status in ("converged", "max_iter")
    eig = np.linalg.eigvalsh(res.solution["M"])
    assert eig.min() >= -1e-9 and eig.max() <= 1 + 1e-9 and abs(eig.sum() - 3) <= 1e-9
    objective = res.history["objective"]
    best = mt.solve(problem, "bcd", tol=1e-3, max_iter=200).history["objective"].iloc[-1]  # exact blocks, F ≥ F*
    assert best * (1 - 1e-6) <= objective.iloc[-1] < objective.iloc[0]


def test_an_overflowing_trial_step_shortens_the_step():
    # L₀ = 1e-310: the first trial step ∇f/L overflows to inf; the line search doubles L as for a failed
    # sufficient-decrease test (it projected inf before: LinAlgError) and reaches the run from L₀ = 1
    problem = tiny_problem()
    reference = mt.solve(problem, "apg", tol=1e-8, max_iter=500)
    res = mt.solve(problem, "apg", tol=1e-8, max_iter=500, L0=1e-310)
    assert np.isfinite(res.history["objective"]).all()
    np.testing.assert_allclose(res.history["objective"].iloc[-1], reference.history["objective"].iloc[-1],
                               rtol=1e-9)


def test_a_trial_whose_objective_overflows_is_rejected():
    # targets near 1e150 and L₀ = 1e-3: the first trial's f(Ẑ) overflows to inf, and so did the right-hand side
    # of (37); inf ≤ inf accepted it and the run ended 'diverged' after one step
    ds = generate("multitask-subspace")
    train, _ = mt.split_rows(ds, 0.3, seed=0)
    huge = dataclasses.replace(ds, y=ds.y * 2.0**498)
    res = mt.solve(mt.make_problem(huge, rows=train, alpha=100.0, beta=100.0, h=3), "apg", tol=1e-3, max_iter=5,
                   L0=1e-3)
    objective = res.history["objective"]
    assert res.status == "max_iter" and np.isfinite(objective).all() and objective.iloc[-1] < objective.iloc[0]


def test_an_overflowing_u_step_stops_bcd_as_diverged(monkeypatch):
    from solvers.multitask import bcd

    real = bcd.u_step
    calls = []

    def overflowing(*args, **kwargs):
        calls.append(1)
        U, b, capped = real(*args, **kwargs)
        return (U * np.inf if len(calls) > 2 else U), b, capped

    monkeypatch.setattr(bcd, "u_step", overflowing)
    res = mt.solve(tiny_problem(), "bcd", tol=1e-15, max_iter=50)
    assert res.status == "diverged" and res.info["n_iter"] == 2
    assert np.isfinite(res.solution["M"]).all()

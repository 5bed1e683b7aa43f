"""Non-finite targets, extreme α/β, and the run limits of BCD's LIBSVM U-step and of the cvxpy reference."""
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

"""APG, PG and BCD against cvxpy's matrix_frac program, against each other, and against the paper's theory."""
import numpy as np
import pytest

from solvers import multitask as mt
from solvers.multitask.problem import Point
from solvers.multitask.proximal_gradient import _line_search

from .conftest import tiny_problem


def reference(problem):
    pytest.importorskip("cvxpy")
    from solvers.multitask.cvxpy_reference import solve_cvxpy
    return solve_cvxpy(problem)[:2]


@pytest.mark.parametrize("loss, rel, tol", [("least_squares", 1e-6, 1e-9),
                                           pytest.param("logistic", 1e-6, 1e-7, marks=pytest.mark.slow)])
def test_smooth_losses_all_methods_reach_the_cvxpy_optimum(loss, rel, tol):
    problem = tiny_problem(loss, d=5, m=3, n=8, beta=0.3)
    Z_ref, F_ref = reference(problem)
    optima = {}
    for method in ("apg", "pg", "bcd"):
        res = mt.solve(problem, method, tol=tol, max_iter=5000)
        F = res.history["objective"].iloc[-1]
        optima[method] = res.solution
        assert F <= F_ref * (1 + rel), method  # never worse than the conic solver
        assert F == pytest.approx(F_ref, rel=rel), method
        np.testing.assert_allclose(res.solution["U"], Z_ref.U, atol=1e-3)
    np.testing.assert_allclose(optima["apg"]["U"], optima["bcd"]["U"], atol=1e-6)
    np.testing.assert_allclose(optima["pg"]["M"], optima["bcd"]["M"], atol=1e-5)


@pytest.mark.slow
def test_hinge_apg_pg_bcd_reach_the_cvxpy_optimum():
    problem = tiny_problem("hinge", d=4, m=3, n=10, beta=0.5)
    _, F_ref = reference(problem)
    for method in ("apg", "pg", "bcd"):
        res = mt.solve(problem, method, tol=1e-7, max_iter=3000)
        assert res.history["objective"].iloc[-1] == pytest.approx(F_ref, rel=1e-4), method


def test_hinge_prox_matches_a_direct_qp(rng):
    cp = pytest.importorskip("cvxpy")
    problem = tiny_problem("hinge", d=4, m=3, n=10)
    Y = Point(rng.standard_normal((4, 3)), rng.standard_normal(3), np.eye(4) * 0.5)
    L = 3.0
    Z, _ = problem.prox(Y, L)
    U, b = cp.Variable((4, 3)), cp.Variable(3)
    data = problem.data
    hinge = sum(cp.sum(cp.pos(1 - cp.multiply(data.task(l)[1], data.task(l)[0] @ U[:, l] + b[l]))) / data.sizes[l]
                for l in range(3))
    cp.Problem(cp.Minimize(L / 2 * (cp.sum_squares(U - Y.U) + cp.sum_squares(b - Y.b)) + hinge)).solve(solver="CLARABEL")
    np.testing.assert_allclose(Z.U, U.value, atol=1e-5)
    np.testing.assert_allclose(Z.b, b.value, atol=1e-5)


def test_bcd_hinge_u_step_matches_a_direct_qp():
    cp = pytest.importorskip("cvxpy")
    from solvers.multitask.bcd import u_step
    problem = tiny_problem("hinge", d=4, m=2, n=12)
    Z = problem.initial_point()
    Z.M = mt.m_step(np.random.default_rng(1).standard_normal((4, 3)), problem.eta, problem.h)
    U, b, capped = u_step(problem, Z, svm_tol=1e-10)
    assert capped == 0
    A_inv = np.linalg.inv(problem.eta * np.eye(4) + Z.M)
    for ell in range(2):
        X, y = problem.data.task(ell)
        u, c0 = cp.Variable(4), cp.Variable()
        cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ u + c0))) / len(y)
                               + problem.c * cp.quad_form(u, A_inv, assume_PSD=True))).solve(solver="CLARABEL")
        np.testing.assert_allclose(U[:, ell], u.value, atol=1e-4)


def test_apg_invariants_and_lemma_a1(rng):
    problem = tiny_problem(beta=0.3)
    res = mt.solve(problem, "apg", tol=1e-9, max_iter=400, spectra=True)
    hist = res.history
    assert np.all(np.diff(hist["L"]) >= 0)  # L never decreases
    eig_M = res.info["spectra"]["eig_M"]
    assert eig_M.shape == (len(hist), problem.d) and res.info["spectra"]["sv_U"].shape[0] == len(hist)
    for eigs in eig_M:  # every Z_i is feasible
        assert eigs.min() >= -1e-10 and eigs.max() <= 1 + 1e-10 and eigs.sum() == pytest.approx(problem.h)
    # Lemma A.1 at a random search point S, for random feasible Z
    S = Point(rng.standard_normal((problem.d, problem.m)), rng.standard_normal(problem.m),
              mt.project_trace_box_psd(rng.standard_normal((problem.d, problem.d)), problem.h)[0] + 0.05)
    Z_hat, f_hat, L, _, _, D = _line_search(problem, S, 1.0, None)
    f_S, grad = problem.smooth_value_grad(S)
    assert f_hat <= f_S + grad.dot(D) + L / 2 * D.dot(D) + 1e-12
    P = Point(-L * D.U, -L * D.b, -L * D.M)  # P_L(S) = L(S − Z_{L,S}), Eq. (43)
    for _ in range(20):
        Z = Point(rng.standard_normal(S.U.shape), rng.standard_normal(problem.m),
                  mt.project_trace_box_psd(rng.standard_normal(S.M.shape), problem.h)[0])
        lhs = problem.objective(Z) - problem.objective(Z_hat)
        assert lhs >= Z.minus(S).dot(P) + P.dot(P) / (2 * L) - 1e-9


def test_theorem_a1_rate_bounds_for_apg_and_pg():
    problem = tiny_problem(alpha=1.0, beta=1.0)  # η = 1: the safeguard never acts
    star = mt.solve(problem, "bcd", tol=1e-13, max_iter=20000)
    F_star = star.history["objective"].iloc[-1]
    Z0 = problem.initial_point()
    sol = star.solution
    R = Z0.minus(Point(sol["U"], sol["b"], sol["M"])).dot(Z0.minus(Point(sol["U"], sol["b"], sol["M"])))
    apg = mt.solve(problem, "apg", tol=1e-12, max_iter=300).history
    k = apg["iter"].to_numpy()[1:]
    assert np.all(apg["halvings"] == 0)
    gap = apg["objective"].to_numpy()[1:] - F_star
    assert np.all(gap <= 2 * apg["L"].to_numpy()[1:] * R / k**2 + 1e-10)  # F(Z_{k+1}) − F* ≤ 2L_k‖Z_0 − Z*‖²/k²
    pg = mt.solve(problem, "pg", tol=1e-12, max_iter=300).history
    k = pg["iter"].to_numpy()[1:]
    assert np.all(pg["objective"].to_numpy()[1:] - F_star <= pg["L"].to_numpy()[1:] * R / (2 * k) + 1e-10)


@pytest.mark.parametrize("loss", ["least_squares", "logistic"])
def test_bcd_and_pg_decrease_monotonically(loss):
    problem = tiny_problem(loss, beta=0.2)
    for method in ("bcd", "pg"):
        F = mt.solve(problem, method, tol=1e-10, max_iter=300).history["objective"].to_numpy()
        assert np.all(np.diff(F) <= 1e-12 * np.abs(F[:-1])), method


def test_small_eta_does_not_break_apg():
    problem = tiny_problem(alpha=1.0, beta=0.01)  # η = 0.01
    res = mt.solve(problem, "apg", tol=1e-9, max_iter=3000)
    assert res.status in ("converged", "max_iter")
    assert res.info["guarded_iterations"] > 0  # the safeguard was needed and acted
    F_star = mt.solve(problem, "bcd", tol=1e-12, max_iter=5000).history["objective"].iloc[-1]
    assert res.history["objective"].iloc[-1] == pytest.approx(F_star, rel=1e-5)


def test_callback_stops_and_time_excludes_it():
    problem = tiny_problem()
    seen = []
    res = mt.solve(problem, "apg", tol=1e-12, max_iter=100, callback=lambda row: seen.append(row) or len(seen) < 5)
    assert res.status == "stopped" and len(seen) == 5
    assert {"iter", "time", "objective", "grad_map", "L", "ls_trials"} <= set(res.history.columns)


def test_small_problems_run_the_blas_on_one_thread_and_restore_it():
    """Threads only add synchronisation at d ≤ SINGLE_THREAD_MAX_D (school at OMP_NUM_THREADS=2: 14× slower), so
    the solver runs the BLAS on one thread and hands the caller's setting back afterwards."""
    from threadpoolctl import threadpool_info

    from solvers.multitask.methods import SINGLE_THREAD_MAX_D, solve

    def blas_threads():
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    before, seen = blas_threads(), []
    problem = tiny_problem()
    assert problem.d <= SINGLE_THREAD_MAX_D
    solve(problem, "apg", max_iter=3, callback=lambda row: seen.append(blas_threads()))
    assert seen and all(s == {1} for s in seen)
    assert blas_threads() == before

"""Corrected duals (eqs. 14–16, App. B) against the primal solved by cvxpy, and the Woodbury route."""
import cvxpy as cp
import numpy as np
import pytest

from solvers import npsvc
from solvers.npsvc.blocks import ClassBlocks, RidgeInverse
from solvers.npsvc.problem import problem_from_arrays
from solvers.npsvc.qp import BoxQP


@pytest.mark.parametrize("shape", [(5, 12), (12, 5)])
def test_ridge_inverse_both_routes_equal_direct_inverse(shape):
    A = np.random.default_rng(0).standard_normal(shape)
    direct = np.linalg.inv(0.3 * np.eye(shape[1]) + A.T @ A)
    np.testing.assert_allclose(RidgeInverse(A, 0.3).dense(), direct, rtol=1e-9, atol=1e-10)


def small_problem(kernel):
    rng = np.random.default_rng(1)
    y = np.arange(24) % 3
    X = rng.standard_normal((24, 4)) + 2.0 * np.eye(4)[y]
    return problem_from_arrays(X, y, kernel=kernel)


def primal_hyperplane(Psi, own, c, r1, center):
    """cvxpy: min ½‖Ψ_l u‖² + c Σ_{N_l}[1 − ψ_iᵀu]₊ + (r₁/2)‖u − center‖²."""
    u = cp.Variable(Psi.shape[1])
    obj = (0.5 * cp.sum_squares(Psi[own] @ u) + c * cp.sum(cp.pos(1 - Psi[~own] @ u))
           + 0.5 * r1 * cp.sum_squares(u - center))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return u.value


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_u_step_dual_recovers_the_primal_solution(kernel):
    """λ from min ½λᵀSλ + (r₁R_lᵀP̂v − 1)ᵀλ gives û = Q(r₁P̂v + Ψ_{−l}ᵀλ) = the primal minimiser."""
    problem = small_problem(kernel)
    Psi, own = problem.features.Psi, problem.own_mask()
    rng = np.random.default_rng(2)
    Pv = rng.standard_normal(Psi.shape[1])
    c, r1 = 0.7, 0.4
    for l in range(3):
        b = ClassBlocks(problem.features, own[:, l], r1)
        center = r1 * Pv
        qp = BoxQP(b.matvec, b.Psi_other @ b.Q(center) - 1.0, c).solve(1e-12, 100_000)
        u = b.hyperplane(center, qp.x)
        np.testing.assert_allclose(u, primal_hyperplane(Psi, own[:, l], c, r1, Pv), atol=2e-5)


def test_explicit_and_operator_S_agree():
    problem = small_problem("linear")
    own = problem.own_mask()[:, 0]
    b = ClassBlocks(problem.features, own, 0.5)
    lam = np.random.default_rng(3).standard_normal(len(b.other_rows))
    dense = b.Psi_other @ b.Q(b.Psi_other.T)
    np.testing.assert_allclose(b.matvec(lam), dense @ lam, rtol=1e-10)
    kb = ClassBlocks(small_problem("rbf").features, own, 0.5)  # p = n ≥ n_other/2: Gram-block formula
    assert kb.S is not None and kb.W is not None
    np.testing.assert_allclose(kb.S, kb.Psi_other @ kb.Q(kb.Psi_other.T), atol=1e-9)
    # (G_{−l,−l} − WᵀW)/r₁ is exactly symmetric: the Newton step's product S[F]ᵀd_F relies on it
    np.testing.assert_array_equal(kb.S, kb.S.T)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_twsvm_hyperplanes_match_cvxpy(kernel):
    problem = small_problem(kernel)
    res = npsvc.solve(problem, "twsvm", tol=1e-10, max_iter=50_000, c=0.7, r1=0.4)
    assert res.status == "converged"
    Psi, own = problem.features.Psi, problem.own_mask()
    for l in range(3):
        ref = primal_hyperplane(Psi, own[:, l], 0.7, 0.4, np.zeros(Psi.shape[1]))
        np.testing.assert_allclose(res.solution["U"][:, l], ref, atol=2e-5)


@pytest.mark.parametrize("tau_p", [0.0, 0.3])
def test_twsvm_equals_its_duals_solved_alone_and_in_lockstep(tau_p):
    """run_twsvm (duals one after another, each to its relative gap) against each dual solved by BoxQP.solve
    to a KKT residual of 1e-12 and against the lockstep iteration (baselines.advance), in λ and u."""
    from solvers.npsvc.baselines import advance

    problem = small_problem("rbf")
    method, extra = ("pin-twsvm", {"tau_p": tau_p}) if tau_p else ("twsvm", {})
    res = npsvc.solve(problem, method, tol=1e-12, max_iter=50_000, c=0.7, r1=0.4, **extra)
    assert res.converged
    blocks = [ClassBlocks(problem.features, own, 0.4) for own in problem.own_mask().T]
    alone = [BoxQP(b.matvec, -np.ones(len(b.other_rows)), 0.7, lower=-0.7 * tau_p).solve(1e-12, S=b.S)
             for b in blocks]
    lockstep = [BoxQP(b.matvec, -np.ones(len(b.other_rows)), 0.7, lower=-0.7 * tau_p) for b in blocks]
    for k in range(1, 50_000):
        if max(q.kkt_residual() for q in lockstep) <= 1e-12:
            break
        advance(lockstep, [b.S for b in blocks], k)
    for b, lam, a, s in zip(blocks, res.solution["lambdas"], alone, lockstep):
        # the duals may have several minimisers (S_l is only PSD); u = Q_lΨ_{−l}ᵀλ is unique (strongly convex primal)
        u = b.hyperplane(0.0, lam)
        for ref in (a.x, s.x):
            u_ref = b.hyperplane(0.0, ref)
            np.testing.assert_allclose(u, u_ref, rtol=0, atol=1e-6 * np.abs(u_ref).max())
            assert abs(0.5 * lam @ b.matvec(lam) - lam.sum() - (0.5 * ref @ b.matvec(ref) - ref.sum())) <= 1e-9 * len(lam)


def test_twsvm_duality_gap_reaches_zero():
    res = npsvc.solve(small_problem("rbf"), "twsvm", tol=1e-9, max_iter=50_000)
    gaps = res.history["optimality"].to_numpy()
    assert res.converged and gaps[-1] <= 1e-9 and np.all(gaps >= 0)


def test_lstsvm_matches_cvxpy():
    problem = small_problem("linear")
    Psi, own = problem.features.Psi, problem.own_mask()
    res = npsvc.solve(problem, "lstsvm", c=2.0, r1=0.3)
    for l in range(3):
        u = cp.Variable(Psi.shape[1])
        obj = (0.5 * cp.sum_squares(Psi[own[:, l]] @ u) + 1.0 * cp.sum_squares(1 - Psi[~own[:, l]] @ u)
               + 0.15 * cp.sum_squares(u))
        cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
        np.testing.assert_allclose(res.solution["U"][:, l], u.value, atol=1e-6)
    assert res.converged and res.history["optimality"].iloc[-1] <= 1e-10


def test_pinball_twsvm_matches_cvxpy():
    """Pinball ℓ_d(a) = max(1 − a, τ_p(a − 1)): dual box −τ_p c ≤ λ ≤ c (Xu et al. 2017)."""
    problem = small_problem("rbf")
    Psi, own = problem.features.Psi, problem.own_mask()
    res = npsvc.solve(problem, "pin-twsvm", tol=1e-10, max_iter=50_000, c=0.7, r1=0.4, tau_p=0.3)
    assert res.converged
    for l in range(3):
        u = cp.Variable(Psi.shape[1])
        a = Psi[~own[:, l]] @ u
        obj = (0.5 * cp.sum_squares(Psi[own[:, l]] @ u) + 0.7 * cp.sum(cp.maximum(1 - a, 0.3 * (a - 1)))
               + 0.2 * cp.sum_squares(u))
        cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11)
        np.testing.assert_allclose(res.solution["U"][:, l], u.value, atol=2e-5)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_npsvm_matches_cvxpy(kernel):
    """NPSVM: (r₁/2)‖u‖² + Σ_{S_l}[|ψᵀu| − ε]₊ + c Σ_{N_l}[1 − ψᵀu]₊ (Tian et al. 2014)."""
    problem = small_problem(kernel)
    Psi, own = problem.features.Psi, problem.own_mask()
    res = npsvc.solve(problem, "npsvm", tol=1e-10, max_iter=50_000, c=0.7, r1=0.4, eps=0.2)
    assert res.converged
    for l in range(3):
        u = cp.Variable(Psi.shape[1])
        obj = (0.2 * cp.sum_squares(u) + cp.sum(cp.pos(cp.abs(Psi[own[:, l]] @ u) - 0.2))
               + 0.7 * cp.sum(cp.pos(1 - Psi[~own[:, l]] @ u)))
        cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11)
        np.testing.assert_allclose(res.solution["U"][:, l], u.value, atol=2e-5)
        # the primal J_l recorded from the QP state (½xᵀSx and Sx) equals J_l evaluated at the returned u_l
        f, u_l = Psi @ res.solution["U"][:, l], res.solution["U"][:, l]
        direct = (0.2 * u_l @ u_l + np.maximum(np.abs(f[own[:, l]]) - 0.2, 0).sum()
                  + 0.7 * np.maximum(1 - f[~own[:, l]], 0).sum())
        assert res.history[f"J_{l}"].iloc[-1] == pytest.approx(direct, rel=1e-9)


@pytest.mark.parametrize("method, extra", [("twsvm", {}), ("pin-twsvm", {"tau_p": 0.3})])
def test_twsvm_history_is_a_max_over_classes_solved_one_by_one(method, extra):
    """Duals solved one after another: the recorded gap is the max over classes (unstarted ones at λ = 0,
    relative gap 1), so it stays ≥ the last class's gap at λ = 0 until the last dual starts; ``iter`` counts
    QP iterations over all classes; every row has the Chebyshev columns; the last row has accuracies."""
    problem = small_problem("rbf")
    res = npsvc.solve(problem, method, tol=1e-10, max_iter=50_000, c=0.7, r1=0.4, **extra)
    h = res.history
    assert res.converged and h["optimality"].iloc[-1] <= 1e-10 and np.all(np.diff(h["iter"]) > 0)
    n_other = (~problem.own_mask()).sum(0)
    at_zero = 0.7 * n_other  # J_l at u = 0
    last_started = h["J_2"] != at_zero[2]
    assert np.all(h.loc[~last_started, "optimality"] == 1.0)  # c n_{−l} ≥ 1: relative gap exactly 1 at λ = 0
    assert {"J_0", "J_1", "J_2", "primal", "gap", "tau_0"} <= set(h.columns)
    assert np.isfinite(h["train_acc"].iloc[-1])  # (small_problem has no test rows: test_acc is NaN)
    np.testing.assert_allclose(h["objective"], h[["J_0", "J_1", "J_2"]].max(axis=1))
    # the progress column (the page's bar) rises through (0, 1] and reaches 1 only when the last dual is done
    assert np.all(np.diff(h["progress"]) >= 0) and h["progress"].iloc[-1] == 1.0
    assert np.all(h["progress"].iloc[:-1] < 1.0) and h["progress"].iloc[0] > 0


def test_twsvm_callback_stops_inside_a_dual():
    rows = []
    res = npsvc.solve(small_problem("rbf"), "twsvm", tol=1e-12, max_iter=50_000,
                      callback=lambda row: rows.append(row) or len(rows) < 2)
    assert res.status == "stopped" and len(res.history) == 2 == len(rows)
    assert np.isfinite(res.history["train_acc"].iloc[-1])

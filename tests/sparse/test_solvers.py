"""Every method against independent references: brute-force best subset, oracle refits,
L-stationarity, monotonicity, dense/sparse agreement and the identities between methods."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from solvers.core import InputError
from solvers.datasets import generate
from solvers.sparse import METHODS, SparseProblem, make_problem, solve
from solvers.sparse.newton import pcg

from .conftest import random_problem
from .test_problem import beck_eldar_stationary

PG_TYPE = ["pg", "apg", "pg+", "apg+", "pg-ll", "apg-ll+"]


def restricted_minimiser(pb, J):
    """argmin f over supp ⊆ J, computed independently of the solvers (lstsq or BFGS)."""
    XJ = pb.X[:, J].toarray() if sp.issparse(pb.X) else pb.X[:, J]
    if pb.loss == "ls":
        return np.linalg.lstsq(XJ, pb.y, rcond=None)[0]

    def f(v):
        z = -pb.y * (XJ @ v)
        return np.logaddexp(0, z).sum() + 0.5 * pb.ridge * v @ v, XJ.T @ (-pb.y / (1 + np.exp(-z))) + pb.ridge * v

    def hess(v):
        p = 1 / (1 + np.exp(-pb.y * (XJ @ v)))
        return XJ.T @ ((p * (1 - p))[:, None] * XJ) + pb.ridge * np.eye(len(J))

    return minimize(f, np.zeros(len(J)), jac=True, hess=hess, method="trust-exact", options={"gtol": 1e-11}).x


def brute_force(pb):
    best = (np.inf, None)
    for J in itertools.combinations(range(pb.n), pb.s):
        J = list(J)
        w = np.zeros(pb.n)
        w[J] = restricted_minimiser(pb, J)
        best = min(best, (pb.objective(w), tuple(J)), key=lambda t: t[0])
    return best


@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_brute_force_best_subset_is_reached_and_every_output_is_stationary(loss):
    pb = random_problem(loss, m=40, n=10, s=3, seed=1, mu=1e-2)
    f_star, J_star = brute_force(pb)
    for method in METHODS:
        r = solve(pb, method, tol=1e-9, max_iter=200 if method == "grasp" else 20_000)  # GraSP may cycle
        w = r.solution["w"]
        assert np.count_nonzero(w) <= pb.s
        assert pb.objective(w) >= f_star - 1e-8 * max(1, abs(f_star))  # nobody beats the global optimum
        if method == "grasp":
            continue  # GraSP is not a stationary-point method
        assert r.status == "converged", method
        assert beck_eldar_stationary(pb, w, atol=1e-5 * max(1, np.abs(pb.gradient(np.zeros(pb.n))).max()))
        # benign instance (strong signal, m = 4n): every method finds the global optimum
        assert pb.objective(w) == pytest.approx(f_star, rel=1e-7), method
        assert tuple(np.flatnonzero(w)) == J_star


@pytest.mark.parametrize("loss", ["ls", "logistic"])
@pytest.mark.parametrize("method", PG_TYPE)
def test_oracle_refit_on_the_final_support_equals_the_solution(loss, method):
    pb = random_problem(loss, m=30, n=60, s=4, seed=2, mu=1e-2)
    r = solve(pb, method, tol=1e-10, max_iter=50_000)
    assert r.status == "converged"
    J = r.solution["support"]
    np.testing.assert_allclose(r.solution["w"][J], restricted_minimiser(pb, J), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("loss", ["ls", "logistic"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("method", PG_TYPE)
def test_monotone_methods_never_increase_f(loss, sparse, method):
    pb = random_problem(loss, m=25, n=80, s=5, seed=3, sparse=sparse)
    h = solve(pb, method, tol=1e-8, max_iter=3000).history
    f = h["objective"].to_numpy()
    assert np.all(np.diff(f) <= 1e-10 * np.maximum(1.0, np.abs(f[:-1])))
    assert (h["support_size"] <= pb.s).all()


@pytest.mark.parametrize("loss", ["ls", "logistic"])
@pytest.mark.parametrize("method", list(METHODS))
def test_sparse_and_dense_X_give_the_same_iterates(loss, method):
    if method == "grasp" and loss == "logistic":
        pytest.skip("GraSP's inner solve has no minimiser on separable data (it stops at its cap), so round-off "
                    "can change its path")
    sparse = random_problem(loss, m=25, n=40, s=3, seed=4, sparse=True)
    a = solve(sparse, method, tol=1e-8, max_iter=40)  # few iterations: long runs amplify round-off (t ≫ 1)
    b = solve(SparseProblem(sparse.X.toarray(), sparse.y, loss=loss, s=3), method, tol=1e-8, max_iter=40)
    assert len(a.history) == len(b.history)
    np.testing.assert_allclose(a.history["objective"], b.history["objective"], rtol=1e-9)
    np.testing.assert_allclose(a.solution["w"], b.solution["w"], rtol=1e-6, atol=1e-9)


def test_orthonormal_design_converges_to_the_hard_thresholded_solution():
    rng = np.random.default_rng(7)
    Q = np.linalg.qr(rng.standard_normal((30, 12)))[0]  # XᵀX = I
    y = Q @ np.r_[5.0, -4.0, 3.0, np.zeros(9)] + 0.1 * rng.standard_normal(30)
    pb = SparseProblem(Q, y, loss="ls", s=3)
    c = Q.T @ y
    expect = np.where(np.isin(np.arange(12), np.argsort(-np.abs(c))[:3]), c, 0.0)  # H_s(Xᵀy)
    for method in ("pg", "apg", "apg+"):
        r = solve(pb, method, tol=1e-12, max_iter=10_000)
        np.testing.assert_allclose(r.solution["w"], expect, atol=1e-9)


def test_noiseless_compressed_sensing_recovers_the_support():
    rng = np.random.default_rng(8)
    m, n, s = 100, 200, 4
    X = rng.standard_normal((m, n)) / np.sqrt(m)
    w = np.zeros(n)
    w[[5, 50, 120, 190]] = [1.0, -1.5, 2.0, -1.0]
    pb = SparseProblem(X, X @ w, loss="ls", s=s)
    for method in ("apg", "apg+", "pg-ll"):
        r = solve(pb, method, tol=1e-10, max_iter=20_000)
        assert r.solution["support"].tolist() == [5, 50, 120, 190]
        assert pb.objective(r.solution["w"]) < 1e-12


@pytest.mark.parametrize("base", [("pg+", "pg"), ("apg+", "apg"), ("apg-ll+", None)])
def test_without_identification_newton_variants_reduce_to_their_base(base):
    plus, plain = base
    pb = random_problem("logistic", m=25, n=40, s=3, seed=5)
    a = solve(pb, plus, tol=1e-7, max_iter=2000, S=10**9)
    assert a.info["hess_vec"] == 0 and not a.history["newton"].any()
    if plain:
        b = solve(pb, plain, tol=1e-7, max_iter=2000)
        np.testing.assert_array_equal(a.history["objective"], b.history["objective"])
        np.testing.assert_array_equal(a.solution["w"], b.solution["w"])


def test_tiny_alpha_max_turns_apg_into_pg_in_objective():
    """With α_max → 0 the extrapolation step vanishes, so APG follows PG (up to round-off)."""
    pb = random_problem("ls", m=25, n=40, s=3, seed=6)
    a = solve(pb, "apg", tol=1e-8, max_iter=500, alpha_min=1e-14, alpha_max=1e-14)
    b = solve(pb, "pg", tol=1e-8, max_iter=500)
    assert len(a.history) == len(b.history)
    np.testing.assert_allclose(a.history["objective"], b.history["objective"], rtol=1e-10)


def test_counters_are_exact():
    pb = random_problem("ls", m=25, n=40, s=3, seed=9)
    for method, per_iter in (("pg", 1), ("apg", 1), ("apg+", 1), ("pg-ll", 2), ("apg-ll+", 2)):
        r = solve(pb, method, tol=1e-9, max_iter=5000)
        assert r.info["grad_evals"] == per_iter * r.info["n_iter"] == r.history["grad_evals"].iloc[-1]
        assert r.info["hess_vec"] == r.history["cg_iters"].sum()


def test_apg_plus_identifies_the_support_and_then_takes_newton_steps():
    pb = random_problem("logistic", m=40, n=100, s=4, seed=10)
    r = solve(pb, "apg+", tol=1e-9, max_iter=5000)
    h = r.history
    first = int(h.index[h["newton"]][0])
    assert (h["unchanged"].iloc[first] >= 5) and r.info["identified_at"] <= h["iter"].iloc[first]
    assert (h["support_changes"].iloc[first:] == 0).all()  # finite identification (Thm 2.1 b)
    assert r.info["hess_vec"] > 0


def test_pcg_solves_a_diagonal_system_in_one_step_and_descends_otherwise():
    H = np.diag([1.0, 4.0, 9.0])
    g = np.array([1.0, -2.0, 3.0])
    p, n_hv = pcg(lambda v: H @ v, g, np.diag(H).copy(), max_iter=3)
    np.testing.assert_allclose(p, -np.linalg.solve(H, g))
    assert n_hv == 1
    A = np.random.default_rng(0).standard_normal((8, 5))
    H = A.T @ A
    p, _ = pcg(lambda v: H @ v, g @ np.ones((3, 5)) / 3 + np.arange(5), np.diag(H).copy(), max_iter=5)
    assert p @ (g @ np.ones((3, 5)) / 3 + np.arange(5)) < 0


def test_runs_are_deterministic():
    pb = random_problem("logistic", m=25, n=40, s=3, seed=11)
    a, b = (solve(pb, "apg+", tol=1e-9, max_iter=1000) for _ in range(2))
    np.testing.assert_array_equal(a.history["objective"], b.history["objective"])
    np.testing.assert_array_equal(a.solution["w"], b.solution["w"])


def test_callback_false_stops_and_bad_parameters_are_refused():
    pb = random_problem("ls")
    r = solve(pb, "pg", tol=1e-12, max_iter=1000, callback=lambda row: row["iter"] < 3)
    assert r.status == "stopped" and len(r.history) == 3
    with pytest.raises(InputError, match="alpha_min"):
        solve(pb, "apg", alpha_min=10.0, alpha_max=1.0)
    with pytest.raises(InputError, match="unknown method"):
        solve(pb, "nhtp")
    with pytest.raises(InputError, match="sigma"):
        solve(pb, "apg", sigma=1.5)
    with pytest.raises(InputError, match="SparseProblem"):
        solve("not a problem", "pg")


@pytest.mark.parametrize("loss", ["ls", "logistic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grasp_refits_on_its_final_support_and_its_stopping_rule_fires(loss, seed):
    pb = random_problem(loss, m=40, n=120, s=5, seed=seed, mu=1e-2)
    r = solve(pb, "grasp", tol=1e-8, max_iter=10_000)
    assert r.info["stalled"] and r.info["n_iter"] < 200  # the old rule (w unchanged bit for bit) never fired
    assert r.status == "converged"  # the refit is a restricted minimiser, stationary on these instances
    J = r.solution["support"]
    assert 0 < J.size <= pb.s
    np.testing.assert_allclose(r.solution["w"][J], restricted_minimiser(pb, J), rtol=1e-4, atol=1e-6)
    assert r.history["objective"].iloc[-1] <= r.history["objective"].iloc[-2] + 1e-12  # the refit never hurts


@pytest.mark.parametrize("loss, generator", [("ls", "sparse-regression"), ("logistic", "sparse-classification")])
def test_grasp_last_row_and_status_describe_the_returned_point(loss, generator):
    """The page's probe (m = n = 10): GraSP stalls; its refit is what the last row and the status speak of."""
    pb = make_problem(generate(generator, m=10, n=10, m_test=0, seed=0), loss=loss)
    r = solve(pb, "grasp", tol=1e-6, max_iter=2000)
    w, last = r.solution["w"], r.history.iloc[-1]
    assert r.info["stalled"]
    assert last["objective"] == pytest.approx(pb.objective(w), rel=1e-12, abs=1e-15)
    assert last["residual"] == pytest.approx(pb.residual(w), rel=1e-9, abs=1e-15)
    assert r.status == ("converged" if pb.residual(w) <= 1e-6 else "stopped")
    if loss == "ls":
        assert r.status == "stopped" and pb.residual(w) > 1e-2  # the stall is far from stationary

"""The problem layer: derivatives, cached evaluations, residual (24), s rules, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from solvers.core import InputError, hard_threshold
from solvers import cli
from solvers.datasets import Dataset, generate
from solvers.sparse import SparseProblem, make_problem, sparsity_from_ratio, train_test
from solvers.sparse.extrapolation import extrapolate
from solvers.sparse.lipschitz import RTOL

from .conftest import random_problem


@pytest.mark.parametrize("loss", ["ls", "logistic"])
@pytest.mark.parametrize("sparse", [False, True])
def test_gradient_and_hessian_vector_match_finite_differences(loss, sparse):
    pb = random_problem(loss, sparse=sparse, mu=1e-2)
    rng = np.random.default_rng(1)
    w, v = rng.standard_normal(pb.n) * 0.3, rng.standard_normal(pb.n)
    h = 1e-6
    fd_grad = np.array([(pb.objective(w + h * e) - pb.objective(w - h * e)) / (2 * h) for e in np.eye(pb.n)])
    np.testing.assert_allclose(pb.gradient(w), fd_grad, rtol=1e-6, atol=1e-6)
    fd_hv = (pb.gradient(w + h * v) - pb.gradient(w - h * v)) / (2 * h)
    np.testing.assert_allclose(pb.hessian_vector(w, v), fd_hv, rtol=1e-5, atol=1e-5)


def test_objective_matches_the_formulas_of_the_paper():
    pb = random_problem("logistic", mu=0.5)
    w = np.random.default_rng(2).standard_normal(pb.n)
    X = pb.X
    direct = np.sum(np.log1p(np.exp(-pb.y * (X @ w)))) + 0.25 * w @ w  # (23)
    assert pb.objective(w) == pytest.approx(direct, rel=1e-12)
    ls = random_problem("ls")
    assert ls.objective(w) == pytest.approx(0.5 * np.sum((ls.y - ls.X @ w) ** 2), rel=1e-12)  # (3): a sum


@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_line_quantities_from_cached_margins_equal_direct_ones(loss):
    """(17): ⟨∇f, d⟩ and ⟨∇²f d, d⟩ from u = Xw and Xd; f(w + td) from u + tXd."""
    pb = random_problem(loss, mu=1e-1)
    rng = np.random.default_rng(3)
    J = np.arange(pb.s)
    w, d = np.zeros(pb.n), np.zeros(pb.n)
    w[J], d[J] = rng.standard_normal(pb.s), rng.standard_normal(pb.s)
    p = pb.point(w, J)
    Xd = pb.X @ d
    assert pb.dloss(p.u) @ Xd + pb.ridge * w @ d == pytest.approx(pb.gradient(w) @ d, rel=1e-10)
    D = pb.curvature(p.u)
    curv = Xd @ (Xd if D is None else D * Xd) + pb.ridge * d @ d
    assert curv == pytest.approx(pb.hessian_vector(w, d) @ d, rel=1e-10)
    assert pb.value(p.u + 0.7 * Xd, float((w + 0.7 * d) @ (w + 0.7 * d))) == pytest.approx(pb.objective(w + 0.7 * d))


def test_curvature_step_is_the_exact_line_minimiser_for_least_squares():
    pb = random_problem("ls", m=30, n=8, s=8)
    rng = np.random.default_rng(4)
    J = np.arange(pb.n)
    prev = pb.point(rng.standard_normal(pb.n) * 0.1, J)
    w = prev.w - 0.01 * pb.gradient(prev.w)  # d = w − prev is a descent direction
    cur = pb.point(w, J)
    z, info = extrapolate(pb, prev, cur, sigma=1e-12, eta=0.5, eps=1e-20, alpha_min=1e-12, alpha_max=1e12,
                          alpha_scale="absolute", step_rule="curvature", max_backtracks=60)
    assert info.accepted and info.backtracks == 0
    d = cur.w - prev.w
    ts = np.linspace(0, 3 * info.t, 3001)
    brute = ts[np.argmin([pb.objective(w + t * d) for t in ts])]
    assert info.t == pytest.approx(brute, abs=3 * info.t / 3000)
    assert z.f <= cur.f - 1e-12 * info.t**2 * (d @ d)  # (12)


def test_safeguard_clips_the_step_into_c_alpha_range():
    pb = random_problem("ls", m=30, n=8, s=8)
    J = np.arange(pb.n)
    prev = pb.point(np.zeros(pb.n), J)
    cur = pb.point(-1e-3 * pb.gradient(prev.w), J)
    _, info = extrapolate(pb, prev, cur, sigma=0.05, eta=0.5, eps=1e-20, alpha_min=1.0, alpha_max=1.0,
                          alpha_scale="absolute", step_rule="curvature", max_backtracks=0)
    g = pb.gradient(cur.w)
    d = cur.w - prev.w
    c = (g @ g) / -(g @ d)  # (20) with J = all
    assert info.t_hat == pytest.approx(c, rel=1e-10)  # α_min = α_max pins t̂ = c
    _, scaled = extrapolate(pb, prev, cur, sigma=0.05, eta=0.5, eps=1e-20, alpha_min=1.0, alpha_max=1.0,
                            alpha_scale="lambda", step_rule="curvature", max_backtracks=0)
    assert scaled.t_hat == pytest.approx(c * pb.lam, rel=1e-10)


def beck_eldar_stationary(pb, w, atol):
    """L-stationarity with L = 1/λ: ∇_i f = 0 on supp w, |∇_j f| ≤ M_s(w)/λ off it."""
    g = pb.gradient(w)
    supp = np.flatnonzero(w)
    off = np.setdiff1d(np.arange(pb.n), supp)
    Ms = np.sort(np.abs(w))[::-1][pb.s - 1] if supp.size >= pb.s else 0.0
    return np.all(np.abs(g[supp]) <= atol) and np.all(np.abs(g[off]) <= Ms / pb.lam + atol)


def test_residual_is_zero_exactly_at_fixed_points():
    pb = random_problem("ls", m=25, n=10, s=3)
    for J in ([0, 1, 2], [3, 7, 9], [1, 4]):  # restricted minimisers: ∇_J f = 0
        w = np.zeros(pb.n)
        w[J] = np.linalg.lstsq(pb.X[:, J], pb.y, rcond=None)[0]
        fixed = np.array_equal(hard_threshold(w - pb.lam * pb.gradient(w), pb.s, np.flatnonzero(w))[0], w)
        assert (pb.residual(w) == 0.0) == fixed
        assert fixed == beck_eldar_stationary(pb, w, atol=1e-9)
    rng = np.random.default_rng(5)
    for _ in range(20):
        w = hard_threshold(rng.standard_normal(pb.n), pb.s)[0]
        assert pb.residual(w) > 0 and not beck_eldar_stationary(pb, w, atol=1e-9)


def test_s_from_ratio_floor_and_ceil_as_in_the_paper():
    assert sparsity_from_ratio(0.01, 50) == 1
    assert sparsity_from_ratio(0.05, 38) == 2
    assert sparsity_from_ratio(0.6, 1000) == 600  # not 601 from float round-off
    assert sparsity_from_ratio(0.01, 20242, "floor") == 202
    assert sparsity_from_ratio(1.1, 38) == 42


def test_lipschitz_constant_modes():
    X = np.random.default_rng(6).standard_normal((15, 6))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    sig2 = np.linalg.norm(X, 2) ** 2
    assert SparseProblem(X, y, loss="ls", s=2).L == pytest.approx(sig2)
    assert SparseProblem(X, y, loss="logistic", s=2, mu=0.1).L == pytest.approx(sig2 + 0.1)
    assert SparseProblem(X, y, loss="logistic", s=2, mu=0.1, lipschitz="tight").L == pytest.approx(sig2 / 4 + 0.1)
    Xs = sp.random(300, 400, density=0.02, format="csr", random_state=0)
    exact = np.linalg.norm(Xs.toarray(), 2) ** 2
    assert exact <= SparseProblem(Xs, np.ones(300), s=3).L <= exact * (1 + RTOL) ** 2  # a safe bound, within rtol
    assert SparseProblem(Xs, np.ones(300), s=3, L=2 * exact).lam == pytest.approx(0.999 / (2 * exact))  # L passed in


@pytest.mark.parametrize("kwargs, match", [
    ({"s": 0}, "between 1"),
    ({"s": 11}, "between 1"),
    ({"y": np.arange(20.0) % 3, "loss": "logistic"}, "needs exactly 2"),
    ({"X": np.full((20, 10), np.nan)}, "NaN"),
    ({"y": np.ones(19)}, "rows"),
    ({"X": np.zeros((20, 10))}, "all zeros"),
    ({"X": np.zeros((20, 0))}, "empty"),
    ({"y": np.r_[np.ones(19), np.inf]}, "NaN or infinite"),
    ({"loss": "hinge"}, "loss must be"),
    ({"X": sp.csr_matrix((20, 10))}, "all zeros"),
    ({"L": -1.0}, "L = -1.0 must be"),
    ({"s": 2.5}, "integer between 1"),
])
def test_bad_input_is_refused_before_any_work(kwargs, match):
    rng = np.random.default_rng(0)
    args = {"X": rng.standard_normal((20, 10)), "y": rng.standard_normal(20), "s": 3, "loss": "ls"}
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        SparseProblem(args.pop("X"), args.pop("y"), **args)


def test_make_problem_from_datasets():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 30))
    reg = Dataset("r", X, rng.standard_normal(50), "regression")
    cls = Dataset("c", X, np.where(rng.random(50) > 0.5, "yes", "no"), "classification")
    assert make_problem(reg, s=4).s == 4
    assert make_problem(reg, s_ratio=0.1).s == 5
    assert make_problem(cls, loss="ls", s=2).y.tolist().count(1.0) == np.sum(cls.y == "yes")
    assert make_problem(cls, loss="logistic", s=2).loss == "logistic"
    with pytest.raises(InputError, match="regression dataset"):
        make_problem(reg, loss="logistic")
    with pytest.raises(InputError, match="exceeds the number of features"):
        make_problem(reg, s_ratio=1.0)


def test_the_command_line_fits_the_training_rows_as_the_page_does(capsys):
    """The page fits `train_test`'s training part; the command line hands make_problem the whole dataset, whose
    m_test generated rows were fitted too (κ = 0.1 on 100 + 50 rows gave s = 15). Both now fit the 100 rows."""
    ds = generate("sparse-regression", m=100, n=40, m_test=50, seed=0)
    train, _ = train_test(ds)
    problem = make_problem(ds, s_ratio=0.1)
    assert problem.s == 10 and problem.X.shape[0] == 100
    np.testing.assert_array_equal(problem.y, train.y)
    args = ["sparse", "pg", "--generator", "sparse-regression", "--gen-m", "100", "--gen-n", "40", "--gen-m-test", "50"]
    assert cli.main([*args, "--s-ratio", "0.1", "--max-iter", "3"]) == 0
    assert "s=10" in capsys.readouterr().out
    assert cli.main([*args, "--s-ratio", "0.5"]) == 2
    assert "⌈0.5·100⌉ = 50 exceeds the number of features n = 40" in capsys.readouterr().err


@pytest.mark.parametrize("kappa, rounding, message", [
    (0.01, "floor", "s = ⌊κ·m⌋ = ⌊0.01·50⌋ = 0 leaves no feature to select; raise κ"),
    (1.0, "floor", "s = ⌊κ·m⌋ = ⌊1·50⌋ = 50 exceeds the number of features n = 30; lower κ"),
    (0.9, "ceil", "s = ⌈κ·m⌉ = ⌈0.9·50⌉ = 45 exceeds the number of features n = 30; lower κ"),
])
def test_a_refused_sparsity_ratio_names_kappa_and_the_rounding(kappa, rounding, message):
    """The user set κ and the rounding, not s: the message says what they set and what to change."""
    X = np.random.default_rng(0).standard_normal((50, 30))
    with pytest.raises(InputError) as refusal:
        make_problem(Dataset("r", X, X[:, 0], "regression"), s_ratio=kappa, s_rounding=rounding)
    assert str(refusal.value).startswith(message)

"""Beyond the paper: swap polish, column normalisation, intercept and the path over s, each against
an independent reference (brute-force best subset on n ≤ 12, scikit-learn's OMP, the paper-exact APG+)."""
import numpy as np
import pytest
from sklearn.linear_model import OrthogonalMatchingPursuit

from solvers.core import InputError
from solvers.sparse import (SparseLinearRegression, SparseLinearRegressionPath, SparseLogisticRegression,
                            SparseLogisticRegressionPath, SparseProblem, solve)
from solvers.sparse.polish import swap_polish

from .conftest import random_problem
from .test_solvers import brute_force, restricted_minimiser

PAPER_EXACT = dict(method="apg+", fit_intercept=False, normalize=False, warm_path=False, greedy=False, polish=False,
                   lipschitz="paper")


def correlated_design(seed, m=30, n=12, rho=0.8):
    """Equicorrelated columns with unequal scales: the case where a local method from 0 goes wrong."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((m, n)) + rho * rng.standard_normal((m, 1)) * 3
    X = Z * rng.uniform(0.2, 5.0, n)
    w = np.zeros(n)
    w[rng.choice(n, 3, replace=False)] = rng.choice([-1.0, 1.0], 3) / X.std(axis=0)[:3].mean()
    y = X @ w + 0.5 * rng.standard_normal(m)
    return X, y


@pytest.mark.parametrize("seed", range(6))
def test_default_path_finds_the_brute_force_best_subset_for_every_s(seed):
    X, y = correlated_design(seed)
    est = SparseLinearRegressionPath(s_max=4, fit_intercept=False).fit(X, y)
    for s in range(1, 5):
        pb = SparseProblem(X, y, loss="ls", s=s)
        f_star, J_star = brute_force(pb)
        coef = est.coef_path_[s - 1]
        assert np.count_nonzero(coef) <= s
        assert pb.objective(coef) == pytest.approx(f_star, rel=1e-8), (seed, s)
        paper = SparseLinearRegression(s=s, **PAPER_EXACT).fit(X, y)  # on these, mostly a worse subset
        assert pb.objective(paper.coef_) >= f_star * (1 - 1e-10)
    assert np.all(np.diff(est.objective_path_) <= 1e-9 * est.objective_path_[:-1])  # warm starts: f_s ≤ f_{s−1}


def test_default_estimator_is_at_least_as_good_as_omp_on_raw_and_normalised_columns():
    for seed in range(8):
        X, y = correlated_design(seed, m=40, n=60)
        for s in (1, 3, 5):
            pb = SparseProblem(X, y, loss="ls", s=s)
            ours = pb.objective(SparseLinearRegression(s=s, fit_intercept=False).fit(X, y).coef_)
            raw = OrthogonalMatchingPursuit(n_nonzero_coefs=s, fit_intercept=False).fit(X, y).coef_
            scale = np.linalg.norm(X, axis=0)
            normed = OrthogonalMatchingPursuit(n_nonzero_coefs=s, fit_intercept=False).fit(X / scale, y).coef_ / scale
            assert ours <= min(pb.objective(raw), pb.objective(normed)) * (1 + 1e-9), (seed, s)


def test_greedy_start_is_omp_on_unit_norm_columns():
    from solvers.sparse.path import greedy_support
    from solvers.sparse.design import column_norms

    for seed in range(4):
        X, y = correlated_design(seed, m=40, n=60)
        pb = SparseProblem(X, y, loss="ls", s=5)
        w = greedy_support(pb, 5, column_norms(X))
        scale = np.linalg.norm(X, axis=0)
        omp = OrthogonalMatchingPursuit(n_nonzero_coefs=5, fit_intercept=False).fit(X / scale, y).coef_ / scale
        np.testing.assert_allclose(w, omp, rtol=1e-7, atol=1e-10)


def test_polish_never_increases_f_and_returns_the_refit_on_its_support():
    for seed in range(5):
        pb = random_problem("ls", m=30, n=40, s=4, seed=seed)
        w = np.zeros(pb.n)
        w[[0, 1, 2, 3]] = 1.0  # an arbitrary (bad) start support
        x, info = swap_polish(pb, w)
        assert x.f <= pb.objective(w) and np.count_nonzero(x.w) <= pb.s
        J = np.flatnonzero(x.w)
        np.testing.assert_allclose(x.w[J], restricted_minimiser(pb, J), rtol=1e-8, atol=1e-10)
        assert info.swaps >= 0 and x.f == pytest.approx(pb.objective(x.w), rel=1e-12)


def test_logistic_with_polish_reaches_the_brute_force_best_subset():
    pb = random_problem("logistic", m=40, n=10, s=3, seed=1, mu=1e-2)
    f_star, _ = brute_force(pb)
    est = SparseLogisticRegression(s=3, mu=1e-2, fit_intercept=False, normalize=False).fit(pb.X, pb.y)
    assert pb.objective(est.coef_) == pytest.approx(f_star, rel=1e-6)


def test_normalised_columns_give_the_same_problem_in_other_units():
    X, y = correlated_design(3, m=40, n=30)
    D = np.random.default_rng(0).uniform(0.01, 100.0, X.shape[1])
    a = SparseLinearRegression(s=4, fit_intercept=False).fit(X, y)
    b = SparseLinearRegression(s=4, fit_intercept=False).fit(X * D, y)
    assert a.support_.tolist() == b.support_.tolist()  # supports do not depend on the units of the columns
    np.testing.assert_allclose(a.coef_, b.coef_ * D, rtol=1e-7, atol=1e-10)


def test_intercept_equals_least_squares_on_centred_data():
    X, y = correlated_design(4, m=50, n=20)
    est = SparseLinearRegression(s=3).fit(X, y + 10.0)
    J = est.support_
    Xc = X[:, J] - X[:, J].mean(axis=0)
    coef = np.linalg.lstsq(Xc, y - y.mean(), rcond=None)[0]  # LS with an intercept = LS on centred data
    np.testing.assert_allclose(est.coef_[J], coef, rtol=1e-7)
    assert est.intercept_ == pytest.approx(y.mean() + 10.0 - X[:, J].mean(axis=0) @ coef, rel=1e-8)
    assert est.score(X, y + 10.0) > 0.5
    no_b = SparseLinearRegression(s=3, fit_intercept=False).fit(X, y + 10.0)
    assert no_b.intercept_ == 0.0 and no_b.score(X, y + 10.0) < est.score(X, y + 10.0)


def test_method_names_are_case_insensitive_and_the_paper_exact_method_is_algorithm_2():
    pb = random_problem("ls", m=30, n=50, s=3, seed=7)
    est = SparseLinearRegression(s=3, tol=1e-9, **{**PAPER_EXACT, "method": "APG+"}).fit(pb.X, pb.y)
    r = solve(pb, "apg+", tol=1e-9)
    np.testing.assert_allclose(est.coef_, r.solution["w"], rtol=1e-6, atol=1e-9)
    with pytest.raises(InputError, match="unknown method"):
        SparseLinearRegression(method="lasso").fit(pb.X, pb.y)


def test_lipschitz_constant_is_reused_and_s_none_follows_the_documented_rule():
    X, y = correlated_design(5, m=40, n=33)
    a = SparseLinearRegression().fit(X, y)
    assert a.s_ == 4 and np.count_nonzero(a.coef_) <= 4  # ⌈33/10⌉
    b = SparseLinearRegression(s=2, L=a.lipschitz_, lipschitz="paper").fit(X, y)
    assert b.lipschitz_ == a.lipschitz_  # a passed L is used as it is
    c = SparseLinearRegression(s=2, L=a.lipschitz_).fit(X, y)
    assert c.lipschitz_ >= a.lipschitz_  # or, backtracking, as the start
    assert SparseLinearRegression().fit(X[:6], y[:6]).s_ == 3  # at most ⌊m/2⌋
    with pytest.raises(InputError, match="between 1"):
        SparseLinearRegression(s=34).fit(X, y)
    with pytest.raises(InputError, match="between 1"):
        SparseLinearRegressionPath(s_max=0).fit(X, y)


def test_logistic_path_is_warm_started_chooses_by_bic_and_predicts_with_the_chosen_fit():
    from scipy.special import expit

    rng = np.random.default_rng(8)
    X = rng.standard_normal((300, 25))
    u = X[:, [2, 9, 17]] @ np.array([1.5, -1.5, 1.2]) + 0.5
    y = np.where(rng.random(300) < expit(u), "yes", "no")  # Bernoulli labels: not separable
    est = SparseLogisticRegressionPath(s_max=6).fit(X, y)
    assert est.coef_path_.shape == (6, 25) and est.s_path_.tolist() == list(range(1, 7))
    assert all(np.count_nonzero(c) <= s for s, c in zip(est.s_path_, est.coef_path_))
    f = est.objective_path_
    assert np.all(np.diff(f) <= 1e-9 * np.abs(f[:-1]))  # each s starts at the previous solution: f_s ≤ f_{s−1}
    # the criterion recomputed from the returned coefficients: (23) with μ‖w̃‖²/2 on the scaled coordinates
    # w̃_j = ‖x_j‖ w_j and w̃_b = √m b (the intercept column is 1/√m); near separation ‖w̃‖ is large
    codes = np.where(y == "yes", 1.0, -1.0)
    norms = np.linalg.norm(X, axis=0)
    f = [np.logaddexp(0.0, -codes * (X @ c + b)).sum() + 0.5e-10 * (np.sum((norms * c) ** 2) + 300 * b**2)
         for c, b in zip(est.coef_path_, est.intercept_path_)]
    np.testing.assert_allclose(2 * np.array(f) + est.s_path_ * np.log(300), est.bic_path_, rtol=1e-9)
    assert np.flatnonzero(est.coef_path_[2]).tolist() == [2, 9, 17]  # the planted subset at s = 3
    assert est.s_ == 1 + int(np.argmin(est.bic_path_)) and {2, 9, 17} <= set(est.support_)
    np.testing.assert_array_equal(est.coef_, est.coef_path_[est.s_ - 1])
    np.testing.assert_array_equal(est.predict(X), np.where(X @ est.coef_ + est.intercept_ >= 0, "yes", "no"))
    single = SparseLogisticRegression(s=3).fit(X, y)  # the default estimator at s = 3: the same subset
    assert single.support_.tolist() == [2, 9, 17]


@pytest.mark.parametrize("loss", ["ls", "logistic"])
def test_the_polish_depends_only_on_the_support_it_starts_from(loss):
    # the default estimator polishes each distinct support once, trusting this
    from solvers.sparse.path import Fit, polished

    pb = random_problem(loss, m=80, n=30, s=4, seed=2, mu=1e-2)
    rng = np.random.default_rng(0)
    S = np.array([1, 7, 12, 20])
    outs = []
    for _ in range(2):
        w = np.zeros(pb.n)
        w[S] = rng.standard_normal(S.size)
        outs.append(polished(pb, Fit(w, pb.objective(w), "converged", 0, 0)))
    np.testing.assert_allclose(outs[0].w, outs[1].w, rtol=1e-7, atol=1e-9)
    assert outs[0].objective == pytest.approx(outs[1].objective, rel=1e-10)

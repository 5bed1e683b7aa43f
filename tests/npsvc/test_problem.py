"""Building problems: splits, kernels, generators, the nearest-hyperplane rule, bad input."""
import numpy as np
import pytest

from solvers import datasets, npsvc
from solvers.core import InputError
from solvers.npsvc.problem import MAX_WEIGHT, Kernel, make_kernel, mean_squared_distance, squared_distances


def test_width_is_mean_pairwise_squared_distance():
    X = np.random.default_rng(0).standard_normal((30, 4))
    assert mean_squared_distance(X) == pytest.approx(squared_distances(X, X).mean())
    assert make_kernel(X, "rbf").width == pytest.approx(squared_distances(X, X).mean())


@pytest.mark.parametrize("name", ["rbf", "poly"])
def test_kernel_features_reproduce_the_kernel(name):
    X = np.random.default_rng(1).standard_normal((25, 3))
    problem = npsvc.problem_from_arrays(X, np.arange(25) % 2, kernel=name)
    Psi = problem.features.Psi
    K = Kernel(name, problem.kernel.width)(X, X)
    np.testing.assert_allclose(Psi @ Psi.T - K, 1e-3 * np.mean(np.diag(K)) * np.eye(25), atol=1e-9)
    Xnew = np.random.default_rng(2).standard_normal((7, 3))
    np.testing.assert_allclose(problem.features(Xnew) @ Psi.T, Kernel(name, problem.kernel.width)(Xnew, X),
                               atol=1e-9)  # ⟨ψ(x), ψ_j⟩ = k(x, x_j)


def test_make_problem_split_is_stratified_and_standardised():
    problem = npsvc.make_problem(datasets.load("iris"), test_size=0.4, seed=1)
    assert problem.n_train == 90 and len(problem.y_test) == 60
    assert np.all(np.bincount(problem.y_train) == 30)
    np.testing.assert_allclose(problem.X_train.mean(0), 0, atol=1e-12)


def test_max_train_caps_the_training_rows():
    problem = npsvc.make_problem(datasets.load("digits"), max_train=200)
    assert problem.n_train == 200 and problem.n_classes == 10


def test_predefined_split_needs_a_test_mask():
    with pytest.raises(InputError, match="predefined"):
        npsvc.make_problem(datasets.load("iris"), split="predefined")


def test_generators_are_registered_and_deterministic():
    gens = datasets.generators("npsvc")
    assert {"crossed-lines", "npsvc-blobs", "npsvc-moons"} <= set(gens)
    a, b = datasets.generate("crossed-lines", seed=2), datasets.generate("crossed-lines", seed=2)
    np.testing.assert_array_equal(a.X, b.X)


def test_two_classes_argmin_rule_equals_sign_rule():
    """For K = 2, argmin_l |f_l|/‖w_l‖ is the binary rule sign(|f₋|/‖w₋‖ − |f₊|/‖w₊‖) (§1.1)."""
    rng = np.random.default_rng(3)
    problem = npsvc.problem_from_arrays(rng.standard_normal((10, 2)), np.arange(10) % 2)
    F, norms = rng.standard_normal((50, 2)), rng.random(2) + 0.1
    sign = np.sign(np.abs(F[:, 0]) / norms[0] - np.abs(F[:, 1]) / norms[1])
    np.testing.assert_array_equal(problem.predict_codes(F, norms), (sign > 0).astype(int))  # + = class 1


@pytest.mark.parametrize("y, message", [
    (np.zeros(10), "at least 2"),
    (np.linspace(0, 1, 10), "continuous"),
    (np.array([None] * 10, dtype=object), None),
])
def test_bad_labels_are_refused(y, message):
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(InputError, match=message):
        npsvc.problem_from_arrays(X, y)


def test_nan_features_are_refused():
    X = np.random.default_rng(0).standard_normal((10, 2))
    X[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        npsvc.problem_from_arrays(X, np.arange(10) % 2)


def test_kernel_beyond_memory_budget_is_refused(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(10**6))
    with pytest.raises(InputError, match="budget"):
        npsvc.make_problem(datasets.load("digits"), max_train=1000)


def test_regression_data_are_refused():
    with pytest.raises(InputError, match="class labels"):
        npsvc.make_problem(datasets.load("diabetes"))


@pytest.mark.parametrize("name", ["dna", "pendigits", "usps", "binaryalphadigs", "20news_w100"])
def test_real_datasets_build(name):
    if not datasets.REAL[name].available():
        pytest.skip(f"{name} is not in the data directory ({datasets.REAL[name].files})")
    problem = npsvc.make_problem(datasets.load(name), max_train=200)
    assert problem.n_train == 200 and problem.n_classes >= 3


def test_cap_just_below_the_rows_still_keeps_every_class():
    """USPS: 60 % of 2007 rows is 1204; a cap of 1200 drops 4 rows, fewer than the 10 classes."""
    from solvers.npsvc.problem import _stratified_cap

    codes = np.repeat(np.arange(10), 120)[:1204]
    keep = _stratified_cap(codes, 1200, seed=0)
    assert len(keep) == 1200 and len(np.unique(keep)) == 1200 and len(np.unique(codes[keep])) == 10


def test_bad_sizes_and_overflowing_kernels_are_refused_before_any_fit():
    """max_train below K crashed in scikit-learn's stratified split; a poly kernel at coef0 = 1e300 in Cholesky."""
    rng = np.random.default_rng(0)
    many = datasets.Dataset("twelve", rng.standard_normal((120, 3)), np.arange(120) % 12, "classification")
    with pytest.raises(InputError, match="max_train = 10 is below the 12 classes"):
        npsvc.make_problem(many, max_train=10)
    problem = npsvc.make_problem(datasets.load("iris"), max_train=20, kernel="poly", degree=8, coef0=1e300)
    with pytest.raises(InputError, match="kernel matrix overflows"):
        npsvc.solve(problem, "twsvm", tol=1e-6, max_iter=10)


@pytest.mark.parametrize("method", ["twsvm", "pin-twsvm", "lstsvm", "npsvm", "knpsvc"])
def test_weights_at_their_bound_run_and_beyond_it_are_refused(method):
    """r₁ = 1e160 or η = 1e300 raised LinAlgError inside K-NPSVC++; at the bound every kernel method runs."""
    problem = npsvc.make_problem(datasets.load("iris"), max_train=30, seed=0)
    names = {p.name for p in npsvc.METHODS[method].params}
    top = {name: MAX_WEIGHT for name in ("c", "r1", "r2", "mu", "gamma", "eta") if name in names}
    result = npsvc.solve(problem, method, tol=1e-6, max_iter=20, **top)
    assert result.status in ("converged", "max_iter") and np.isfinite(result.history["objective"].iloc[-1])
    with pytest.raises(InputError, match=r"r1 \(r₁\) = 1e\+160 is out of range"):
        npsvc.solve(problem, method, tol=1e-6, max_iter=20, r1=1e160)


def test_lstsvm_is_converged_only_when_its_residual_meets_tol():
    """A closed form cannot improve on its residual: above tol it is max_iter, not converged (it was at ≤ 1e-6)."""
    problem = npsvc.make_problem(datasets.load("iris"), max_train=60, seed=0)
    result = npsvc.solve(problem, "lstsvm", tol=1e-300, max_iter=10)
    assert result.history["optimality"].iloc[-1] > 1e-300 and result.status == "max_iter"
    assert npsvc.solve(problem, "lstsvm", tol=1e-6, max_iter=10).status == "converged"

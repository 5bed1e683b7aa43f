"""Generator recipe, datasets, the estimator, and bad input refused before any work."""
from __future__ import annotations

import io

import numpy as np
import pytest

from solvers import datasets, smm
from solvers.core import InputError
from solvers.smm.problem import build_problem, primal_objective
from solvers.smm.synthetic import make_smm_synthetic

from .conftest import make_instance


def test_generator_follows_the_recipe():
    ds = make_smm_synthetic(n_train=200, p=6, q=8, seed=4)
    assert ds.X.shape == (250, 6, 8) and ds.test_mask.sum() == 50 and ds.test_mask[200:].all()
    assert set(np.unique(ds.y)) <= {-1.0, 1.0}
    W = ds.meta["W_true"]
    sv = np.linalg.svd(W, compute_uv=False)
    r = ds.meta["rank"]
    assert r == 6 and np.allclose(sv[:r], 1.0)  # r = min(20, p, q) unit singular values
    scores = np.einsum("ipq,pq->i", ds.X, W)
    np.testing.assert_array_equal(ds.y, np.where(scores >= 0, 1.0, -1.0))
    # columns of X_i are (block-)constant across rows up to the δ = 2e-4 noise
    assert np.abs(ds.X - ds.X.mean(axis=1, keepdims=True)).max() < 10 * 2e-4
    again = make_smm_synthetic(n_train=200, p=6, q=8, seed=4)
    np.testing.assert_array_equal(ds.X, again.X)
    assert not np.array_equal(ds.X, make_smm_synthetic(n_train=200, p=6, q=8, seed=5).X)
    assert make_smm_synthetic(n_train=100, p=4, q=5, float32=True).X.dtype == np.float32
    with pytest.raises(InputError):
        make_smm_synthetic(n_train=10, p=3, q=4, r=5)
    # r orthonormal columns b_1..b_r need r samples in all (n_train = 20 gives 25; an app walk reached r = 38)
    with pytest.raises(InputError, match="needs at least 38 samples"):
        make_smm_synthetic(n_train=20, p=146, q=181, r=38)
    assert make_smm_synthetic(n_train=20, p=30, q=30, r=25).meta["rank"] == 25


def test_train_test_split_of_the_generator_is_a_view_with_the_masked_rows():
    """The generator's test part is its tail: the split returns views (no second copy of a 2.5 GB set)
    holding exactly the rows the mask selects; a shuffled mask still gets copies of the right rows."""
    ds = make_smm_synthetic(n_train=40, p=3, q=4, seed=2)
    X, y, X_te, y_te = smm.train_test(ds)
    test = np.asarray(ds.test_mask, bool)
    assert np.array_equal(X, ds.X[~test]) and np.array_equal(X_te, ds.X[test]) and np.array_equal(y_te, ds.y[test])
    assert np.shares_memory(X, ds.X) and np.shares_memory(X_te, ds.X)
    shuffled = datasets.Dataset(ds.name, ds.X, ds.y, "classification", "", "", test_mask=np.roll(test, 3))
    X2, _, X2_te, _ = smm.train_test(shuffled)
    assert np.array_equal(X2_te, ds.X[np.roll(test, 3)]) and not np.shares_memory(X2, ds.X)


def test_generator_is_registered():
    gens = datasets.generators("smm")
    assert "smm-synthetic" in gens
    ds = datasets.generate("smm-synthetic", n_train=40, p=3, q=4, seed=1)
    assert ds.X.shape == (50, 3, 4)


def test_digits_binary_task_upsampling_and_scaling():
    ds = datasets.load("digits-8x8")
    X_tr, y_tr, X_te, y_te = smm.train_test(ds, positive_class="0", upsample=2)
    assert X_tr.shape[1:] == (16, 16) and X_tr.max() == pytest.approx(1.0)
    assert set(np.unique(y_tr)) == {-1.0, 1.0} and len(X_tr) + len(X_te) == 1797
    np.testing.assert_array_equal(X_tr[0][:2, :2], X_tr[0][0, 0])  # kron blocks
    problem = smm.make_problem(ds, C=0.1, tau=1.0, positive_class="0")
    assert problem.shape == (8, 8)
    with pytest.raises(InputError, match="exactly 2"):
        smm.make_problem(ds)  # ten classes and no positive class chosen
    with pytest.raises(InputError, match="not in"):
        smm.make_problem(ds, positive_class="eleven")


@pytest.mark.parametrize("name,positive", [("mnist_test", "0"), ("olivetti", "0"), ("cifar10_dog_vs_truck", ""),
                                           ("eeg_alcoholism", "")])
def test_real_matrix_datasets(name, positive):
    if not datasets.REAL[name].available():
        pytest.skip(f"{name} is not in the data directory")
    ds = datasets.load(name)
    X_tr, y_tr, _, _ = smm.train_test(ds, positive_class=positive)
    assert X_tr.ndim == 3 and set(np.unique(y_tr)) == {-1.0, 1.0}
    rows = np.r_[np.flatnonzero(y_tr > 0)[:20], np.flatnonzero(y_tr < 0)[:20]]
    problem = build_problem(X_tr[rows], y_tr[rows], C=0.1, tau=1.0)
    assert smm.solve(problem, "alm-sncg", tol=1e-5, max_iter=300).converged


def test_npz_upload_of_matrices():
    X, y = make_instance(30, 3, 4)
    buf = io.BytesIO()
    np.savez(buf, X=X, y=y)
    ds = datasets.parse_upload("mats.npz", buf.getvalue())
    problem = smm.make_problem(ds, scale="none")
    assert problem.shape == (3, 4) and problem.n == 24  # 20% held out


def test_estimator_fit_predict_score_and_transpose():
    X, y = make_instance(80, 6, 3, seed=2)  # p > q: solved on transposed samples
    y_lab = np.where(y > 0, "pos", "neg")
    clf = smm.SupportMatrixMachine(C=1.0, tau=0.5, tol=1e-8).fit(X, y_lab)
    assert clf.coef_.shape == (6, 3) and list(clf.classes_) == ["neg", "pos"]
    f = clf.decision_function(X)
    np.testing.assert_allclose(f, np.einsum("ipq,pq->i", X, clf.coef_) + clf.intercept_)
    np.testing.assert_array_equal(clf.predict(X), np.where(f >= 0, "pos", "neg"))
    assert 0.5 < clf.score(X, y_lab) <= 1.0
    # transposing every sample by hand gives the same optimum (all terms are transpose-invariant)
    clf_t = smm.SupportMatrixMachine(C=1.0, tau=0.5, tol=1e-8).fit(np.swapaxes(X, 1, 2), y_lab)
    np.testing.assert_allclose(clf_t.coef_, clf.coef_.T, atol=1e-5)
    problem = build_problem(X, y, C=1.0, tau=0.5)
    direct = primal_objective(problem, problem.from_user(clf.coef_), clf.intercept_)
    assert direct == pytest.approx(clf.history_["objective"].iloc[-1], rel=1e-9)
    with pytest.raises(InputError, match="fit on"):
        clf.decision_function(X[:, :3, :])
    for method in ("ispadmm", "fadmm"):
        other = smm.SupportMatrixMachine(C=1.0, tau=0.5, tol=1e-7, method=method, max_iter=20000).fit(X, y_lab)
        np.testing.assert_allclose(other.coef_, clf.coef_, atol=1e-3)


@pytest.mark.parametrize("bad,match", [
    (lambda X, y: (X, np.arange(len(y)) % 3), "exactly 2"),
    (lambda X, y: (X, np.ones(len(y))), "exactly 2"),
    (lambda X, y: ([X[0], X[1][:, :2]], y[:2]), "different shapes"),
    (lambda X, y: (X.reshape(len(y), -1), y), r"\(n, p, q\)"),
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), y), "NaN"),
    (lambda X, y: (X, y[:-1]), "must match"),
])
def test_bad_input_is_refused(bad, match):
    X, y = make_instance(20, 3, 4)
    Xb, yb = bad(X, y)
    with pytest.raises(InputError, match=match):
        build_problem(Xb, yb)


@pytest.mark.parametrize("C,tau", [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0), (1.0, np.inf), (np.nan, 1.0)])
def test_nonpositive_parameters_are_refused(C, tau):
    X, y = make_instance(20, 3, 4)
    with pytest.raises(InputError, match="positive"):
        build_problem(X, y, C=C, tau=tau)
    with pytest.raises(InputError):
        smm.SupportMatrixMachine(C=C, tau=tau).fit(X, y)


def test_memory_estimate_refuses_before_allocating(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", "1000")
    X, y = make_instance(20, 3, 4)
    with pytest.raises(InputError, match="budget"):
        build_problem(X, y)
    with pytest.raises(InputError, match="budget"):
        make_smm_synthetic(n_train=1000, p=50, q=50)


def test_unknown_method_and_bad_method_parameters():
    X, y = make_instance(20, 3, 4)
    problem = build_problem(X, y)
    with pytest.raises(InputError, match="unknown method"):
        smm.solve(problem, "newton")
    with pytest.raises(InputError, match="zeta"):
        smm.solve(problem, "ispadmm", zeta=2.0)
    with pytest.raises(InputError):
        smm.SupportMatrixMachine(method="sgd").fit(X, y)


def test_upsampling_beyond_the_budget_is_refused_from_the_shapes_before_any_copy(monkeypatch):
    """digits ×8 is 64×64 per sample: refused with the upsampled size before np.kron or scaling allocates
    anything (mnist_test ×8 used to reach 8 GB, or crash, before the check)."""
    ds = datasets.load("digits-8x8")
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", "1e6")

    def no_copy(*args, **kwargs):
        raise AssertionError("the upsampled data were built before the memory check")

    monkeypatch.setattr(np, "kron", no_copy)
    with pytest.raises(InputError, match=r"SMM on \d+ samples of 64×64 needs about .* budget"):
        smm.make_problem(ds, positive_class="0", upsample=8)

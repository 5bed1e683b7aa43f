"""scikit-learn estimators, synthetic generators and the real gene-expression sets."""
import numpy as np
import pytest
import scipy.sparse as sp

from solvers import datasets
from solvers.core import InputError
from solvers.sparse import SparseLinearRegression, SparseLogisticRegression, make_problem, solve, train_test

def test_estimators_recover_a_planted_support_on_dense_and_sparse_x():
    ds = datasets.generate("sparse-regression", m=200, n=300, k=5, snr=100.0, seed=1)
    tr, te = train_test(ds)
    for X in (tr.X, sp.csr_matrix(tr.X)):
        est = SparseLinearRegression(s=5).fit(X, tr.y)
        assert est.support_.tolist() == ds.meta["support_true"].tolist()
        assert est.score(te.X, te.y) > 0.95
        assert {"iter", "time", "objective", "residual"} <= set(est.history_.columns)
    cls = datasets.generate("sparse-classification", m=300, n=200, k=3, snr=50.0, seed=2)
    tr, te = train_test(cls)
    y_text = np.where(tr.y > 0, "spam", "ham")
    est = SparseLogisticRegression(s=3, mu=1e-3).fit(tr.X, y_text)
    assert est.classes_.tolist() == ["ham", "spam"]
    assert np.mean(est.predict(te.X) == np.where(te.y > 0, "spam", "ham")) > 0.9
    np.testing.assert_allclose(est.predict_proba(te.X).sum(axis=1), 1.0)


def test_estimator_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 5))
    with pytest.raises(InputError, match="between 1"):
        SparseLinearRegression(s=6).fit(X, X[:, 0])
    with pytest.raises(InputError, match="unknown method"):
        SparseLinearRegression(s=2, method="lasso").fit(X, X[:, 0])
    with pytest.raises(ValueError):
        SparseLogisticRegression(s=2).fit(X, np.arange(20) % 3)


def test_generators_are_deterministic_and_shaped_as_asked():
    a = datasets.generate("sparse-regression", m=30, n=50, k=4, rho=0.5, m_test=10, seed=3)
    b = datasets.generate("sparse-regression", m=30, n=50, k=4, rho=0.5, m_test=10, seed=3)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.X.shape == (40, 50) and a.test_mask.sum() == 10 and np.count_nonzero(a.meta["w_true"]) == 4
    c = datasets.generate("sparse-classification", m=500, n=2000, k=10, density=0.01, seed=4)
    assert sp.isspmatrix_csr(c.X) or sp.issparse(c.X)
    np.testing.assert_allclose(sp.linalg.norm(c.X[:20], axis=1)[sp.linalg.norm(c.X[:20], axis=1) > 0], 1.0)
    assert set(np.unique(c.y)) == {-1.0, 1.0}
    big = datasets.generate("sparse-regression", m=2000, n=50, k=2, rho=0.9, m_test=0, seed=5)
    assert np.corrcoef(big.X[:, 10], big.X[:, 11])[0, 1] == pytest.approx(0.9, abs=0.03)  # Toeplitz ρ^|i−j|
    with pytest.raises(InputError, match="k = 9"):
        datasets.generate("sparse-regression", m=10, n=8, k=9)


@pytest.mark.parametrize("name", ["colon-cancer", "duke", "leukemia"])
def test_real_gene_expression_sets_converge_with_apg_plus(name):
    if not datasets.REAL[name].available():
        pytest.skip(f"{name} is not in the data directory ({datasets.REAL[name].files[0]})")
    ds = datasets.load(name)
    for loss in ("ls", "logistic"):
        pb = make_problem(ds, loss=loss, s_ratio=0.05)
        r = solve(pb, "apg+", tol=1e-6, max_iter=2000)
        assert r.status == "converged" and r.info["grad_evals"] < 200
        assert np.count_nonzero(r.solution["w"]) <= pb.s


@pytest.mark.parametrize("name", ["phishing", "a9a"])
def test_real_sparse_csr_sets_run_without_densifying(name):
    if not datasets.REAL[name].available():
        pytest.skip(f"{name} is not in the data directory ({datasets.REAL[name].files[0]})")
    ds = datasets.load(name)
    rows = np.arange(0, ds.n_samples, 10)  # every 10th row keeps the test small
    pb = make_problem(ds.subset(rows), loss="logistic", s=10, mu=1e-2)
    assert sp.issparse(pb.X)
    r = solve(pb, "apg+", tol=1e-6, max_iter=3000)
    assert r.status == "converged" and np.count_nonzero(r.solution["w"]) <= 10
    assert pb.residual(r.solution["w"]) < 1e-5

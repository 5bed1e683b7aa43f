"""Triplet construction and the pair-based evaluation of ⟨H, M⟩ against explicit d×d matrices."""
import numpy as np
import pytest

from solvers.core import InputError
from solvers.metric import kernels
from solvers.metric.problem import make_triplet_problem
from solvers.metric.triplets import build_triplets, count_triplets, scale_to_unit_box
from tests.metric.conftest import explicit_H, random_psd



def test_all_triplets_count_and_validity():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((17, 3))
    y = np.array([0] * 5 + [1] * 7 + [2] * 5)
    T = build_triplets(X, y, None)
    counts = np.bincount(y)
    assert len(T) == sum(c * (c - 1) * (17 - c) for c in counts) == count_triplets(y, None)
    assert np.all(y[T.i] == y[T.j]) and np.all(y[T.i] != y[T.l]) and np.all(T.i != T.j)
    assert len(set(zip(T.i, T.j, T.l))) == len(T)


def test_knn_triplets_are_the_nearest_neighbours():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 4))
    y = np.arange(40) % 3
    k = 3
    T = build_triplets(X, y, k)
    assert len(T) == 40 * k * k == count_triplets(y, k)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    for i in range(40):
        same = np.flatnonzero((y == y[i]) & (np.arange(40) != i))
        other = np.flatnonzero(y != y[i])
        want_j = set(same[np.argsort(D[i, same], kind="stable")[:k]])
        want_l = set(other[np.argsort(D[i, other], kind="stable")[:k]])
        rows = T.i == i
        assert set(T.j[rows]) == want_j and set(T.l[rows]) == want_l


def test_partial_selection_equals_the_stable_sort_with_ties():
    """The k smallest per row (partition + sort of k) are a stable argsort's first k, ties and inf included."""
    from solvers.metric.triplets import _smallest
    rng = np.random.default_rng(4)
    for trial in range(200):
        n, m = int(rng.integers(1, 20)), int(rng.integers(1, 30))
        D = rng.integers(0, 5, (n, m)).astype(float) if trial % 2 else rng.standard_normal((n, m))
        D[rng.random((n, m)) < 0.2] = np.inf
        k = int(rng.integers(1, m + 1))
        assert np.array_equal(_smallest(D, k), np.argsort(D, axis=1, kind="stable")[:, :k])


def test_knn_triplets_with_duplicate_samples_take_the_lower_index():
    """Binary data (a9a) has duplicate rows: tied neighbours go to the lower index, as documented."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, (60, 3)).astype(float)
    y = np.arange(60) % 2
    T = build_triplets(X, y, 4)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    for i in range(60):
        same = np.flatnonzero((y == y[i]) & (np.arange(60) != i))
        other = np.flatnonzero(y != y[i])
        rows = T.i == i
        assert set(T.j[rows]) == set(same[np.argsort(D[i, same], kind="stable")[:4]])
        assert set(T.l[rows]) == set(other[np.argsort(D[i, other], kind="stable")[:4]])


def test_small_class_contributes_all_its_members():
    X = np.random.default_rng(2).standard_normal((12, 2))
    y = np.array([0, 0] + [1] * 10)
    T = build_triplets(X, y, 5)
    assert len(T) == count_triplets(y, 5) == 2 * 1 * 5 + 10 * 5 * 2


@pytest.mark.parametrize("diagonal", [False, True])
def test_pair_margins_and_norms_match_explicit_H(diagonal):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((15, 4))
    y = np.arange(15) % 3
    p = make_triplet_problem(X, y, k=None, diagonal=diagonal, scale=False)
    M = random_psd(4, rng)
    Mp = np.diag(np.diag(M)) if diagonal else M
    arg = np.diag(M) if diagonal else M
    x = p.margins(arg)
    for t in rng.choice(p.n_triplets, 30, replace=False):
        H = explicit_H(p, t)
        H_used = np.diag(np.diag(H)) if diagonal else H
        assert x[t] == pytest.approx(np.sum(H_used * Mp), rel=1e-10, abs=1e-10)
        assert p.h_norm[t] == pytest.approx(np.linalg.norm(H_used), rel=1e-10, abs=1e-12)
    # Σ α_t H_t through pair scatter-add equals the explicit sum
    alpha = rng.random(p.n_triplets)
    S = p.subset(np.arange(p.n_triplets)).combine(alpha)
    explicit = sum(a * explicit_H(p, t) for t, a in enumerate(alpha))
    np.testing.assert_allclose(S, np.diag(explicit) if diagonal else explicit, atol=1e-9)


def test_H_has_one_positive_and_one_negative_eigenvalue():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((9, 5))
    p = make_triplet_problem(X, np.arange(9) % 3, k=None, scale=False)
    for t in range(0, p.n_triplets, 17):
        H = explicit_H(p, t)
        T = p.triplets
        a, b = p.X[T.i[t]] - p.X[T.l[t]], p.X[T.i[t]] - p.X[T.j[t]]
        tau = a @ a - b @ b
        disc = np.sqrt(tau ** 2 + 4 * ((a @ a) * (b @ b) - (a @ b) ** 2))
        w = np.linalg.eigvalsh(H)
        assert np.sum(w > 1e-10) <= 1 and np.sum(w < -1e-10) <= 1
        np.testing.assert_allclose([w.min(), w.max()], [(tau - disc) / 2, (tau + disc) / 2], atol=1e-9)


def test_scaling_to_unit_box():
    X = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [2.0, 5.0, 0.0]])
    Z = scale_to_unit_box(X)
    np.testing.assert_allclose(Z[:, 0], [-1, 1, 0])
    np.testing.assert_allclose(Z[:, 1], 0)
    assert Z.min() >= -1 and Z.max() <= 1


def test_memory_budget_refuses_with_the_count(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", "1000")
    X = np.random.default_rng(5).standard_normal((30, 2))
    with pytest.raises(InputError, match="triplets"):
        build_triplets(X, np.arange(30) % 2, None)


@pytest.mark.parametrize("diagonal", [False, True])
def test_triplet_backend_equals_pair_backend(diagonal):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((14, 3))
    y = np.arange(14) % 2
    pairs = make_triplet_problem(X, y, k=None, diagonal=diagonal, scale=False)
    trips = make_triplet_problem(X, y, k=None, diagonal=diagonal, scale=False, backend="triplets")
    M = random_psd(3, rng)
    M = np.diag(M) if diagonal else M
    idx = rng.choice(pairs.n_triplets, 50, replace=False)
    np.testing.assert_allclose(trips.margins(M, idx), pairs.margins(M, idx), atol=1e-12)
    w = rng.random(50)
    np.testing.assert_allclose(trips.subset(idx).combine(w), pairs.subset(idx).combine(w), atol=1e-10)
    # the subset's cached per-triplet vectors serve every later call, a narrowed part and a masked sum alike
    keep = rng.random(50) < 0.6
    for where in (None, keep):
        n = 50 if where is None else int(keep.sum())
        np.testing.assert_allclose(trips.subset(idx).combine(w[:n], where=where),
                                   pairs.subset(idx).combine(w[:n], where=where), atol=1e-10)
    sub_t, sub_p = trips.subset(idx), pairs.subset(idx)
    sub_t.margins(M)  # fills the cache before the part is cut
    np.testing.assert_allclose(sub_t.part(keep).margins(M), sub_p.part(keep).margins(M), atol=1e-12)
    np.testing.assert_allclose(sub_t.part(keep).combine(None), sub_p.part(keep).combine(None), atol=1e-10)


@pytest.fixture
def sample_form_problem():
    """k-NN triplets in d = 12 with many pairs per sample: where the cost rule picks the sample form."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((60, 12))
    return make_triplet_problem(X, np.arange(60) % 3, k=6, scale=False), rng


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_sample_form_equals_pair_table_form(sample_form_problem, monkeypatch, compiled):
    """Σ w u uᵀ = Xᵀ Eᵀ (w∘U) and u_pᵀ M u_p from M's eigenvectors agree with the pair-table products, for a
    reduced-rank PSD M (as the projection gives), an indefinite symmetric M (GB's centre) and M = 0; the compiled
    kernels (from the pairs' ends, no E) and numpy's E alike."""
    monkeypatch.setattr(kernels, "USE_NUMBA", compiled)
    p, rng = sample_form_problem
    d = p.dim
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    low_rank = (V[:, :5] * rng.random(5)) @ V[:, :5].T
    indefinite = random_psd(d, rng) - random_psd(d, rng)
    idx = np.sort(rng.choice(p.n_triplets, p.n_triplets // 3, replace=False))
    w = rng.random(idx.size)
    results = {}
    for gain in (0.0, np.inf):  # 0: the sample form everywhere; inf: the pair table everywhere
        monkeypatch.setattr("solvers.metric.problem._SAMPLE_FORM_GAIN", gain)
        p.__dict__.pop("everything", None)
        sub = p.subset(idx)
        assert sub.uses_samples == (gain == 0.0)
        results[gain] = ([p.margins(M) for M in (low_rank, indefinite, p.zeros())] + [sub.margins(low_rank)],
                         [sub.combine(w), sub.part(w > 0.5).combine(None)])
        nan_M = low_rank.copy()
        nan_M[0, 0] = np.nan
        assert np.isnan(sub.margins(nan_M)).any()  # a diverged iterate gives NaN margins in either form
    p.__dict__.pop("everything", None)
    for a, b in zip(*(results[g][0] for g in (0.0, np.inf))):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * max(np.abs(b).max(), 1.0))
    for a, b in zip(*(results[g][1] for g in (0.0, np.inf))):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * np.abs(b).max())


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
@pytest.mark.parametrize("gain", [0.0, np.inf])  # 0: the gathered pairs through the samples; inf: their table rows
def test_margins_over_few_triplets_compute_only_their_pairs(sample_form_problem, monkeypatch, gain, compiled):
    """The margins of a few triplets (the ledger's candidates) from their own pairs only equal the all-pairs
    margins, in either form, for a low-rank PSD, an indefinite and a zero M; a non-finite M gives NaN, not an error."""
    monkeypatch.setattr(kernels, "USE_NUMBA", compiled)
    p, rng = sample_form_problem
    monkeypatch.setattr("solvers.metric.problem._SAMPLE_FORM_GAIN", gain)
    monkeypatch.setattr("solvers.metric.problem._GATHER_SHARE", 1.0)  # the gathered branch whatever the share
    d = p.dim
    V = np.linalg.qr(rng.standard_normal((d, d)))[0]
    for M in ((V[:, :4] * rng.random(4)) @ V[:, :4].T, random_psd(d, rng) - random_psd(d, rng), p.zeros()):
        full = p.everything.pair_values(M)
        full = full[p.triplets.diff] - full[p.triplets.same]
        for size in (1, 7, p.n_triplets // 20, p.n_triplets // 2):
            idx = rng.choice(p.n_triplets, size, replace=False)
            np.testing.assert_allclose(p.margins(M, idx), full[idx], rtol=1e-10,
                                       atol=1e-10 * max(np.abs(full).max(), 1.0))
    nan_M = random_psd(d, rng)
    nan_M[0, 0] = np.nan
    assert np.isnan(p.margins(nan_M, np.arange(5))).any()


def test_cost_rule_keeps_pair_table_where_it_is_cheaper():
    """Few pairs per sample, or small d: the sample form's n·d² would not pay, the pair table stays."""
    rng = np.random.default_rng(9)
    few = make_triplet_problem(rng.standard_normal((60, 12)), np.arange(60) % 3, k=1, scale=False)
    small_d = make_triplet_problem(rng.standard_normal((40, 3)), np.arange(40) % 2, k=None, scale=False)
    assert not few.everything.uses_samples and not small_d.everything.uses_samples

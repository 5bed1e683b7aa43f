"""Property tests for the shared projections and prox maps, each against an independent reference."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from solvers.core import (InputError, fista_momentum, fista_next_t, hard_threshold, project_box,
                          project_capped_simplex, project_capped_simplex_bisection, project_psd,
                          singular_value_threshold)

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
vectors = st.integers(1, 12).flatmap(lambda n: arrays(np.float64, n, elements=finite))


@settings(max_examples=200, deadline=None)
@given(vectors, st.data())
def test_hard_threshold_is_a_best_s_sparse_approximation(z, data):
    s = data.draw(st.integers(0, z.size))
    w, J = hard_threshold(z, s)
    assert np.count_nonzero(w) <= s and len(J) == s
    assert np.array_equal(w[J], z[J]) and np.all(w[np.setdiff1d(np.arange(z.size), J)] == 0)
    # brute force: no other support of size s is closer to z
    best = min(np.sum(np.delete(z, list(S)) ** 2) for S in itertools.combinations(range(z.size), s))
    assert np.sum((z - w) ** 2) <= best + 1e-9


def test_hard_threshold_tie_rule_prefers_previous_support_then_lower_index():
    z = np.array([1.0, -1.0, 1.0, 0.5])
    assert list(hard_threshold(z, 2)[1]) == [0, 1]
    assert list(hard_threshold(z, 2, prefer=[2])[1]) == [0, 2]
    assert list(hard_threshold(z, 2, prefer=[1, 2])[1]) == [1, 2]
    # padding with zero-valued indices when z has fewer nonzeros than s
    w, J = hard_threshold(np.array([0.0, 0.0, 3.0, 0.0]), 3, prefer=[3])
    assert list(J) == [0, 2, 3] and np.array_equal(w, [0, 0, 3, 0])


def test_hard_threshold_refuses_bad_s():
    with pytest.raises(InputError):
        hard_threshold(np.ones(3), 4)


@settings(max_examples=300, deadline=None)
@given(vectors, st.data())
def test_capped_simplex_sort_matches_bisection_and_is_feasible(x, data):
    h = data.draw(st.one_of(st.integers(0, x.size), st.floats(0, x.size)))
    p = project_capped_simplex(x, h)
    assert np.all(p >= -1e-12) and np.all(p <= 1 + 1e-12)
    assert abs(p.sum() - h) <= 1e-8 * max(1, x.size)
    assert np.allclose(p, project_capped_simplex_bisection(x, h), atol=1e-8)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 6, elements=finite), st.floats(0.5, 5.5))
def test_capped_simplex_projection_satisfies_the_obtuse_angle_condition(x, h):
    p = project_capped_simplex(x, h)
    rng = np.random.default_rng(0)
    for _ in range(20):  # random feasible points v: ⟨x − p, v − p⟩ ≤ 0
        v = project_capped_simplex(rng.normal(size=6) * 3, h)
        assert (x - p) @ (v - p) <= 1e-7 * (1 + np.abs(x).max())


def test_capped_simplex_ties_and_extremes():
    x = np.array([0.3, 0.3, 0.3, 0.3])
    assert np.allclose(project_capped_simplex(x, 2), 0.5)
    assert np.allclose(project_capped_simplex(x, 4), 1.0)
    assert np.allclose(project_capped_simplex(x, 0), 0.0)
    with pytest.raises(InputError):
        project_capped_simplex(x, 5)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: arrays(np.float64, (n, n), elements=st.floats(-10, 10))))
def test_psd_projection_is_psd_idempotent_and_optimal(A):
    P = project_psd(A)
    assert np.allclose(P, P.T)
    assert np.linalg.eigvalsh(P).min() >= -1e-9
    assert np.allclose(project_psd(P), P, atol=1e-9)
    S = (A + A.T) / 2  # the residual S − P is negative semidefinite and orthogonal to P
    assert np.linalg.eigvalsh(S - P).max() <= 1e-9
    assert abs(np.sum((S - P) * P)) <= 1e-7 * (1 + np.abs(S).max() ** 2)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.floats(0, 5), st.integers(0, 2**31 - 1))
def test_svt_is_the_prox_of_the_nuclear_norm(p, q, tau, seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(p, q)) * 3
    X, r = singular_value_threshold(W, tau)
    assert r == np.linalg.matrix_rank(X, tol=1e-9) if r else np.allclose(X, 0)
    objective = lambda Y: 0.5 * np.sum((Y - W) ** 2) + tau * np.linalg.norm(Y, "nuc")
    for _ in range(10):  # the prox value is no worse than random perturbations of it
        Y = X + 1e-3 * rng.normal(size=X.shape)
        assert objective(X) <= objective(Y) + 1e-10


def test_box_and_fista_sequence():
    assert np.array_equal(project_box(np.array([-2.0, 0.5, 3.0]), -1, 1), [-1, 0.5, 1])
    with pytest.raises(InputError):
        project_box(np.zeros(2), 1, 0)
    t, ts = 1.0, []
    for _ in range(50):
        beta, t = fista_momentum(t)
        ts.append(t)
        assert 0 <= beta < 1
    assert np.allclose(fista_next_t(1.0), (1 + np.sqrt(5)) / 2)
    assert all(ts[k] >= (k + 2) / 2 for k in range(50))  # t_k ≥ (k + 1)/2, the O(1/k²) ingredient

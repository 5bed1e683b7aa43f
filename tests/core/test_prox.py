"""Property tests for the shared projections and prox maps, each against an independent reference."""
import itertools
from fractions import Fraction

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


def exact_capped_simplex(x: np.ndarray, h: float) -> np.ndarray:
    """The projection in exact rational arithmetic (every float is a fraction): the root θ of
    g(θ) = Σ clip(x − θ, 0, 1) − h on the first breakpoint segment where g turns ≤ 0, by linear interpolation."""
    X, H = [Fraction(float(v)) for v in x], Fraction(float(h))

    def g(theta: Fraction) -> Fraction:
        return sum(min(max(v - theta, Fraction(0)), Fraction(1)) for v in X) - H

    bps = sorted(set(X) | {v - 1 for v in X})
    values = [g(t) for t in bps]
    k = next(i for i, value in enumerate(values) if value <= 0)
    theta = bps[0] if k == 0 else bps[k - 1] + (bps[k] - bps[k - 1]) * values[k - 1] / (values[k - 1] - values[k])
    return np.array([float(min(max(v - theta, Fraction(0)), Fraction(1))) for v in X])


# Adversarial entries: ties (a small pool repeated), magnitudes from subnormal to float64's largest, and
# neighbours that differ by less than the cap 1.
HUGE = st.floats(1e290, 1.7976931348623157e308).flatmap(lambda v: st.sampled_from([v, -v]))
TINY = st.floats(-1e-300, 1e-300, allow_subnormal=True)
MODERATE = st.floats(-3.0, 3.0)
adversarial_vectors = st.lists(st.one_of(HUGE, TINY, MODERATE), min_size=1, max_size=4).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=1, max_size=10)).map(np.array)


def levels(q: int):
    """h at 0, at q, integers and fractions between, and within rounding of the ends."""
    return st.one_of(st.just(0), st.just(q), st.integers(0, q), st.floats(0, q),
                     st.sampled_from([min(1e-12, q), max(q - 1e-12, 0.0)]))


@settings(max_examples=250, deadline=None)
@given(adversarial_vectors, st.data())
def test_capped_simplex_is_exact_on_adversarial_inputs(x, data):
    h = data.draw(levels(x.size))
    p = project_capped_simplex(x, h)
    np.testing.assert_allclose(p, exact_capped_simplex(x, h), rtol=0, atol=1e-12 * x.size)
    assert np.all(p >= 0) and np.all(p <= 1)
    assert abs(p.sum() - h) <= 1e-12 * x.size


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(TINY, MODERATE, st.floats(-1e6, 1e6)), min_size=1, max_size=4).flatmap(
    lambda pool: st.lists(st.sampled_from(pool), min_size=1, max_size=10)).map(np.array), st.data())
def test_capped_simplex_matches_bisection_with_ties_and_tiny_values(x, data):
    # bisection on θ itself is accurate to ulp(θ) · q, so its inputs stay where that is far below the tolerance
    h = data.draw(levels(x.size))
    np.testing.assert_allclose(project_capped_simplex(x, h), project_capped_simplex_bisection(x, h), rtol=0,
                               atol=1e-8)


def test_capped_simplex_at_magnitudes_near_1e300():
    # a diverging multitask iterate: the old prefix sums overflowed to NaN and the breakpoint search ran past
    # the last index (IndexError), and equal huge entries came back all zero instead of sharing h
    rng = np.random.default_rng(0)
    for _ in range(60):
        q = int(rng.integers(1, 30))
        x = rng.standard_normal(q) * 10.0 ** rng.uniform(250, 308)
        h = float(rng.uniform(0, q))
        p = project_capped_simplex(x, h)
        np.testing.assert_allclose(p, exact_capped_simplex(x, h), rtol=0, atol=1e-12 * q)
    np.testing.assert_allclose(project_capped_simplex(np.full(30, 1e300), 3), 0.1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(project_capped_simplex(np.array([1.7e308, -1.7e308, 1.7e308 - 2e292]), 1.5),
                               [1.0, 0.0, 0.5], rtol=0, atol=1e-15)


def test_capped_simplex_refuses_a_non_finite_point():
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(InputError, match="finite"):
            project_capped_simplex(np.array([0.2, bad, 0.5]), 1)


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

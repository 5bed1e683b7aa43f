"""RTLM primal/dual: loss algebra, gradients, weak duality, the large-λ closed form, and optima against cvxpy."""
import cvxpy as cp
import numpy as np
import pytest

from solvers import metric
from solvers.metric.problem import Evaluation, ReducedProblem, conjugate, dual_alpha, lambda_max, loss
from tests.metric.conftest import random_psd, reference, tiny


@pytest.mark.parametrize("gamma", [0.0, 0.05, 0.5])
def test_loss_continuity_and_fenchel_young(gamma):
    x = np.linspace(-3, 3, 2001)
    ell = loss(x, gamma)
    assert np.max(np.abs(np.diff(ell))) < 0.01  # continuous (steps of 0.003 in x)
    for a in np.linspace(0, 1, 11):
        # ℓ(x) + ℓ*(−α) ≥ −αx for every x
        assert np.all(ell + conjugate(a, gamma) >= -a * x - 1e-12)
    alpha = dual_alpha(x, gamma)
    gap = ell + conjugate(alpha, gamma) + alpha * x
    assert np.max(np.abs(gap)) < 1e-12  # equality at α = −ℓ'(x)


def test_gradient_matches_finite_differences(iris_tiny):
    rng = np.random.default_rng(0)
    rp = ReducedProblem.unscreened(iris_tiny)
    lam = 50.0
    M = random_psd(4, rng) * 0.05
    ev = rp.evaluate(M, lam)
    E = rng.standard_normal((4, 4)); E = (E + E.T) / 2
    h = 1e-6
    fd = (rp.evaluate(M + h * E, lam).primal - rp.evaluate(M - h * E, lam).primal) / (2 * h)
    assert fd == pytest.approx(np.sum(ev.grad * E), rel=1e-5)


def test_weak_duality_for_random_points(iris_tiny):
    rng = np.random.default_rng(1)
    rp = ReducedProblem.unscreened(iris_tiny)
    sub = rp.active
    for lam in (0.1, 10.0, 1e4):
        for _ in range(5):
            M = random_psd(4, rng) * rng.uniform(0, 0.1)
            alpha = rng.random(iris_tiny.n_triplets)
            fake = Evaluation(M, None, alpha, sub.combine(alpha), 0.0, 0.0, None)
            assert rp.evaluate(M, lam).primal >= rp.dual(fake, lam) - 1e-9


def test_large_lambda_closed_form_has_zero_gap(iris_tiny):
    lam_L, K = lambda_max(iris_tiny)
    rp = ReducedProblem.unscreened(iris_tiny)
    for lam in (lam_L, 3 * lam_L):
        ev = rp.evaluate(K / lam, lam)
        assert rp.gap(ev, lam) <= 1e-12 * abs(ev.primal)
        # α = (1 − ⟨H, M⟩)/γ clipped to 1: at λ = λ_L the top margin is 1 − γ, so α is 1 up to the rounding of the
        # margin, a difference of two squared distances (each ≤ max q), divided by γ.
        q = iris_tiny.pair_values(K / lam)
        rounding = 16 * np.finfo(float).eps * 2 * float(np.abs(q).max()) / iris_tiny.gamma
        assert np.all(ev.alpha >= 1.0 - rounding)
    # just below λ_L the closed form stops being optimal
    lam = 0.5 * lam_L
    ev = rp.evaluate(K / lam, lam)
    assert rp.gap(ev, lam) > 1e-8 * abs(ev.primal)


def cvxpy_rtlm(problem, lam):
    """RTLM with explicit H_t: ℓ(x) = min_{u ≥ 0} u²/(2γ) + (1 − x − u)_+ (smoothed hinge as an inf-convolution)."""
    T, X, d = problem.triplets, problem.X, problem.dim
    a, b = X[T.i] - X[T.l], X[T.i] - X[T.j]
    Hs = (np.einsum("ti,tj->tij", a, a) - np.einsum("ti,tj->tij", b, b)).reshape(len(T), -1)
    M = cp.Variable((d, d), PSD=True)
    u = cp.Variable(len(T), nonneg=True)
    x = Hs @ cp.vec(M, order="C")
    g = problem.gamma
    obj = cp.sum_squares(u) / (2 * g) + cp.sum(cp.pos(1 - x - u)) + lam / 2 * cp.sum_squares(M)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    return M.value, prob.value


@pytest.mark.parametrize("lam_factor", [1e-2, 1e-4])
def test_optimum_matches_cvxpy(lam_factor):
    p = tiny("iris", 4)
    lam = lam_factor * lambda_max(p)[0]
    M_ref, value = cvxpy_rtlm(p, lam)
    res = metric.solve(p, "pg", tol=1e-12, max_iter=20000, lam=lam, bounds="none")
    M = res.solution["M"]
    assert res.converged
    assert res.history["objective"].iloc[-1] == pytest.approx(value, rel=1e-6)
    assert np.linalg.norm(M - M_ref) <= 1e-4 * max(1.0, np.linalg.norm(M_ref))


def test_optimality_conditions_and_method_agreement(iris_tiny):
    lam = 1e-3 * lambda_max(iris_tiny)[0]
    M, gap = reference(iris_tiny, lam)
    rp = ReducedProblem.unscreened(iris_tiny)
    ev = rp.evaluate(M, lam)
    S_plus, _ = iris_tiny.psd_split(ev.S)
    assert np.linalg.norm(lam * M - S_plus) <= 1e-5 * np.linalg.norm(S_plus)  # λM* = [Σα*H]_+
    for method, params in (("active-set", {}), ("pg", {"bounds": "dgb"}), ("active-set", {"bounds": "pgb"})):
        res = metric.solve(iris_tiny, method, tol=1e-11, max_iter=20000, lam=lam, **params)
        assert res.converged
        assert np.linalg.norm(res.solution["M"] - M) <= np.sqrt(2 * (res.info["abs_gap"] + gap) / lam) * 2 + 1e-12


def test_reduced_objective_is_a_lower_bound_equal_at_the_optimum(iris_tiny):
    lam = 1e-2 * lambda_max(iris_tiny)[0]
    M, _ = reference(iris_tiny, lam)
    x = iris_tiny.margins(M)
    in_L, in_R = x < 1 - iris_tiny.gamma - 1e-6, x > 1 + 1e-6
    full, reduced = ReducedProblem.unscreened(iris_tiny), ReducedProblem(iris_tiny, in_L, in_R)
    assert reduced.evaluate(M, lam).primal == pytest.approx(full.evaluate(M, lam).primal, rel=1e-12)
    rng = np.random.default_rng(2)
    for _ in range(10):
        X = M + random_psd(4, rng) * rng.uniform(0, 0.01)
        assert reduced.evaluate(X, lam).primal <= full.evaluate(X, lam).primal + 1e-9


def test_diagonal_problem_matches_cvxpy():
    p = tiny("iris", 4, diagonal=True)
    lam = 1e-3 * lambda_max(p)[0]
    T, X = p.triplets, p.X
    h = (X[T.i] - X[T.l]) ** 2 - (X[T.i] - X[T.j]) ** 2
    m = cp.Variable(p.dim, nonneg=True)
    u = cp.Variable(len(T), nonneg=True)
    g = p.gamma
    value = cp.Problem(cp.Minimize(cp.sum_squares(u) / (2 * g) + cp.sum(cp.pos(1 - h @ m - u))
                                   + lam / 2 * cp.sum_squares(m))).solve(solver="CLARABEL")
    res = metric.solve(p, "pg", tol=1e-12, max_iter=20000, lam=lam, bounds="none")
    assert res.history["objective"].iloc[-1] == pytest.approx(value, rel=1e-6)
    np.testing.assert_allclose(res.solution["M"], m.value, atol=1e-5 * max(1, np.abs(m.value).max()))


def test_hinge_loss_runs_and_gap_is_nonnegative():
    p = tiny("iris", 5, gamma=0.0)
    lam = 1e-2 * lambda_max(p)[0]
    res = metric.solve(p, "pg", tol=1e-6, max_iter=300, lam=lam, bounds="pgb")
    assert (res.history["abs_gap"] >= 0).all()
    assert res.status in ("converged", "max_iter")


@pytest.mark.parametrize("diagonal", [False, True])
def test_positive_part_norm_from_eigenvalues_equals_the_projections_norm(diagonal):
    """The dual's ‖[S]_+‖²_F from S's eigenvalues alone equals the norm of the projection itself, for an
    indefinite, a PSD and a negative definite S."""
    problem = tiny("iris", 6, diagonal=diagonal)
    rng = np.random.default_rng(3)
    d = problem.dim
    for S in ((rng.standard_normal(d) if diagonal else random_psd(d, rng) - random_psd(d, rng)),
              (rng.random(d) if diagonal else random_psd(d, rng)),
              (-rng.random(d) - 0.1 if diagonal else -random_psd(d, rng) - 0.1 * np.eye(d))):
        plus, _ = problem.psd_split(S)
        want = float(np.vdot(plus, plus))
        assert abs(problem.positive_part_norm_sq(S) - want) <= 1e-12 * max(float(np.vdot(S, S)), 1.0)


def test_spectrum_of_the_last_projection_is_reused_and_correct(monkeypatch):
    """``spectrum`` of the array the last projection returned is that projection's eigenpairs (no new
    eigendecomposition), of any other array a fresh one: both rebuild their matrix."""
    problem = tiny("iris", 6)
    rng = np.random.default_rng(4)
    d = problem.dim
    A = random_psd(d, rng) - random_psd(d, rng)
    plus, _ = problem.psd_split(A)
    calls = []
    eigh = np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda M: calls.append(1) or eigh(M))
    mu, V = problem.spectrum(plus)
    assert not calls
    mu2, V2 = problem.spectrum(plus.copy())
    assert calls
    monkeypatch.undo()
    for m, W in ((mu, V), (mu2, V2)):
        np.testing.assert_allclose((W * m) @ W.T, plus, atol=1e-12 * np.abs(plus).max())
    assert 0 < mu.size < d  # the projection of an indefinite matrix drops its negative eigenvalues


def test_a_second_pass_at_the_same_iterate_is_read_for_any_lambda(iris_tiny, monkeypatch):
    """Margins, α and Σ αH at M do not depend on λ: the unscreened problem's pass at M serves the next λ (a
    path's first evaluation at λ_t is at M_{t−1}) with λ's own P̃, ∇P̃ and gap, and copies of M are recomputed."""
    rng = np.random.default_rng(5)
    M = random_psd(iris_tiny.dim, rng)
    rp = ReducedProblem.unscreened(iris_tiny)
    rp.evaluate(M, 1.0)
    passes = []
    terms = type(iris_tiny.everything).loss_terms
    monkeypatch.setattr(type(iris_tiny.everything), "loss_terms", lambda *a, **k: passes.append(1) or terms(*a, **k))
    read = rp.evaluate(M, 3.0)
    assert not passes
    fresh_problem = ReducedProblem.unscreened(iris_tiny)
    fresh = fresh_problem.evaluate(M.copy(), 3.0)
    assert passes
    scale = np.abs(fresh.grad).max()
    np.testing.assert_allclose(read.grad, fresh.grad, rtol=0, atol=1e-12 * scale)
    assert read.primal == pytest.approx(fresh.primal, rel=1e-12)
    assert rp.gap(read, 3.0) == pytest.approx(fresh_problem.gap(fresh, 3.0), rel=1e-9, abs=1e-12 * abs(fresh.primal))

"""Screening rules against convex-optimisation references (cvxpy), and their ordering sphere ⊆ linear ⊆ SDP."""
import cvxpy as cp
import numpy as np
import pytest

from solvers.metric.bounds import Sphere, gradient_bound, projected_gradient_bound
from solvers.metric.problem import ReducedProblem, lambda_max
from solvers.metric.rules import appendix_b_min, linear_rule_min, screen
from tests.metric.conftest import explicit_H, random_psd, reference



def ball_min(H, Q, r, P=None, psd=False):
    d = Q.shape[0]
    X = cp.Variable((d, d), PSD=True) if psd else cp.Variable((d, d), symmetric=True)
    cons = [cp.norm(X - Q, "fro") <= r]
    if P is not None:
        cons.append(cp.sum(cp.multiply(P, X)) >= 0)
    prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(H, X))), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


def test_theorem_3_1_closed_form_matches_cvxpy(iris_tiny):
    rng = np.random.default_rng(0)
    checked_case3 = 0
    for trial in range(12):
        Q = rng.standard_normal((4, 4)); Q = (Q + Q.T) / 2
        P = random_psd(4, rng)
        r = rng.uniform(0.2, 2.0)
        sphere = Sphere("test", Q, r, False, P)
        for t in rng.choice(iris_tiny.n_triplets, 3, replace=False):
            H = explicit_H(iris_tiny, t)
            hQ, hP, nu = np.sum(H * Q), np.sum(H * P), np.linalg.norm(H)
            ours = linear_rule_min(np.array([hQ]), np.array([hP]), np.array([nu]), sphere)[0]
            if np.sum(P * Q) ** 2 >= r * r * np.sum(P * P) and np.sum(P * Q) < 0:
                continue  # the half-space misses the ball: infeasible, nothing to compare
            want = ball_min(H, Q, r, P)
            assert ours == pytest.approx(want, rel=1e-5, abs=1e-6)
            checked_case3 += ours > hQ - r * nu + 1e-9
    assert checked_case3 > 0  # the non-trivial case was exercised


def test_appendix_b_matches_cvxpy():
    rng = np.random.default_rng(1)
    d = 6
    for _ in range(20):
        q = np.maximum(rng.standard_normal(d), 0)
        h = rng.standard_normal((1, d))
        r = rng.uniform(0.1, 3)
        x = cp.Variable(d, nonneg=True)
        want = cp.Problem(cp.Minimize(h[0] @ x), [cp.norm(x - q) <= r]).solve(solver="CLARABEL")
        assert appendix_b_min(q, h, r)[0] == pytest.approx(want, rel=1e-6, abs=1e-6)
    # degenerate: h ≥ 0 and a ball that reaches the origin → minimum 0
    assert appendix_b_min(np.array([0.1, 0.2]), np.array([[1.0, 2.0]]), 5.0)[0] == pytest.approx(0.0)


def test_semidefinite_rule_is_sound_and_tight_against_sdp(iris_tiny):
    """Screened by the SDLS rule ⇒ the SDP min/max is on the screened side; clear SDP verdicts are found."""
    lam = 1e-3 * lambda_max(iris_tiny)[0]
    M_star, _ = reference(iris_tiny, lam)
    rp = ReducedProblem.unscreened(iris_tiny)
    ev = rp.evaluate(M_star * 1.3, lam)
    g = iris_tiny.gamma
    rng = np.random.default_rng(2)
    for sphere in (gradient_bound(rp, ev, lam), projected_gradient_bound(rp, ev, lam)):
        idx = rng.choice(iris_tiny.n_triplets, 25, replace=False)
        to_L, to_R = screen(iris_tiny, sphere, idx, "sdp")
        for k, t in enumerate(idx):
            H = explicit_H(iris_tiny, t)
            lo = ball_min(H, sphere.center, sphere.radius, psd=True)
            hi = -ball_min(-H, sphere.center, sphere.radius, psd=True)
            if to_R[k]:
                assert lo > 1 - 1e-6
            if to_L[k]:
                assert hi < 1 - g + 1e-6
            if lo > 1 + 1e-4:
                assert to_R[k]
            if hi < 1 - g - 1e-4:
                assert to_L[k]


@pytest.mark.parametrize("fixture", ["iris_tiny", "wine_tiny", "iris_diag"])
def test_rules_are_monotone(fixture, request):
    problem = request.getfixturevalue(fixture)
    rp = ReducedProblem.unscreened(problem)
    lam_L, K = lambda_max(problem)
    idx = np.arange(problem.n_triplets)
    for f in (1e-2, 1e-4):
        lam = f * lam_L
        M_star, _ = reference(problem, lam, tol=1e-9)
        ev = rp.evaluate(M_star * 0.9 + K / lam_L * 0.1, lam)
        gb = gradient_bound(rp, ev, lam)
        pgb = projected_gradient_bound(rp, ev, lam)
        verdicts = {}
        for rule in ("sphere", "linear", "sdp"):
            L, R = screen(problem, gb, idx, rule)
            verdicts[rule] = L | R
            assert not (L & R).any()
        assert np.all(verdicts["sphere"] <= verdicts["linear"])
        assert np.all(verdicts["sphere"] <= verdicts["sdp"])
        L, R = screen(problem, pgb, idx, "sphere")
        assert np.all((L | R) <= verdicts["linear"])  # App. E: GB + linear(P = −Q_-) ⊇ PGB sphere
        assert verdicts["sdp"].sum() >= verdicts["linear"].sum()


def test_supporting_normal_is_psd_even_when_the_negative_part_is_rounding_noise(iris_tiny):
    """Regression: P = A_+ − A built by subtraction is noise when A_- ≈ 0 and cut the cone (false screens)."""
    rng = np.random.default_rng(3)
    V = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    A = (V * np.array([5.0, 2.0, 1.0, -1e-15])) @ V.T
    P = iris_tiny.supporting_normal(A)
    w = np.linalg.eigvalsh(P)
    assert w.min() >= -1e-12 * w.max()
    old = iris_tiny.psd_split(A)[0] - A  # the subtraction: noise of size eps·‖A‖, far from PSD relative to itself
    w_old = np.linalg.eigvalsh(old)
    assert w_old.min() < -1e-3 * w_old.max()
    for _ in range(100):
        X = random_psd(4, rng)
        assert np.sum(P * X) >= 0

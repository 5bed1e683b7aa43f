"""Sphere bounds: each contains M*, and the paper's relations between them (Thm 3.4, 3.8, 3.9, 3.10; PGB ≤ GB)."""
import math

import numpy as np
import pytest

from solvers.metric.bounds import (constrained_duality_gap_bound, duality_gap_bound, gradient_bound,
                                   projected_gradient_bound, regularization_path_bound,
                                   relaxed_regularization_path_bound)
from solvers.metric.problem import ReducedProblem, inner, lambda_max
from tests.metric.conftest import random_psd, reference


def dist(A, B):
    return math.sqrt(inner(A - B, A - B))


@pytest.fixture(scope="module", params=["iris_tiny", "iris_diag"])
def setting(request):
    problem = request.getfixturevalue(request.param)
    lam_L = lambda_max(problem)[0]
    lams = [lam_L * f for f in (1e-1, 1e-3, 1e-5)]
    refs = {lam: reference(problem, lam) for lam in lams}
    return problem, refs


def test_every_dynamic_sphere_contains_the_optimum(setting):
    problem, refs = setting
    rp = ReducedProblem.unscreened(problem)
    rng = np.random.default_rng(0)
    for lam, (M_star, gap_ref) in refs.items():
        slack = math.sqrt(2 * gap_ref / lam) + 1e-10
        for scale in (0.0, 0.3, 3.0):  # the optimum itself, near it and far from it
            noise = random_psd(problem.dim, rng) if not problem.diagonal else rng.random(problem.dim)
            M = M_star + scale * noise * math.sqrt(inner(M_star, M_star)) / problem.dim
            ev = rp.evaluate(M, lam)
            gap = rp.gap(ev, lam)
            spheres = [gradient_bound(rp, ev, lam), projected_gradient_bound(rp, ev, lam),
                       duality_gap_bound(rp, ev, lam, gap), constrained_duality_gap_bound(rp, ev, lam)]
            for s in spheres:
                assert dist(M_star, s.center) <= s.radius + slack, s.name
            gb, pgb = spheres[0], spheres[1]
            assert pgb.radius <= gb.radius + 1e-12


def test_pgb_radius_vanishes_at_the_optimum_but_gb_does_not(setting):
    problem, refs = setting
    rp = ReducedProblem.unscreened(problem)
    lam = min(refs)
    M_star, _ = refs[lam]
    ev = rp.evaluate(M_star, lam)
    gb, pgb = gradient_bound(rp, ev, lam), projected_gradient_bound(rp, ev, lam)
    scale = math.sqrt(inner(M_star, M_star))
    assert pgb.radius <= 1e-4 * scale  # Thm 3.4
    _, S_minus = problem.psd_split(ev.S)
    assert gb.radius == pytest.approx(math.sqrt(inner(S_minus, S_minus)) / (2 * lam), rel=1e-4)


def test_pgb_equals_rpb_and_dgb_doubles_it(setting):
    problem, refs = setting
    lams = sorted(refs, reverse=True)
    rp = ReducedProblem.unscreened(problem)
    for lam0, lam1 in ((lams[0], lams[0] * 0.7), (lams[1], lams[1] * 1.4)):
        M0, gap0 = refs[lam0] if lam0 in refs else reference(problem, lam0)
        ev = rp.evaluate(M0, lam1)
        rpb = regularization_path_bound(M0, lam0, lam1)
        pgb = projected_gradient_bound(rp, ev, lam1)
        dgb = duality_gap_bound(rp, ev, lam1, rp.gap(ev, lam1))
        tol = 1e-5 * math.sqrt(inner(M0, M0))
        assert dist(pgb.center, rpb.center) <= tol and pgb.radius == pytest.approx(rpb.radius, abs=tol)  # Thm 3.8
        assert dgb.radius == pytest.approx(2 * rpb.radius, abs=2 * tol)  # Thm 3.9
        assert dist(dgb.center, rpb.center) == pytest.approx(rpb.radius, abs=tol)  # RPB tangent inside DGB


def test_rrpb_relations(setting):
    problem, refs = setting
    lam0 = max(refs)
    M0, gap0 = refs[lam0]
    eps = math.sqrt(2 * gap0 / lam0)
    for lam1 in (0.5 * lam0, 0.9 * lam0, 1.2 * lam0):
        rpb = regularization_path_bound(M0, lam0, lam1)
        rrpb = relaxed_regularization_path_bound(M0, lam0, lam1, max(eps, 1e-6))
        assert dist(rpb.center, rrpb.center) + rpb.radius <= rrpb.radius + 1e-12  # RRPB ⊇ RPB
        M1, gap1 = reference(problem, lam1)
        assert dist(M1, rrpb.center) <= rrpb.radius + math.sqrt(2 * gap1 / lam1) + 1e-10
    # λ1 = λ0 with ε = r_DGB is DGB
    rp = ReducedProblem.unscreened(problem)
    M = M0 * 1.1
    ev = rp.evaluate(M, lam0)
    dgb = duality_gap_bound(rp, ev, lam0, rp.gap(ev, lam0))
    same = relaxed_regularization_path_bound(M, lam0, lam0, dgb.radius)
    assert same.radius == pytest.approx(dgb.radius) and dist(same.center, dgb.center) == 0


def test_cdgb_is_dgb_over_sqrt2_at_the_dual_built_point(setting):
    problem, refs = setting
    lam = sorted(refs)[1]
    rp = ReducedProblem.unscreened(problem)
    M_star, _ = refs[lam]
    ev = rp.evaluate(M_star * 0.8, lam)
    cdgb = constrained_duality_gap_bound(rp, ev, lam)
    ev_c = rp.evaluate(cdgb.center, lam)
    # DGB built at the CDGB centre with the same α: its gap P(M_λ(α)) − D(α)
    gap_same_alpha = ev_c.primal - rp.dual(ev, lam)
    dgb = duality_gap_bound(rp, ev_c, lam, gap_same_alpha)
    assert cdgb.radius == pytest.approx(dgb.radius / math.sqrt(2), rel=1e-9)

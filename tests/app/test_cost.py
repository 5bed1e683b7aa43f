"""app/ui/cost.py: run-size estimates agree with the families' own counts, and the known offenders are refused."""
import numpy as np
import pytest

from app.ui import cost
from solvers.core import InputError
from solvers.datasets import Dataset
from solvers.metric.triplets import count_triplets


@pytest.mark.parametrize("k", [0, 1, 3, 50])
def test_metric_triplet_count_matches_the_family(k):
    y = np.random.default_rng(k).integers(0, 4, 200)
    estimate = cost.metric_cost(y, 5, k=k, diagonal=False, max_samples=0, max_steps=10, max_iter=10, rules=["sphere"])
    assert f"{count_triplets(np.unique(y, return_inverse=True)[1], None if k == 0 else k):,} triplets" in estimate.what


def _breast_cancer_shape():
    return np.repeat([0, 1], [212, 357]), 30  # sklearn's breast_cancer: 569 samples, 30 features


def test_metric_all_triplets_on_breast_cancer_is_refused_with_advice():
    y, d = _breast_cancer_shape()
    c = cost.metric_cost(y, d, k=0, diagonal=False, max_samples=0, max_steps=200, max_iter=2000, rules=["sphere"] * 3)
    with pytest.raises(InputError, match="k ≥ 1.*max_samples"):
        cost.check(c)
    small = cost.metric_cost(y, d, k=3, diagonal=False, max_samples=0, max_steps=200, max_iter=2000,
                             rules=["sphere"] * 3)
    assert small.seconds < c.seconds / 50  # k = 3 instead of all triplets is the advice that works


def test_metric_wide_csv_needs_more_memory_than_the_budget(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(4 * 2**30))
    c = cost.metric_cost(np.repeat([0, 1], 20), 3000, k=3, diagonal=False, max_samples=0, max_steps=200,
                         max_iter=2000, rules=["sphere"] * 3)
    with pytest.raises(InputError, match="memory budget.*PCA"):
        cost.check(c)
    diagonal = cost.metric_cost(np.repeat([0, 1], 20), 3000, k=3, diagonal=True, max_samples=0, max_steps=200,
                                max_iter=2000, rules=["sphere"] * 3)
    assert diagonal.bytes < 4 * 2**30 / 100  # a diagonal M keeps d numbers per λ, not d²


def test_multitask_wide_csv_is_refused_and_the_default_is_live():
    wide = Dataset("wide", np.zeros((60, 1500)), np.zeros((60, 3)), "regression")
    with pytest.raises(InputError, match="fewer features"):
        cost.check(cost.multitask_cost(wide, 42, max_iter=300, methods=3))
    small = Dataset("small", np.zeros((180, 30)), np.zeros(180), "regression", groups=np.repeat(np.arange(12), 15))
    c = cost.multitask_cost(small, 126, max_iter=300, methods=3)
    assert "126 task rows" in c.what and "12 tasks" in c.what
    assert c.seconds < cost.LIVE_SECONDS


def test_time_limit_comes_from_the_environment(monkeypatch):
    c = cost.Cost("x", iterations=1000, flops_per_iter=cost.FLOP_RATE, bytes=0, advice="do less")
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", "10000")
    cost.check(c)
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", "100")
    with pytest.raises(InputError, match="do less"):
        cost.check(c)
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", "not a number")
    assert cost.run_limit_seconds() == cost.DEFAULT_RUN_LIMIT


def test_describe_names_the_worst_case_when_caps_are_far_above_the_typical_run():
    c = cost.Cost("x", iterations=10, flops_per_iter=0, bytes=2048, advice="", max_iterations=10_000)
    text = c.describe()
    assert "2.0 KiB" in text and "up to" in text
    assert "up to" not in cost.Cost("x", 10, 0, 0, "").describe()


def test_sparse_sweep_is_bounded_by_the_time_limit():
    c = cost.sparse_cost(10**9, 10**5, 10**4, max_iter=10_000, time_limit=2.0, methods=3, fits=15)
    assert c.seconds == pytest.approx(2.0 * 3 * 15)


def test_metric_path_length_follows_rho_and_the_stop_rule():
    y = np.repeat([0, 1, 2], 50)  # iris's shape: 150 samples, 3 classes, d = 4

    def path(**kw):
        return cost.metric_cost(y, 4, k=3, diagonal=False, max_samples=0, max_iter=2000, rules=["sphere"], **kw)
    default = path(max_steps=200)
    assert path(max_steps=200, rho=0.9).iterations == pytest.approx(default.iterations * np.log(0.8) / np.log(0.9))
    assert path(max_steps=10_000, stop=0.0).iterations == pytest.approx(default.iterations * 10_000 / 60)
    assert default.seconds < cost.LIVE_SECONDS  # the page's iris default (1 s a path here) stays live


def test_smm_estimate_tells_the_methods_apart():

    def seconds(methods):
        return cost.smm_cost(500, 10, 10, max_iter=500, methods=methods).seconds
    # F-ADMM's dual QP per step: 27–40 steps of 2.6–3.7 ms against ALM-SNCG's 6–11 of 3–7.5 ms (CPU s, 500 × 10 × 10)
    assert seconds(["fadmm"]) > 2 * seconds(["alm-sncg"])
    assert seconds(["sgs-ispadmm"]) > seconds(["ispadmm"])  # closed-form steps, but it runs to its cap
    assert seconds(["alm-sncg", "ispadmm"]) < cost.LIVE_SECONDS  # the page's default pair stays live


def test_smm_default_page_run_is_estimated_live():
    """The page's default (3,000 synthetic samples of 30 × 30, ALM-SNCG and isPADMM, max_iter 500) took 1.0 CPU s in
    all (7 ALM steps, 28 isPADMM steps); the old per-n·pq model said 70 s and turned the live re-run off."""
    c = cost.smm_cost(3000, 30, 30, max_iter=500, methods=["alm-sncg", "ispadmm"])
    assert c.seconds < cost.LIVE_SECONDS
    assert c.iterations == pytest.approx(10 + 28)
    started = cost.smm_cost(3000, 30, 30, max_iter=500, methods=["alm-sncg", "ispadmm"], warm_start=4)
    assert started.iterations == pytest.approx(10 + 28 + 4) and started.seconds < cost.LIVE_SECONDS
    assert cost.smm_cost(3000, 30, 30, max_iter=500, methods=["ispadmm"], warm_start=4).iterations == 28


def test_smm_estimate_asks_for_run_where_the_three_baselines_run_for_seconds():
    """sGS-isPADMM to its cap of 500 steps, F-ADMM and ALM-SNCG from 43 isPADMM steps at 3000 × 30 × 30 took 6.3 CPU s
    (one thread, τ = 10 and 200; 17 s of wall time in a loaded test run): over the live limit, so the page waits."""
    c = cost.smm_cost(3000, 30, 30, max_iter=500, methods=["sgs-ispadmm", "alm-sncg", "fadmm"], warm_start=43)
    assert c.seconds > cost.LIVE_SECONDS


#: the path form's extremes (PATH_SPECS and smm.PATH_PARAMS bounds) beside the page's default
PATH_DEFAULT = dict(points=10, path_tol=1e-4, eps_hat=0.05, d_max=500, max_rounds=20)
PATH_EXTREMES = {"50 points": dict(points=50), "tolerance 1e-8": dict(path_tol=1e-8),
                 "one violator a round, no margin": dict(eps_hat=0.0, d_max=1),
                 "a thousand rounds": dict(eps_hat=0.0, d_max=1, max_rounds=1000)}


def _path(n=3000, p=30, q=30, time_limit=60.0, **change):
    return cost.smm_path_cost(n, p, q, time_limit=time_limit, **{**PATH_DEFAULT, **change})


@pytest.mark.parametrize("extreme", list(PATH_EXTREMES))
def test_smm_path_extremes_cost_more_than_the_default(extreme):
    """The C-path form had no estimate: a state a random walk reached ran past 120 s. Measured (CPU s, both paths):
    the default 2.6 s at 3,000 × 30 × 30; ε = 1e-8 takes 11 ALM steps a point against 3.3 at 1e-4; ε̂ = 0 with
    d_max = 1 sieves 20 rounds a point (1.6 s a point at 3,000 × 30 × 30)."""
    default, worse = _path(), _path(**PATH_EXTREMES[extreme])
    assert worse.seconds > 1.2 * default.seconds
    assert _path(**{**PATH_EXTREMES[extreme], "points": 50}).seconds > cost.LIVE_SECONDS  # shown; over a run limit refused
    assert _path(p=120, q=120).seconds > 10 * default.seconds  # upsample 4: 16 × the entries


def test_smm_path_estimate_is_bounded_by_the_time_limit_plus_a_point(monkeypatch):
    """Each path stops after the grid point that passes its time limit, so a capped path costs the limit and at most
    one point more (a point at ε = 1e-8 on 3,000 × 30 × 30: 0.2 s); a state whose points are too long is refused."""
    capped = _path(points=50, path_tol=1e-8, time_limit=2.0)
    assert 2 * 2.0 < capped.seconds < 2 * (2.0 + 1.0) < _path(points=50, path_tol=1e-8).seconds
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", "15")  # a small server's limit (the fuzz's): each path gets 7.5 s
    slow_points = _path(points=2, p=120, q=120, eps_hat=0.0, d_max=1, time_limit=cost.path_time_limit(60.0, 2))
    with pytest.raises(InputError, match="fewer grid points.*d_max"):
        cost.check(slow_points)


def test_smm_path_form_refuses_before_any_path_job_starts(monkeypatch):
    """Through the page: a path state estimated over the run limit shows the refusal with what to change, and no
    path job runs (today's page started both paths without an estimate)."""
    from solvers.sweep import family_jobs
    from tests.app_harness import open_page

    started = []
    monkeypatch.setattr(family_jobs, "smm_path_job", lambda config, data: started.append(config) or {})
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", "3")  # the default run (≈ 1 s) passes; each path gets 1.5 s
    at = open_page("smm", run=False)
    state = {"smm.view": "Path", "smm.path.points": 50, "smm.path.path_tol": 1e-8, "smm.path.eps_hat": 0.0,
             "smm.path.d_max": 1}
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    live = at.toggle(key="smm.live")
    assert live.value and not live.proto.disabled  # the default run re-runs live
    assert _path(points=50, path_tol=1e-8, eps_hat=0.0, d_max=1, time_limit=1.5).seconds > 3  # the premise
    next(b for b in at.button if b.label == "Compute the path").click().run()
    assert not at.exception
    assert any("fewer grid points" in e.value for e in at.error), [e.value for e in at.error]
    assert started == []


def test_metric_full_size_segment_preset_is_accepted_and_screening_weighs_less(monkeypatch):
    """The page's "segment at full size" preset (2,310 samples in 7 classes of 330, d = 19, k = 20, ρ = 0.9, a naive
    and an RRPB+PGB path) took 75 CPU s on the shared machine; the old model estimated 117 min and the page
    refused it. A screened path is estimated below a naive one (its iterations cost about half)."""
    monkeypatch.delenv("OPTLAB_RUN_LIMIT_S", raising=False)
    y = np.repeat(np.arange(7), 330)

    def estimate(rules):
        return cost.metric_cost(y, 19, k=20, diagonal=False, max_samples=0, max_steps=200, max_iter=2000, rules=rules,
                                rho=0.9)
    preset = estimate(["naive", "sphere"])
    cost.check(preset)
    assert preset.seconds < cost.DEFAULT_RUN_LIMIT / 2
    assert estimate(["sphere"]).seconds < estimate(["naive"]).seconds < preset.seconds


def test_the_cvxpy_sdp_is_costed_as_an_interior_point_method_not_as_first_order_steps():
    """The SDP's Newton systems grow as d⁶: at d = 64 (the multitask-digits generator) it took 50–63 s live, while
    first-order steps at that size cost milliseconds; it must wait for Run there, and stay cheap at d = 10."""
    from types import SimpleNamespace

    from app.ui.cost import LIVE_SECONDS, multitask_cost

    data = lambda d: SimpleNamespace(y=np.zeros((100, 5)), groups=None, classes=[0, 1], n_features=d)  # noqa: E731
    assert multitask_cost(data(64), 100, max_iter=200, methods=["bcd"]).seconds < LIVE_SECONDS
    assert multitask_cost(data(64), 100, max_iter=200, methods=["bcd", "cvxpy"]).seconds > LIVE_SECONDS
    assert multitask_cost(data(10), 100, max_iter=200, methods=["apg", "cvxpy"]).seconds < LIVE_SECONDS


def test_tsne_waits_for_a_press_from_about_600_points():
    """Measured 1.5 CPU s for 400 points and 5.2–5.9 s for 1000 a projection: NPSVC++'s two projections at the
    slider's default (400) run at once, at its maximum (1000) they wait."""
    assert cost.tsne_cost(400, projections=2).seconds == pytest.approx(3.0, rel=0.1)
    assert cost.tsne_cost(400, projections=2).seconds < cost.LIVE_SECONDS < cost.tsne_cost(1000, projections=2).seconds
    assert cost.tsne_cost(1000, projections=1).seconds == pytest.approx(5.9, rel=0.1)

"""AppTest of app/views/metric.py: default run, every bound and rule, extreme values, bad input, random walk."""
import base64

import numpy as np
import pytest

from tests.app_harness import assert_clean, click_run, errors, open_page, plotly_figures, random_walk, trace_names


@pytest.fixture(scope="module")
def page():
    return open_page("metric")


VIEWS = ("Screening", "Time", "Dynamic", "Range", "Radii", "Solution", "Safety", "Geometry", "Data", "Algorithm",
         "Export")


def open_view(at, view: str):
    """Open a tab as a click would (the page computes only the open tab)."""
    at.session_state["ml.view"] = view
    return at.run()


def test_default_run_draws_every_chart(page):
    assert_clean(page)
    figs, names, audits = [], set(), []
    for view in VIEWS:
        open_view(page, view)
        assert_clean(page)
        shown = plotly_figures(page)
        if view == "Screening":
            assert len(shown) == 2, "the first view draws its own figures only (the rest are computed on opening)"
        figs += shown
        names |= trace_names(page)
        audits += [df for df in (d.value for d in page.dataframe) if "false screens (must be 0)" in df]
    assert {"Naive (no screening)", "PGB", "RRPB"} <= names
    assert {"GB (r = ", "optimum M*"} & {n[:8] for n in names if n} or "optimum M*" in names
    titles = [f["layout"]["title"]["text"] for f in figs]
    for expected in ("Screening rate along the regularisation path", "CPU time ratio", "Total path time",
                     "Dynamic screening rate", "Range-based screening rate", "Radius of each sphere", "Margins at",
                     "Learned metric", "Eigenvalues of M", "3-NN accuracy", "Geometry of the bounds", "safety audit"):
        assert any(expected in t for t in titles), expected
    assert any(f["layout"].get("yaxis", {}).get("type") == "log" for f in figs)
    for f in figs:
        layout = f["layout"]
        assert layout.get("xaxis", {}).get("title", {}).get("text"), layout["title"]["text"]
    assert audits and (audits[0]["false screens (must be 0)"] == 0).all()


@pytest.mark.slow
def test_every_bound_and_rule_runs():
    at = open_page("metric")
    # a short path on fewer triplets first: each change below re-runs every selected bound × rule
    at.slider(key="ml.path.rho").set_value(0.5).run()
    at.slider(key="ml.problem.k").set_value(2).run()
    at.multiselect(key="ml.bounds").set_value(["naive", "gb", "pgb", "dgb", "cdgb", "rrpb", "rrpb+pgb"]).run()
    at.multiselect(key="ml.rules").set_value(["sphere", "linear", "sdp"]).run()
    click_run(at)
    assert_clean(at)
    names = trace_names(at)
    open_view(at, "Safety")
    for bound in ("GB", "PGB", "DGB", "CDGB", "RRPB", "RRPB+PGB"):
        for rule in ("sphere", "sphere + linear", "sphere + semidefinite"):
            assert f"{bound} · {rule}" in names
    audit = [df for df in (d.value for d in at.dataframe) if "false screens (must be 0)" in df][0]
    assert (audit["false screens (must be 0)"] == 0).all()


@pytest.mark.slow
def test_extreme_values_never_crash():
    at = open_page("metric")
    at.slider(key="ml.path.rho").set_value(0.5).run()  # short paths for the rest of the test
    for key, value in (("ml.problem.gamma", 0.0), ("ml.problem.gamma", 0.5), ("ml.problem.k", 1)):
        at.slider(key=key).set_value(value).run()
        assert_clean(at)
    at.number_input(key="ml.path.period").set_value(1).run()
    at.toggle(key="ml.problem.diagonal").set_value(True).run()
    at.toggle(key="ml.path.active_set").set_value(True).run()
    at.toggle(key="ml.path.range_screening").set_value(True).run()
    assert_clean(at)
    at.select_slider(key="ml.stop.max_iter").set_value(10).run()
    click_run(at)
    assert_clean(at)


def test_time_tab_reports_each_runs_real_status_iterations_and_time():
    at = open_page("metric", timeout=100)
    at.select_slider(key="ml.stop.max_iter").set_value(10).run()
    at.select_slider(key="ml.stop.tol").set_value(1e-10).run()
    click_run(at)
    open_view(at, "Time")
    assert_clean(at)
    summary = next(df for df in (d.value for d in at.dataframe) if "status" in df)
    assert set(summary["method"]) == {"Naive (no screening)", "PGB", "RRPB"}
    assert (summary["status"] == "max_iter").all()  # no λ can reach a 1e-10 gap in 10 iterations
    assert (summary["rel_gap"] > 1e-10).all()
    assert (summary["λ stopped at max_iter"] > 0).all()
    assert (summary["iterations"] > 0).all() and (summary["time [s]"] > 0).all()


def test_dynamic_tab_explains_a_path_without_screening_rounds():
    at = open_page("metric", timeout=100)
    at.number_input(key="ml.path.max_steps").set_value(1).run()
    click_run(at)
    open_view(at, "Dynamic")
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert not any("Dynamic screening rate" in t for t in titles), "an empty heatmap is drawn"
    assert any("No dynamic screening round ran" in i.value for i in at.info)


def test_bad_input_shows_an_error_not_a_traceback(monkeypatch):
    at = open_page("metric")
    at.radio(key="ml.data.source").set_value("synthetic").run()
    at.number_input(key="ml.data.gen.metric-blobs.n_samples").set_value(4).run()
    click_run(at)
    assert not at.exception
    assert any("1 sample(s)" in e for e in errors(at))
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", "2000")
    at.number_input(key="ml.data.gen.metric-blobs.n_samples").set_value(60).run()
    click_run(at)
    assert not at.exception
    assert any("triplets" in e and "budget" in e for e in errors(at))


def test_missing_gpu_is_an_error_not_a_traceback():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible here")
    at = open_page("metric")
    at.selectbox(key="ml.problem.device").set_value("cuda").run()
    click_run(at)
    assert not at.exception
    assert any("CUDA" in e for e in errors(at))


@pytest.mark.slow
def test_random_walk_never_raises():
    random_walk("metric", seed=3, steps=8,
                skip_keys=("ml.data", "ml.problem.k", "ml.problem.max_samples", "ml.rules", "ml.path.rho",
                           "ml.path.max_steps", "ml.stop.tol", "ml.problem.scale",
                           "ml.preset", "ml.apply_preset"))  # presets change the data (segment: minutes per run)


def test_fast_preset_shows_screening_remove_most_triplets():
    from solvers.datasets import REAL
    if not REAL["iris.scale"].available():
        pytest.skip("iris.scale (the preset's data) is not in the data directory")
    at = open_page("metric")
    at.selectbox(key="ml.preset").set_value("fast").run()
    at.button(key="ml.apply_preset").click().run()
    assert_clean(at)
    open_view(at, "Time")
    work = [f for f in plotly_figures(at) if "Work left after path screening" in f["layout"]["title"]["text"]]
    assert work, "the work-share figure is missing"
    left = _values(next(tr["y"] for tr in work[0]["data"] if tr["name"].endswith(": triplets")))
    assert np.median(left) <= 0.1  # the preset's promise: the median λ keeps at most 10 % of triplets
    bars = [f for f in plotly_figures(at) if "Total path time" in f["layout"]["title"]["text"]][0]
    assert {tr["name"] for tr in bars["data"]} == {"optimisation", "screening"}


def _values(encoded) -> np.ndarray:
    """A trace's numbers from the figure's JSON (plotly encodes numpy arrays as base64 with their dtype)."""
    if isinstance(encoded, dict):
        return np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=encoded["dtype"])
    return np.asarray(encoded, dtype=float)

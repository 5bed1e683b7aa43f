"""AppTest of the Home and Foundations pages: default run, each method, extremes, bad uploads."""
import numpy as np
import pytest

from solvers import foundations as fd
from tests.app_harness import assert_clean, click_run, errors, open_page, plotly_figures, random_walk, trace_names, upload


def test_home_lists_every_family_and_runs_clean():
    at = open_page("main")
    assert_clean(at)
    assert at.title[0].value == "Optimization lab"
    text = " ".join(m.value for m in at.markdown)
    assert "Foundations" in text


def test_default_run_draws_every_method_and_the_rate_guides():
    at = open_page("foundations")
    assert_clean(at)
    names = trace_names(at)
    assert {m.label for m in fd.METHODS.values()} <= names
    assert any(n.startswith("O(1/k)") for n in names) and any(n.startswith("O(1/k²)") for n in names)
    gap = next(f for f in plotly_figures(at) if "gap" in f["layout"]["title"]["text"])
    assert gap["layout"]["yaxis"]["type"] == "log" and gap["layout"]["xaxis"]["title"]["text"]


@pytest.mark.parametrize("method", list(fd.METHODS))
@pytest.mark.parametrize("constraint", ["none", "box", "l0", "capped-simplex"])
def test_each_method_on_each_constraint(method, constraint):
    at = open_page("foundations", run=False)
    at.query_params["fd.methods"] = fd.METHODS[method].label  # bound multiselects use the shown labels
    at.query_params["fd.problem.constraint"] = constraint
    at.run()
    assert_clean(at)
    assert fd.METHODS[method].label in trace_names(at)
    assert at.multiselect(key="fd.methods").value == [method]


def test_extreme_sliders_do_not_break_the_page():
    at = open_page("foundations")
    at.slider(key="fd.m.gd.step").set_value(2.5).run()  # beyond 2/L: gradient descent diverges, visibly
    at.select_slider(key="fd.problem.kappa").set_value(1e4).run()
    at.select_slider(key="fd.stop.max_iter").set_value(5000).run()
    at.slider(key="fd.m.heavy-ball.beta").set_value(0.99).run()
    assert_clean(at)
    statuses = [r for r in at.dataframe[0].value["status"]]
    assert set(statuses) <= {"converged", "max_iter", "diverged"}


def test_rosenbrock_and_logistic_problems_run():
    at = open_page("foundations")
    at.selectbox(key="fd.problem.problem").select("rosenbrock").run()
    assert_clean(at)
    at.selectbox(key="fd.problem.problem").select("logistic").run()
    assert_clean(at)
    assert "Nesterov / FISTA" in trace_names(at)


@pytest.mark.parametrize("content,message", [
    (b"a,b,c,y\n1,2,3,0\n4,5,6,1\n", "exactly 2"),
    (b"a,b,y\n1,2,0\n4,5,1\n7,8,2\n", "two classes"),
    (b"a,b,y\n1,,0\n4,5,1\n", "missing"),
    (b"\x00\x01garbage", "Upload refused"),
])
def test_bad_upload_shows_an_error_not_an_exception(content, message):
    at = open_page("foundations")
    at.selectbox(key="fd.problem.problem").select("logistic").run()
    upload(at, "fd.data", "bad.csv", content)
    assert any(message in e for e in errors(at)), errors(at)


def test_good_upload_runs():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1, 1, (20, 2)), rng.normal(1, 1, (20, 2))]
    rows = "\n".join(f"{a:.4f},{b:.4f},{int(i >= 20)}" for i, (a, b) in enumerate(X))
    at = open_page("foundations")
    at.selectbox(key="fd.problem.problem").select("logistic").run()
    upload(at, "fd.data", "ok.csv", f"x1,x2,y\n{rows}\n".encode())
    assert_clean(at)
    assert "Gradient descent" in trace_names(at)


def test_manual_mode_waits_for_run_and_cache_returns_results():
    at = open_page("foundations")
    at.toggle(key="fd.live").set_value(False).run()
    at.slider(key="fd.problem.x0").set_value(1.5).run()
    assert any("press **Run**" in i.value for i in at.info)
    click_run(at)
    assert_clean(at)
    assert "Gradient descent" in trace_names(at)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_walk_over_all_widgets(seed):
    random_walk("foundations", seed=seed, steps=10)

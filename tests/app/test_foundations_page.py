"""AppTest of the Home and Foundations pages: default run, each method, extremes, bad uploads, presets, controls."""
import base64

import numpy as np
import pytest

from app import latency
from app.views import _foundations_figures as figs
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
    at.slider(key="fd.step").set_value(3.0).run()  # beyond 2/L: gradient descent diverges, visibly
    at.select_slider(key="fd.problem.kappa").set_value(1e4).run()
    at.select_slider(key="fd.stop.max_iter").set_value(5000).run()
    at.slider(key="fd.beta").set_value(0.99).run()
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


def summary(at) -> dict:
    """The Convergence tab's summary table, by method label."""
    return at.dataframe[0].value.set_index("method").to_dict("index")


def as_array(values) -> np.ndarray:
    """A trace's coordinates: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array(values, float)


def iterate_paths(at) -> dict:
    """Each method's drawn path (x, y arrays) on the iterate plot, by legend label."""
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Iterates"))
    return {t["name"]: (as_array(t["x"]), as_array(t["y"])) for t in fig["data"]
            if t.get("name") in {m.label for m in fd.METHODS.values()}}


def press_preset(at, slug):
    at.button(key=f"fd.preset.{slug}").click().run()
    assert_clean(at)
    assert any(i.value.startswith("**") for i in at.info), "the applied preset states its claim"
    return at


def test_preset_heavy_ball_overshoots_and_gradient_descent_does_not():
    at = press_preset(open_page("foundations"), "heavy-ball-overshoots")
    problem = fd.make_problem(None, problem="quadratic", kappa=at.select_slider(key="fd.problem.kappa").value)
    start = np.array([at.slider(key="fd.problem.x0").value, at.slider(key="fd.problem.y0").value]) - problem.x_star
    paths = iterate_paths(at)
    # (x_k − x*)·(x_0 − x*) < 0 means the iterate is on the far side of x*; step 1/L gradient descent keeps every
    # eigen-component's sign (factor 1 − λ/L ≥ 0), so for it the product stays positive.
    along = {label: ((x - problem.x_star[0]) * start[0] + (y - problem.x_star[1]) * start[1]) / (start @ start)
             for label, (x, y) in paths.items()}
    assert along["Heavy ball"].min() < -0.01
    assert along["Gradient descent"].min() > 0


def test_preset_step_above_two_over_L_diverges():
    at = press_preset(open_page("foundations"), "gd-diverges")
    assert at.slider(key="fd.step").value > 2
    assert summary(at)["Gradient descent"]["status"] == "diverged"


def test_preset_nesterov_beats_gradient_descent():
    at = press_preset(open_page("foundations"), "nesterov-beats-gd")
    rows = summary(at)
    assert rows["Nesterov / FISTA"]["objective"] < 1e-2 * rows["Gradient descent"]["objective"]


def test_preset_rosenbrock_momentum_follows_the_valley():
    at = press_preset(open_page("foundations"), "rosenbrock-valley")
    rows = summary(at)
    assert rows["Gradient descent"]["objective"] > 1  # f* = 0 at (1, 1)
    assert rows["Heavy ball"]["objective"] < 0.1 and rows["Nesterov / FISTA"]["objective"] < 0.1


def test_preset_from_a_link_is_applied_once():
    at = open_page("foundations", query={"preset": "gd-diverges"})
    assert_clean(at)
    assert at.multiselect(key="fd.methods").value == ["gd"] and at.slider(key="fd.step").value == 2.2
    assert "preset" not in at.query_params
    bad = open_page("foundations", query={"preset": "no-such-thing"})
    assert any("no-such-thing" in w.value for w in bad.warning)


def test_rosenbrock_moves_visibly_by_default():
    at = open_page("foundations")
    at.selectbox(key="fd.problem.problem").select("rosenbrock").run()
    assert at.select_slider(key="fd.stop.max_iter").value == 2000
    assert summary(at)["Nesterov / FISTA"]["objective"] < 0.1  # from f(x0) = 12.5
    at.selectbox(key="fd.problem.problem").select("quadratic").run()
    assert at.select_slider(key="fd.stop.max_iter").value == 200


def test_one_step_and_one_momentum_control_drive_every_method():
    at = open_page("foundations")
    assert not [e for e in at.sidebar.expander if "parameters" in e.label], "no per-method expanders: the controls sit next to the chart"
    before = summary(at)
    at.slider(key="fd.step").set_value(0.5).run()
    after = summary(at)
    assert all(after[m]["objective"] != before[m]["objective"] for m in before)
    at.slider(key="fd.beta").set_value(0.0).run()  # β = 0: heavy ball is gradient descent
    rows = summary(at)
    assert rows["Heavy ball"]["objective"] == pytest.approx(rows["Gradient descent"]["objective"], rel=1e-9)


def test_beta_star_button_matches_the_quadratic_rate_formula():
    at = open_page("foundations")
    at.button(key="fd.use_beta_star").click().run()
    kappa, step = at.select_slider(key="fd.problem.kappa").value, at.slider(key="fd.step").value
    beta = at.slider(key="fd.beta").value
    assert 0 <= beta - figs.heavy_ball_beta_star(step, kappa) < 0.01
    # independent check: β* gives the smallest spectral radius of the heavy-ball iteration over a grid of β
    def radius(b):
        worst = 0.0
        for lam in np.linspace(1 / kappa, 1.0, 200):
            T = np.array([[1 + b - step * lam, -b], [1, 0]])
            worst = max(worst, np.abs(np.linalg.eigvals(T)).max())
        return worst
    grid = np.linspace(0, 0.99, 100)
    assert radius(beta) <= min(radius(b) for b in grid) + 0.01


def test_start_point_sliders_move_the_paths_and_the_plot_animates():
    at = open_page("foundations")
    at.slider(key="fd.problem.x0").set_value(1.6).run()
    at.slider(key="fd.problem.y0").set_value(-0.8).run()
    assert_clean(at)
    paths = iterate_paths(at)
    assert all(x[0] == pytest.approx(1.6) and y[0] == pytest.approx(-0.8) for x, y in paths.values())
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Iterates"))
    assert len(fig["frames"]) > 10 and fig["layout"]["sliders"][0]["steps"]
    labels = [b["label"] for b in fig["layout"]["updatemenus"][0]["buttons"]]
    assert any("Play" in lab for lab in labels) and any("Pause" in lab for lab in labels)


def test_heavy_ball_stays_in_the_plot_window():
    at = open_page("foundations")
    at.slider(key="fd.beta").set_value(0.99).run()
    fig = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Iterates"))
    (x_lo, x_hi), (y_lo, y_hi) = fig["layout"]["xaxis"]["range"], fig["layout"]["yaxis"]["range"]
    x, y = iterate_paths(at)["Heavy ball"]
    assert x_lo <= x.min() and x.max() <= x_hi and y_lo <= y.min() and y.max() <= y_hi


@pytest.mark.parametrize("kind,key,values", latency.NOTCHES["foundations"])
def test_each_latency_notch_moves_the_paths_it_should(kind, key, values):
    """The sliders ``python -m app.latency`` times sit beside the chart (not in the sidebar), and each notch
    recomputes what it should: the step moves every method's path, β only heavy ball's."""
    at = open_page("foundations")
    assert key in {s.key for s in at.main.slider} and key not in {s.key for s in at.sidebar.slider}
    expected = {"fd.step": {m.label for m in fd.METHODS.values()}, "fd.beta": {"Heavy ball"}}[key]
    for value in values:
        before = iterate_paths(at)
        latency.notch_widget(at, kind, key).set_value(value).run()
        assert_clean(at)
        after = iterate_paths(at)
        moved = {label for label, (x, y) in after.items()
                 if len(x) != len(before[label][0]) or not (np.allclose(x, before[label][0])
                                                             and np.allclose(y, before[label][1]))}
        assert moved == expected, (key, value, moved)

"""AppTest of app/views/sparse.py: default run, every method, extreme values, bad input, sweeps, random walk."""
import pytest

from solvers.sparse import METHODS
from tests.app_harness import assert_clean, click_run, errors, open_page, plotly_figures, random_walk, trace_names


@pytest.fixture(scope="module")
def page():
    return open_page("sparse")


def test_default_run_draws_every_chart(page):
    assert_clean(page)
    names = trace_names(page)
    assert {"PG", "APG", "APG+", "tolerance ε̂", "truth w*"} <= names
    assert "APG+: Newton step" in names and "APG: extrapolation accepted" in names
    figs = plotly_figures(page)
    titles = [f["layout"]["title"]["text"] for f in figs]
    assert any("vs time" in t for t in titles) and any("gradient evaluations" in t for t in titles)
    log_axes = [f for f in figs if f["layout"].get("yaxis", {}).get("type") == "log"]
    assert log_axes and all(f["layout"]["xaxis"]["title"]["text"] for f in figs)


@pytest.mark.slow
def test_every_method_runs_on_both_losses():
    at = open_page("sparse")
    at.multiselect(key="sp.methods").set_value(list(METHODS)).run()
    assert_clean(at)
    assert {m.label for m in METHODS.values()} <= trace_names(at)
    at.selectbox(key="sp.data.generator").select("sparse-classification").run()
    at.selectbox(key="sp.problem.loss").select("logistic").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert set(table["method"]) == {m.label for m in METHODS.values()} and "test PA" in table


def test_extreme_slider_values_never_crash():
    at = open_page("sparse")
    for key, value in (("sp.problem.s", 200), ("sp.problem.s", 1), ("sp.problem.step_factor", 0.1),
                       ("sp.split.test_fraction", 0.5), ("sp.split.test_fraction", 0.0)):
        at.slider(key=key).set_value(value).run()
        assert_clean(at, allow_errors=True)
    at.select_slider(key="sp.stop.tol").set_value(1e-10).run()
    at.select_slider(key="sp.stop.max_iter").set_value(10).run()
    assert_clean(at)
    assert all(s.startswith("*") or s == "converged" for s in at.dataframe[0].value["status"])


def test_bad_input_shows_an_error_not_a_traceback():
    at = open_page("sparse")
    at.radio(key="sp.data.source").set_value("bundled").run()
    at.selectbox(key="sp.data.bundled").select("diabetes").run()
    at.slider(key="sp.problem.s").set_value(50).run()  # diabetes has 10 features
    assert not at.exception
    assert any("between 1 and the number of features n = 10" in e for e in errors(at))
    at.slider(key="sp.problem.s").set_value(3).run()
    at.selectbox(key="sp.problem.loss").select("logistic").run()
    assert any("regression dataset" in e for e in errors(at))


def test_sweeps_run_with_a_progress_bar_and_draw_figures():
    at = open_page("sparse")
    at.multiselect(key="sp.methods").set_value(["apg", "apg+"]).run()
    at.button(key="sp.sweep_transition").click().run()
    at.button(key="sp.sweep_tol").click().run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert "Time vs s (log scale)" in titles and any(t.startswith("Test MSE vs tolerance") for t in titles)


def test_run_button_and_toy_sliders():
    at = open_page("sparse")
    at.slider(key="sp.toy_rho").set_value(-0.95).run()
    at.slider(key="sp.toy_steps").set_value(40).run()
    click_run(at)
    assert_clean(at)
    assert "feasible set A₁" in trace_names(at)
    for dim in ("3-D, s = 1", "3-D, s = 2"):
        at.radio(key="sp.toy_dim").set_value(dim).run()
        assert_clean(at)
        assert any("R³" in f["layout"]["title"]["text"] for f in plotly_figures(at))


@pytest.mark.slow
def test_random_walk_over_the_widgets():
    # left out: the data source and the generator's sizes (covered above; a 50,000-column dense X
    # takes tens of seconds on this shared machine) and the sweep buttons
    gen = "sp.data.gen.sparse-regression."
    random_walk("sparse", seed=3, steps=10, skip_keys=("sp.data.source", "sp.sweep", gen + "m", gen + "n"))


def test_real_gene_expression_set_on_the_page():
    from solvers import datasets

    if not datasets.REAL["leukemia"].available():
        pytest.skip("leukemia is not in the data directory")
    at = open_page("sparse")
    at.radio(key="sp.data.source").set_value("real").run()
    at.selectbox(key="sp.data.real").select("leukemia").run()
    at.selectbox(key="sp.problem.loss").select("logistic").run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert "GE PG / method" in table and (table["GE"] > 0).all()


def test_subset_quality_tab_compares_the_paper_method_ours_and_the_peers():
    from solvers.sparse.peers import available

    at = open_page("sparse")
    at.checkbox(key="sp.q_polish").uncheck().run()
    at.checkbox(key="sp.q_polish").check().run()
    at.checkbox(key="sp.q_backtrack").uncheck().run()  # the paper's L for ours too
    at.button(key="sp.quality_run").click().run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert "Selected features" in titles and any(t.startswith("Objective above the best subset") for t in titles)
    names = trace_names(at)
    assert {"APG+ (paper: raw X, w⁰ = 0)", "APG+ (ours: options below)", "OMP", "truth w*"} <= names
    assert ("abess (peer)" in names) == available()["abess"]
    assert ("skscope (peer)" in names) == available()["skscope"]


@pytest.fixture
def probe():
    """The probe's tiny instance (m = n = 10, no test part) with PG, APG+ and GraSP."""
    at = open_page("sparse", timeout=100)
    for k, v in (("m", 10), ("n", 10), ("m_test", 0)):
        at.number_input(key=f"sp.data.gen.sparse-regression.{k}").set_value(v).run()
    at.slider(key="sp.split.test_fraction").set_value(0.0).run()
    at.multiselect(key="sp.methods").set_value(["pg", "apg+", "grasp"]).run()
    assert_clean(at)
    return at


def test_summary_status_and_objective_say_what_each_run_returned(probe):
    from solvers.datasets import generate
    from solvers.sparse import make_problem, solve

    table = probe.dataframe[0].value.set_index("method")
    tol = probe.select_slider(key="sp.stop.tol").value
    assert ((table["status"] == "converged") == (table["residual (24)"] <= tol)).all(), table
    assert table.loc["GraSP", "status"] == "* stalled"  # its no-progress rule, not the tolerance, ended it
    pb = make_problem(generate("sparse-regression", m=10, n=10, m_test=0, seed=0))
    w = solve(pb, "grasp", tol=tol, max_iter=probe.select_slider(key="sp.stop.max_iter").value).solution["w"]
    assert table.loc["GraSP", "objective"] == pytest.approx(pb.objective(w), rel=1e-9)


def test_summary_marks_and_footnote_state_the_actual_settings(probe):
    table = probe.dataframe[0].value.set_index("method")
    assert table.loc["PG", "identified at"] == table.loc["GraSP", "identified at"] == "—"  # no Newton phase
    assert table.loc["APG+", "identified at"].isdigit()
    footnote = next(c.value for c in probe.caption if "‘*’" in c.value)
    assert "2,000 iterations" in footnote and "10k cap" not in footnote
    probe.select_slider(key="sp.stop.max_iter").set_value(10).run()
    assert "cap of 10 iterations" in next(c.value for c in probe.caption if "‘*’" in c.value)


def test_a_floor_rounded_ratio_below_one_feature_names_kappa_not_s(probe):
    probe.selectbox(key="sp.problem.s_rounding").set_value("floor").run()
    probe.slider(key="sp.problem.s_ratio").set_value(0.05).run()
    assert not probe.exception
    assert errors(probe) == ["s = ⌊κ·m⌋ = ⌊0.05·10⌋ = 0 leaves no feature to select; "
                             "raise κ so that κ·m ≥ 1, or round with ceil"]

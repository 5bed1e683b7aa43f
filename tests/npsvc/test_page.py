"""AppTest of the NPSVC++ page: default run, each method, extreme values, the tabs' own runs, bad input."""
import numpy as np
import pytest

from solvers import npsvc as fam
from solvers.npsvc.knpsvc import OFFICIAL_MAX_ITER
from tests.app_harness import (
    as_array, assert_clean, click_run, errors, open_page, plotly_figures, random_walk,
    trace_names, upload)


def test_default_run_draws_primal_dual_accuracy_and_tau():
    at = open_page("npsvc")
    assert_clean(at)
    names = trace_names(at)
    for label in ("TWSVM", "K-NPSVC++"):
        assert {f"{label}: primal max J", f"{label}: dual τᵀJ", f"{label}: test accuracy"} <= names
    assert "max_l J_l" in names and "class 2" in names
    conv = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Primal"))
    assert conv["layout"]["yaxis"]["type"] == "log" and conv["layout"]["xaxis"]["title"]["text"]
    assert len(at.dataframe[0].value) == 2


def trace(figure: dict, name: str) -> dict:
    return next(t for t in figure["data"] if t["name"] == name)


def test_default_convergence_tab_reads_the_same_for_every_method():
    """One x-axis for every method (solver seconds); TWSVM, which solves its classes one after another, only at its
    final point, whose accuracy is the table's; K-NPSVC++ at the official 10 outer iterations, each a complete
    classifier; and a chart of what converges per outer iteration, with the reason the gap oscillates."""
    at = open_page("npsvc")
    assert_clean(at)
    figures = plotly_figures(at)
    conv = next(f for f in figures if f["layout"]["title"]["text"].startswith("Primal"))
    assert "solver time" in conv["layout"]["xaxis"]["title"]["text"]
    table = at.dataframe[0].value.set_index("method")
    twsvm_acc = as_array(trace(conv, "TWSVM: test accuracy")["y"])
    assert len(twsvm_acc) == 1 and twsvm_acc[0] == pytest.approx(100 * table.loc["TWSVM", "test acc"])
    assert len(as_array(trace(conv, "TWSVM: primal max J")["y"])) == 1
    knpsvc_acc = as_array(trace(conv, "K-NPSVC++: test accuracy")["y"])
    assert len(knpsvc_acc) == OFFICIAL_MAX_ITER + 1  # the random start and the official 10 outer iterations
    assert knpsvc_acc[-1] == pytest.approx(100 * table.loc["K-NPSVC++", "test acc"])
    times = as_array(trace(conv, "K-NPSVC++: primal max J")["x"])
    assert np.all(np.diff(times) >= 0)
    converges = next(f for f in figures if f["layout"]["title"]["text"].startswith("What converges"))
    assert {t["name"] for t in converges["data"]} == {"K-NPSVC++: max J", "K-NPSVC++: change of max J",
                                                      "K-NPSVC++: relative gap"}  # TWSVM has no Pareto weights
    assert "outer iteration" in converges["layout"]["xaxis2"]["title"]["text"]
    assert len(as_array(trace(converges, "K-NPSVC++: max J")["x"])) == OFFICIAL_MAX_ITER + 1
    captions = " ".join(c.value for c in at.caption)
    assert "one after another" in captions and "oscillate" in captions and "10 outer iterations" in captions


@pytest.mark.parametrize("method", list(fam.METHODS))
def test_each_method_runs(method):
    at = open_page("npsvc", run=False)
    at.query_params["np.methods"] = fam.METHODS[method].label
    at.run()
    assert_clean(at)
    assert f"{fam.METHODS[method].label}: primal max J" in trace_names(at)


def test_extreme_values_do_not_break_the_page():
    at = open_page("npsvc")
    at.number_input(key="np.stop.max_iter").set_value(5).run()
    at.select_slider(key="np.stop.tol").set_value(1e-1).run()
    at.selectbox(key="np.problem.kernel").select("poly").run()
    at.slider(key="np.problem.degree").set_value(8).run()
    at.slider(key="np.problem.test_size").set_value(0.9).run()
    assert_clean(at)
    at.selectbox(key="np.problem.kernel").select("linear").run()
    at.toggle(key="np.problem.bias").set_value(False).run()
    at.selectbox(key="np.problem.strategy").select("rvo").run()
    assert_clean(at)
    statuses = set(at.dataframe[0].value["status"])
    assert statuses <= {"converged", "max_iter", "diverged"}


def test_the_test_fraction_cannot_reach_zero():
    """Every view scores held-out rows; at test_size = 0 they showed NaN accuracies and "nan ± nan"."""
    slider = open_page("npsvc").slider(key="np.problem.test_size")
    assert 0 < slider.min <= 0.05 and slider.value == 0.4
    at = open_page("npsvc", run=False)
    at.query_params["np.problem.test_size"] = "0"
    at.run()
    assert not at.exception and "test_size" in " ".join(e.value for e in [*at.warning, *at.error])


def test_two_dimensional_data_show_regions_for_each_method_and_svc():
    at = open_page("npsvc")
    at.radio(key="np.data.source").set_value("synthetic").run()
    at.selectbox(key="np.data.generator").select("crossed-lines").run()
    at.selectbox(key="np.problem.kernel").select("linear").run()
    at.toggle(key="np.problem.bias").set_value(False).run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert any(t.startswith("SVC") for t in titles) and any(t.startswith("K-NPSVC++: regions") for t in titles)
    assert "f = 0, class 0" in trace_names(at)


def test_deep_pair_radar_and_tsne():
    at = open_page("npsvc", run=False)
    at.query_params["np.methods"] = ["D-NPSVC++", "DTWSVN (τ = 1/K)"]
    at.run()
    assert_clean(at)
    assert list(at.dataframe[0].value["device"]) == ["cpu", "cpu"]  # the torch device each run used
    at.radio(key="np.feat_how").set_value("t-SNE").run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert any("Fig. A.4" in t for t in titles) and any(t.startswith("t-SNE of the raw") for t in titles)


@pytest.mark.slow
def test_tab_runs_ablation_sensitivity_and_splits():
    at = open_page("npsvc")
    at.button(key="np.ablate").click().run()
    assert_clean(at)
    at.button(key="np.sens_run").click().run()
    assert_clean(at)
    at.button(key="np.table_run").click().run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert any("Fig. 4" in t for t in titles) and any("Figs. A.2" in t for t in titles)
    table = at.dataframe[-1].value
    assert {"SVC", "TWSVM", "NPSVM", "pinball TWSVM", "LSTSVM", "K-NPSVC++"} == set(table["method"])
    assert "converged" in table.columns  # an unconverged method shows as such


@pytest.mark.parametrize("content,message", [
    (b"a,b,y\n1,2,0\n3,4,0\n5,6,0\n", "class"),
    (b"a,b,y\n1,2,0.5\n3,4,1.25\n5,6,2.75\n7,8,3.5\n", "regression"),
    (b"a,b,y\n1,,0\n4,5,1\n", "missing"),
])
def test_bad_upload_shows_an_error_not_an_exception(content, message):
    at = open_page("npsvc")
    upload(at, "np.data", "bad.csv", content)
    assert any(message in e for e in errors(at)), errors(at)


def test_memory_budget_refusal_is_an_error(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", "100000")
    at = open_page("npsvc", run=False)
    at.query_params["np.data.bundled"] = "digits"
    at.query_params["np.problem.max_train"] = "987"  # a configuration no other test has cached
    at.run()
    assert not at.exception
    assert any("budget" in e for e in errors(at)), errors(at)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_random_walk_over_all_widgets(seed):
    random_walk("npsvc", seed=seed, steps=6, skip_keys=("np.data", "np.problem.max_train", "np.m.dnpsvc",
                                                         "np.m.fixed-tau", "np.m.cross-entropy"))


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the refusal on a machine without a GPU")
def test_cuda_without_a_gpu_is_an_error_not_a_traceback():
    at = open_page("npsvc", run=False)
    at.query_params["np.methods"] = "D-NPSVC++"
    at.run()
    at.selectbox(key="np.m.dnpsvc.device").select("cuda").run()
    assert not at.exception
    assert any("no GPU" in e for e in errors(at)), errors(at)


def test_preset_pareto_weights_balance_the_worst_class():
    """The preset's claim, read from the page's own figures: D-NPSVC++'s largest per-class objective ends
    below DTWSVN's (radar, Fig. A.4), and its largest Pareto weight sits on a class with J_l above the median."""
    at = open_page("npsvc")
    at.button(key="np.preset.pareto-worst-class").click().run()
    assert_clean(at)
    assert any(i.value.startswith("**Pareto weights balance") for i in at.info), "the applied preset states its claim"
    figures = {f["layout"]["title"]["text"]: f for f in plotly_figures(at)}
    radar = next(f for t, f in figures.items() if "Fig. A.4" in t)
    worst = {trace["name"]: as_array(trace["r"]).max() for trace in radar["data"]}  # log10 J_l at the last epoch
    assert worst["D-NPSVC++"] < worst["DTWSVN (τ = 1/K)"], worst
    tau = figures["Pareto weights τ over iterations: D-NPSVC++"]["data"]
    J = figures["Per-class objectives J_l: D-NPSVC++"]["data"]
    final_tau = [as_array(trace["y"])[-1] for trace in tau]
    final_J = [as_array(trace["y"])[-1] for trace in J if trace["name"].startswith("J for class")]
    assert len(final_tau) == len(final_J) == 10
    heaviest = max(range(10), key=final_tau.__getitem__)
    assert final_J[heaviest] > sorted(final_J)[4], (final_tau, final_J)


def test_a_long_tsne_waits_for_its_press_beside_the_estimate():
    """Two t-SNE projections of 650 points take ≈ 6 CPU s: the page shows their estimate and a button instead of
    starting them on a change of the projection, and draws them once pressed (and after, in this session)."""
    at = open_page("npsvc", run=False)
    at.query_params["np.data.bundled"] = "digits"
    at.query_params["np.methods"] = ["K-NPSVC++"]
    at.query_params["np.problem.max_train"] = "650"
    at = click_run(at.run())
    assert any(m.value.startswith("650 training rows") for m in at.markdown)
    at.slider(key="np.feat_n").set_value(650).run()
    at.radio(key="np.feat_how").set_value("t-SNE").run()
    assert_clean(at)
    titles = lambda: [f["layout"]["title"]["text"] for f in plotly_figures(at)]  # noqa: E731
    assert not any(t.startswith("t-SNE of") for t in titles())
    assert any(c.value.startswith("Estimated:") and "t-SNE of" in c.value for c in at.caption)
    at.button(key="np.tsne_run").click().run()
    assert_clean(at)
    assert any(t.startswith("t-SNE of the raw") for t in titles())
    at.run()  # a rerun keeps the projections the student asked for
    assert any(t.startswith("t-SNE of the raw") for t in titles())

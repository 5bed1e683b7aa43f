"""AppTest of the multitask page: default run, each method, losses, extreme sliders, bad input, random walk."""
import base64

import numpy as np
import pytest

from solvers import multitask as mt
from app.views import _multitask_figures as figs
from tests.app_harness import assert_clean, click_run, errors, open_page, plotly_figures, random_walk, trace_names, upload

from .conftest import tiny_problem


def test_default_run_draws_the_methods_bounds_and_baselines():
    at = open_page("multitask")
    assert_clean(at)
    names = trace_names(at)
    # PG is one click away; no t_opt marker: at the tight default every γ_i* is 0 or 1 (none in the middle)
    assert {"APG", "BCD", "Single-task (h = 0)", "Pooled", "Γ(t)"} <= names
    assert any(n and n.startswith("Thm A.1") for n in names)
    gap = next(f for f in plotly_figures(at) if "Objective gap" in f["layout"]["title"]["text"])
    assert gap["layout"]["yaxis"]["type"] == "log" and gap["layout"]["xaxis"]["title"]["text"]
    assert any("η = β/α" in c.value for c in at.sidebar.caption)


def test_default_shows_the_promised_spectrum():
    """The page's story at its defaults: M* has exactly h unit eigenvalues (the relaxation is tight), checked
    from the drawn spectrum, and σ_h/σ_{h+1} of U* clears the threshold 1 + 1/η."""
    at = open_page("multitask")
    assert_clean(at)
    h = at.slider(key="mt.problem.h.d30").value
    bars = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"] == "Structure of the solution")
    eig = np.sort(as_array(bars["data"][0]["y"]))[::-1]
    assert np.allclose(eig[:h], 1, atol=1e-6) and np.allclose(eig[h:], 0, atol=1e-6)
    assert any("tight" in s.value for s in at.success)
    ratio, threshold = (float(m.value) if m.value != "∞" else np.inf for m in at.metric[:2])
    assert ratio > threshold


@pytest.mark.parametrize("method", ["apg", "pg", "bcd", "cvxpy"])
def test_each_method_alone(method):
    at = open_page("multitask", run=False)
    at.query_params["mt.methods"] = mt.METHODS[method].label
    at.query_params["mt.data.gen.multitask-subspace.d"] = "8"
    at.query_params["mt.data.gen.multitask-subspace.m"] = "4"
    at.run()
    assert_clean(at)
    assert mt.METHODS[method].label in trace_names(at)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_classification_losses_on_classification_data(loss):
    at = open_page("multitask", run=False)
    at.query_params["mt.data.gen.multitask-subspace.kind"] = "classification"
    at.query_params["mt.data.gen.multitask-subspace.d"] = "8"
    at.query_params["mt.data.gen.multitask-subspace.m"] = "4"
    at.query_params["mt.problem.loss"] = loss
    at.query_params["mt.stop.max_iter"] = "20"
    at.query_params["mt.data.gen.multitask-subspace.n_test"] = "10"
    at.run()
    assert_clean(at)
    assert "error rate" in " ".join(str(f["layout"]["title"]["text"]) for f in plotly_figures(at))


def test_classification_loss_on_regression_targets_is_an_error_not_an_exception():
    at = open_page("multitask", run=False)
    at.query_params["mt.problem.loss"] = "hinge"
    at.run()
    assert not at.exception
    assert any("continuous" in e for e in errors(at)), errors(at)


def test_extreme_sliders():
    at = open_page("multitask", run=False)
    at.query_params["mt.data.gen.multitask-subspace.d"] = "8"
    at.query_params["mt.stop.max_iter"] = "50"
    at.run()
    at.select_slider(key="mt.problem.alpha").set_value(100.0).run()
    at.select_slider(key="mt.problem.beta").set_value(0.001).run()  # η = 1e-5: the APG safeguard must act
    at.slider(key="mt.problem.h.d8").set_value(8).run()  # h = d: M = I
    at.slider(key="mt.problem.h.d8").set_value(0).run()  # h = 0: M = 0
    assert_clean(at)


def test_largest_generator_noise_runs_clean():
    # a random widget walk set the generator's noise to its largest value, 1e100 (everything else at the defaults):
    # APG raised IndexError in the capped-simplex projection at iteration 32 and the page logged "run APG failed"
    at = open_page("multitask", run=False)
    at.query_params["mt.data.gen.multitask-subspace.noise"] = "1e100"
    at.run()
    assert_clean(at)
    assert at.select_slider(key="mt.data.gen.multitask-subspace.noise").value == 1e100
    assert {"APG", "BCD"} <= trace_names(at)


def test_digits_draws_theta_images():
    at = open_page("multitask", run=False)
    at.query_params["mt.data.generator"] = "multitask-digits"
    at.query_params["mt.problem.loss"] = "logistic"
    at.query_params["mt.methods"] = "BCD"
    at.run()
    assert_clean(at)
    assert any("Rows of Θ" in str(f["layout"]["title"]["text"]) for f in plotly_figures(at))


@pytest.mark.parametrize("content,message", [
    (b"a,b,y\n1,2,3\n4,5,6\n7,8,9\n", "single target"),
    (b"a,y_1,y_2\n1,,2\n3,4,5\n", "NaN"),
    (b"\x00\x01garbage", "Upload refused"),
])
def test_bad_upload_shows_an_error(content, message):
    at = open_page("multitask")
    upload(at, "mt.data", "bad.csv", content)
    assert any(message in e for e in errors(at)), errors(at)


def test_good_multi_output_upload_runs():
    rows = "\n".join(f"{i % 7},{(i * 3) % 5},{i % 7 + 0.5 * ((i * 3) % 5)},{i % 7 - ((i * 3) % 5)}" for i in range(40))
    at = open_page("multitask")
    upload(at, "mt.data", "ok.csv", f"a,b,y_1,y_2\n{rows}\n".encode())
    assert_clean(at)
    assert "BCD" in trace_names(at)


def test_manual_mode_and_sweep():
    at = open_page("multitask", run=False)
    at.query_params["mt.data.gen.multitask-subspace.d"] = "6"
    at.query_params["mt.data.gen.multitask-subspace.m"] = "3"
    at.run()
    at.toggle(key="mt.live").set_value(False).run()
    at.select_slider(key="mt.problem.alpha").set_value(1.0).run()
    assert any("press **Run**" in i.value for i in at.info)
    click_run(at)
    assert_clean(at)
    at.button(key="mt.sweep.run").click().run()
    assert_clean(at)
    assert any("(h, α)" in str(f["layout"]["title"]["text"]) for f in plotly_figures(at))


@pytest.mark.slow
def test_random_walk():
    random_walk("multitask", seed=0, steps=6, skip_keys=("mt.data.source", "mt.data.generator", "mt.stop.max_iter",
                                                            "mt.data.gen"))


@pytest.mark.slow
def test_school_from_the_data_directory():
    from solvers.datasets import REAL
    if not REAL["school"].available():
        pytest.skip("school.mat is not in the data directory (SOLVERS_DATA)")
    at = open_page("multitask", run=False)
    at.query_params["mt.data.source"] = "Real (data directory)"
    at.query_params["mt.methods"] = ["BCD"]
    at.run()
    click_run(at)
    assert_clean(at)
    assert {"BCD", "Single-task (h = 0)", "Pooled"} <= trace_names(at)


def as_array(values) -> np.ndarray:
    """A trace's values: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array(values, float)


def test_sweep_heatmap_puts_alpha_on_a_categorical_axis():
    import pandas as pd
    table = pd.DataFrame([{"alpha": a, "h": h, "error": a + h} for a in (1e-3, 1e-2, 1e-1, 1, 10) for h in (0, 1)])
    fig = figs.sweep_heatmap(table, "RMSE")
    assert fig.layout.xaxis.type == "category" and len(fig.data[0].x) == 5


def test_no_test_rows_points_to_the_generators_n_test():
    """Synthetic data brings its own test part, so the page draws no test-fraction slider: the advice must name
    n_test, and the Sweep tab must say why it is empty."""
    at = open_page("multitask", run=False)
    at.query_params["mt.data.gen.multitask-subspace.n_test"] = "0"
    at.run()
    assert_clean(at)
    assert not any(s.key.startswith("mt.split") for s in at.sidebar.slider)
    advice = [i.value for i in at.info if "held-out rows" in i.value]
    assert len(advice) == 2 and all("n_test" in a and "test fraction" not in a for a in advice), advice
    assert any("sweep" in a for a in advice)


@pytest.mark.parametrize("query,shown", [
    ({"mt.data.gen.multitask-subspace.m": "1"}, "undefined"),  # rank U* = 1 < h = 3: σ_3 = σ_4 = 0
    ({"mt.problem.h.d4": "0"}, "not applicable"),  # no σ_0
    ({"mt.problem.h.d4": "2", "mt.data.gen.multitask-subspace.m": "2", "mt.methods": "PG",
      "mt.stop.max_iter": "20"}, "∞"),  # σ_3 = 0, but PG stops before M settles on {0, 1}
])
def test_tightness_metric_never_contradicts_the_verdict(query, shown):
    at = open_page("multitask", run=False)
    for k, v in {"mt.data.gen.multitask-subspace.d": "4", "mt.data.gen.multitask-subspace.n_per_task": "5",
                 "mt.data.gen.multitask-subspace.n_test": "5", **query}.items():
        at.query_params[k] = v
    at.run()
    assert_clean(at)
    ratio, threshold = (m.value for m in at.metric[:2])
    assert ratio == shown
    tight = any("tight" in s.value for s in at.success)
    not_tight = any("not tight" in i.value for i in at.info)
    if ratio in ("undefined", "not applicable"):
        assert any(c.value.startswith(f"σ_h / σ_{{h+1}} is {ratio} here: ") for c in at.caption)
        assert not not_tight  # h = 0 forces M* = 0; with rank U* < h an optimum in M_e exists
    else:
        above = (np.inf if ratio == "∞" else float(ratio)) >= float(threshold)
        assert not (tight and not above) and not (not_tight and above)


def test_tightness_ratio_where_it_applies_and_why_not_elsewhere():
    sv = np.array([3.0, 2.0, 0.0])
    sol = {"U": np.zeros((4, 3)), "sv_U": sv}
    assert figs.tightness(sol, 1) == ("1.5", "")
    assert figs.tightness(sol, 2) == ("∞", "")  # σ_3 = 0 < σ_2: above any threshold
    assert figs.tightness(sol, 3)[0] == "undefined" and "rank 2 < h = 3" in figs.tightness(sol, 3)[1]
    assert figs.tightness(sol, 0)[0] == figs.tightness(sol, 4)[0] == "not applicable"


def test_spectra_over_iterations_draw_one_line_per_value_from_the_runs_spectra():
    problem = tiny_problem(d=6, m=4)
    for method in ("apg", "bcd"):
        res = mt.solve(problem, method, tol=1e-8, max_iter=50, spectra=True)
        eig = figs.spectrum_over_iterations(res, "eig_M", "eigenvalues", "λ_i(M_k)", top=4)
        sv = figs.spectrum_over_iterations(res, "sv_U", "singular values", "σ_i/σ_1", relative=True)
        assert len(eig.data) == 4 and len(sv.data) == min(problem.d, problem.m)
        np.testing.assert_allclose(eig.data[0].x, res.history["iter"])
        np.testing.assert_allclose(eig.data[0].y, res.info["spectra"]["eig_M"][:, 0])
        ratio = np.asarray(sv.data[0].y, float)
        np.testing.assert_allclose(ratio[np.isfinite(ratio)], 1.0)  # σ_1/σ_1, where U_k ≠ 0
        assert np.isfinite(ratio[1:]).all()
        assert np.all(np.diff(res.info["spectra"]["eig_M"], axis=1) <= 1e-12)  # largest first
    assert not figs.spectrum_over_iterations(mt.solve(problem, "apg", tol=1e-8, max_iter=5), "eig_M", "t", "y").data

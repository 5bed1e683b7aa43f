"""Multitask: convex shared-subspace learning (rASO/cASO, seed 000) by APG, PG and BCD."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from app.ui import figcache
from app.views import _multitask_figures as figs
from app.views._multitask_algorithm import algorithm_tab
from app.views._presets import PRESETS
from solvers import multitask as mt
from solvers.core import InputError, Param
from solvers.datasets import Dataset
from solvers.multitask import metrics
from solvers.sweep import expand
from solvers.sweep.family_jobs import multitask_cell_job
from app.ui.sweep import run_grid

KEY = "mt"
# Page defaults chosen to be instant (< 1 s per slider notch on the 2-core machine, docs/benchmarks.md) and to
# show the story: h = the generator's true dimension 3 and η = β/α = 10 (tightness threshold 1 + 1/η = 1.1), so
# M* has exactly h unit eigenvalues; APG and BCD by default (PG, the slow baseline, is one click away).
STOPPING = [
    Param("tol", 1e-3, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon", ui_range=(1e-10, 1e-2),
          help="stop when the gradient mapping ‖Z − prox(Z − ∇f(Z))‖ falls below this"),
    Param("max_iter", 200, int, low=1, high=20000, log=True, ui_range=(10, 20000), help="iteration cap"),
]
DEFAULT_METHODS = ["apg", "bcd"]
PAGE_DEFAULTS = {"beta": 1.0}
DEFAULT_H = 3
PROBLEM_PARAMS = [dataclasses.replace(p, default=PAGE_DEFAULTS[p.name]) if p.name in PAGE_DEFAULTS else p
                  for p in mt.PROBLEM_PARAMS if p.name != "h"]
SPLIT = Param("test_fraction", 0.3, float, low=0, high=0.9, ui_range=(0.1, 0.9),
              help="share of each task's rows held out for testing (datasets without their own test part)")
# the page always records the spectra (for the Structure tab), so that switch is not shown
SHOWN_METHODS = {name: dataclasses.replace(m, params=tuple(p for p in m.params if p.name != "spectra"))
                 for name, m in mt.METHODS.items()}
SUMMARY = ("Tasks whose predictors share a low-dimensional subspace: move α, β (η = β/α) and the shared "
           "dimension h and watch APG, PG and BCD converge to the same convex optimum, the spectrum of M settle "
           "on h eigenvalues, and the held-out error of the shared model against single-task and pooled learning.")


def check_multitask(ds: Dataset) -> None:
    several = np.ndim(ds.y) == 2 or ds.groups is not None or (ds.task == "classification" and len(ds.classes) > 2)
    if ds.y is None or not several:
        raise InputError(f"{ds.name} has a single target; upload a CSV with several y_*/task_* columns or a task "
                         "column, or pick a classification set with ≥ 3 classes (one-vs-rest tasks)")


@st.cache_data(max_entries=32, show_spinner="Fitting the single-task and pooled baselines…")
def baseline_solutions(key: str, _problem: mt.MultiTaskProblem) -> dict:
    return {"Single-task (h = 0)": (metrics.single_task(_problem), "single-task"),
            "Pooled": (metrics.pooled(_problem), "pooled")}


def convergence_tab(results, colors, problem, figures) -> None:
    x_axis = ui.choice("x-axis", list(figs.X_AXES), widget="radio", horizontal=True, key=f"{KEY}.xaxis")
    shown = (figcache.shown(results), colors)
    figures["gap"] = figcache.cached("mt.gap", (shown, x_axis), lambda: figs.convergence_figure(
        results, colors, problem, x_axis))
    st.plotly_chart(figures["gap"], key=f"{KEY}.gap")
    st.caption("F* is the best final objective among the runs (add cvxpy for an independent value on tiny "
               "problems). Dashed/dotted guides: the certificates of Theorem A.1 with the running L_k.")
    figures["grad_map"] = figcache.cached("mt.grad_map", shown, lambda: ui.line_chart(
        {k: r.history for k, r in results.items()}, "iter", mt.MEASURE, log_y=True,
        title="Gradient mapping (the stopping measure)", x_title="iteration k", y_title="‖Z − prox_g(Z − ∇f(Z))‖_F",
        color_keys=colors))
    st.plotly_chart(figures["grad_map"], key=f"{KEY}.gm")
    if any("L" in r.history for r in results.values()):
        figures["L"] = figcache.cached("mt.L", shown, lambda: figs.lipschitz_figure(results, colors))
        st.plotly_chart(figures["L"], key=f"{KEY}.L")
    st.dataframe(figcache.cached("mt.summary", shown, lambda: ui.summary_table(results, mt.MEASURE)), hide_index=True)


def structure_tab(results, ds: Dataset, problem, figures) -> None:
    label = ui.choice("Run", list(results), key=f"{KEY}.structure_run")
    r = results[label]
    sol = r.solution
    ratio, why = figs.tightness(sol, problem.h)
    c1, c2 = st.columns(2)
    c1.metric("σ_h / σ_{h+1} of U*", ratio)
    c2.metric("threshold 1 + 1/η", f"{1 + 1 / problem.eta:.3g}")
    if why:
        st.caption(f"σ_h / σ_{{h+1}} is {ratio} here: {why}.")
    eig = np.asarray(sol["eig_M"])
    rank = figs.numerical_rank(sol["sv_U"])
    if np.all(np.minimum(np.abs(eig), np.abs(eig - 1)) < 1e-6):
        st.success("M* has eigenvalues in {0, 1}: the relaxation is tight and (U*, Θ*) also solves the non-convex iASO.")
    elif r.status != "converged":
        st.info(f"The run stopped ({r.status}) before converging: its M still has fractional eigenvalues and does "
                "not tell whether the relaxation is tight.")
    elif rank < problem.h:
        st.info(f"M* has fractional eigenvalues, yet the relaxation is tight: U* has rank {rank} < h and only the "
                f"eigenvalues on span U* enter the objective, so unit ones there and on any {problem.h - rank} "
                "orthogonal directions give an optimum in M_e.")
    else:
        st.info("M* has fractional eigenvalues: the convex relaxation is not tight at these settings.")
    run = figcache.shown({label: r})
    figures["spectra"] = figcache.cached("mt.spectra", run, lambda: figs.spectra_bars(sol, problem.h, problem.eta))
    st.plotly_chart(figures["spectra"], key=f"{KEY}.spectra")
    col1, col2 = st.columns(2)
    with col1:
        st.plotly_chart(figcache.cached("mt.eigM", run, lambda: figs.spectrum_over_iterations(
            r, "eig_M", "Eigenvalues of M_k over iterations", "eigenvalue of M_k")), key=f"{KEY}.eigM")
    with col2:
        st.plotly_chart(figcache.cached("mt.svU", run, lambda: figs.spectrum_over_iterations(
            r, "sv_U", "Singular values of U_k over iterations, relative to the largest", "σ_i(U_k) / σ_1(U_k) (log)",
            relative=True)), key=f"{KEY}.svU")
    if ds.image_shape is not None and problem.h > 0 and problem.d == int(np.prod(ds.image_shape)):
        st.plotly_chart(figcache.cached("mt.theta", (run, ds.image_shape), lambda: figs.theta_images(
            sol["Theta"], ds.image_shape)), key=f"{KEY}.theta")
    if "Theta_true" in ds.meta:
        angles = figs.principal_angles(sol["Theta"], ds.meta["Theta_true"])
        if angles.size:
            st.metric("largest principal angle to the true subspace", f"{angles.max():.2f}°")
            st.caption("All principal angles [°]: " + ", ".join(f"{a:.2f}" for a in angles))


def fit(results, colors, ds, problem, test_rows, config) -> tuple[pd.DataFrame, object]:
    """Held-out error per task of each run and of the single-task and pooled baselines: the table and the bars."""
    metric = "RMSE" if problem.loss == "least_squares" else "error rate"
    errors = {label: (metrics.per_task_error(r.solution, ds, problem.data, test_rows, problem.loss), colors[label])
              for label, r in results.items()}
    for label, (sol, color) in baseline_solutions(ui.config_key("baselines", config), problem).items():
        errors[label] = (metrics.per_task_error(sol, ds, problem.data, test_rows, problem.loss), color)
    table = pd.DataFrame({"model": list(errors), f"mean test {metric}": [np.nanmean(v) for v, _ in errors.values()]})
    names = problem.data.task_names
    shown = slice(0, min(len(names), 40))
    return table, figcache.prepare(figs.error_bars({k: (v[shown], c) for k, (v, c) in errors.items()}, names[shown],
                                                   metric))


def fit_tab(results, colors, ds, problem, test_rows, config, figures) -> None:
    table, figures["per_task"] = figcache.cached("mt.fit", (figcache.shown(results), colors, config), lambda: fit(
        results, colors, ds, problem, test_rows, config))
    st.dataframe(table, hide_index=True)
    st.plotly_chart(figures["per_task"], key=f"{KEY}.pertask")
    names = problem.data.task_names
    if len(names) > 40:
        st.caption(f"First 40 of {len(names)} tasks shown; the table averages all of them.")


def explorer_tab(results, problem) -> None:
    source = ui.choice("σ values", ["from U* of the first run", "random"], widget="radio", horizontal=True,
                       key=f"{KEY}.ex.source")
    if source == "random":
        q = ui.slider("number of σ", 3, 30, 8, key=f"{KEY}.ex.q")
        seed = ui.number("seed", 0, 10_000, 0, key=f"{KEY}.ex.seed")
        sigma = np.sort(np.random.default_rng(int(seed)).lognormal(0.0, 1.0, q))[::-1]
    else:
        sv = next(iter(results.values())).solution["sv_U"]
        sigma = sv[:figs.numerical_rank(sv)]
    if sigma.size < 2:
        st.info("U* has fewer than two non-zero singular values; pick random σ values.")
        return
    q = int(sigma.size)
    h = ui.slider("h", 1, q - 1, min(max(problem.h, 1), q - 1), key=f"{KEY}.ex.h.{q}") if q > 2 else 1
    eta = problem.eta
    solved = figcache.cached("mt.eq14", (sigma.tobytes(), eta, h), lambda: eq14(sigma, eta, h))
    trace = solved["trace"]
    step = ui.slider("Algorithm 3 sweep", 0, len(trace), len(trace), key=f"{KEY}.ex.step.{len(trace)}",
                     help="the bracket (t_min, t_max) at the start of each sweep; the last position shows the answer")
    bracket = (trace[step][0], trace[step][1]) if step < len(trace) else None
    st.plotly_chart(figcache.cached("mt.explorer", (sigma.tobytes(), eta, h, bracket), lambda: figs.gamma_explorer_figure(
        sigma, eta, h, solved["t_opt"], bracket)), key=f"{KEY}.explorer")
    st.dataframe(solved["gamma"], hide_index=True)
    st.markdown(solved["text"])
    st.dataframe(solved["brackets"], hide_index=True)


def eq14(sigma: np.ndarray, eta: float, h: int) -> dict:
    """Eq. (14) for these σ: γ* by Algorithm 3 with its brackets, the optimal t, and the check against sorting."""
    trace: list = []
    gamma = mt.solve_eq14(sigma, eta, h, "linear", trace=trace)
    mid = (gamma > 0) & (gamma < 1)
    regime = np.where(gamma >= 1 - 1e-12, "1", np.where(gamma <= 1e-12, "0", "middle"))
    return {"trace": trace, "t_opt": float(np.mean(sigma[mid] ** 2 / (eta + gamma[mid]) ** 2)) if mid.any() else None,
            "gamma": pd.DataFrame({"σ_i": sigma, "γ_i*": gamma, "regime": regime}),
            "text": f"η = {eta:.4g}; objective Σσ²/(η+γ) = {np.sum(sigma ** 2 / (eta + gamma)):.6g}; sorted-breakpoint "
                    f"reference agrees to {np.abs(gamma - mt.solve_eq14(sigma, eta, h, 'sort')).max():.1e}.",
            "brackets": pd.DataFrame(trace, columns=["t_min", "t_max", "|I| (undecided indices)", "breakpoints inside"])}


def sweep_tab(ds, problem, test_rows, config) -> None:
    metric = "RMSE" if problem.loss == "least_squares" else "error rate"
    alphas = problem.alpha * np.array([0.01, 0.1, 1.0, 10.0, 100.0])
    hs = sorted({int(v) for v in np.linspace(0, min(problem.d, 8), min(problem.d, 8) + 1)})
    st.markdown(f"BCD on a grid of α × h at β = {problem.beta:g} ({len(alphas) * len(hs)} fits).")
    key = ui.config_key("sweep", config)
    if ui.refused(ui.multitask_cost(ds, problem.data.sizes.sum(), max_iter=100, methods=len(alphas) * len(hs))):
        return
    # the cells on the sweep executor (app/ui/sweep.py): progress, Stop, the heatmap filled as they finish
    cells = expand({"alpha": [float(a) for a in alphas], "h": hs}, fixed={"tol": 1e-5, "max_iter": 100})
    heatmap = lambda t: figs.sweep_heatmap(t.drop(columns="error").rename(columns={"test_error": "error"}), metric)  # noqa: E731
    table = run_grid(multitask_cell_job, cells, key=f"{KEY}.sweep", cache_key=key, figure=heatmap,
                     data={"problem": problem, "dataset": ds, "test_rows": test_rows},
                     start=st.button("Run sweep", key=f"{KEY}.sweep.run"))
    if table is not None and "test_error" in table:
        st.plotly_chart(heatmap(table), key=f"{KEY}.sweep")
    else:
        st.info("Press **Run sweep** to fill the heatmap.")


def more_test_rows(ds: Dataset) -> str:
    """The control that adds held-out rows: the generator's own test part, else the sidebar's test fraction."""
    if ds.test_mask is None:
        return "raise the test fraction in the sidebar"
    return "this dataset brings its own test part; raise n_test (test rows per task) under Generator settings"


def data_tab(ds: Dataset, problem, train_rows, test_rows) -> None:
    st.write(ds.summary())
    st.caption(ds.description + (f" — source: {ds.source}" if ds.source else ""))
    data = problem.data
    st.dataframe(pd.DataFrame({"task": [str(n) for n in data.task_names], "training rows": data.sizes}),
                 hide_index=True)
    st.caption(f"{len(train_rows)} training rows, {len(test_rows)} test rows; d = {problem.d} features, "
               f"m = {problem.m} tasks.")


def main() -> None:
    ui.page_header(mt.TITLE, mt.PAPER, SUMMARY, family="multitask")
    ui.preset_buttons(PRESETS["multitask"], key=KEY)
    ds = ui.dataset_picker("multitask", key=f"{KEY}.data", bundled=("digits", "wine", "iris"),
                           sources=("synthetic", "real", "bundled", "upload"), check=check_multitask)
    if ds is None:
        return
    side = st.sidebar
    side.header("Problem")
    pp = ui.param_form(PROBLEM_PARAMS, key=f"{KEY}.problem", container=side)
    d = ds.n_features
    h_spec = Param("h", min(DEFAULT_H, d), int, low=0, high=d, symbol="h", help="dimension of the shared subspace (tr M = h)")
    pp["h"] = ui.param_widget(h_spec, key=f"{KEY}.problem.h.d{d}", container=side)
    eta = pp["beta"] / pp["alpha"]
    side.caption(f"η = β/α = {eta:.4g},  c = αη(1+η) = {pp['alpha'] * eta * (1 + eta):.4g}")
    split = {"test_fraction": SPLIT.default}
    if ds.test_mask is None:
        split = ui.param_form([SPLIT], key=f"{KEY}.split", container=side)
    side.header("Methods")
    chosen = ui.method_picker(SHOWN_METHODS, key=f"{KEY}.methods", default=DEFAULT_METHODS, container=side)
    per_method = ui.method_params(SHOWN_METHODS, chosen, key=f"{KEY}.m", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    train_rows, test_rows = mt.split_rows(ds, split["test_fraction"], seed=0)
    cost = ui.multitask_cost(ds, len(train_rows), max_iter=stop["max_iter"], methods=chosen)
    # real data (school: 139 tasks) can run to a high iteration cap: a notch must not start minutes of work
    execute = ui.run_controls(KEY, live_default=len(train_rows) * d <= 200_000, cost=cost, live_worst_seconds=30.0)
    if not chosen:
        st.info("Pick at least one method in the sidebar.")
        return
    config = [KEY, ds.meta["key"], pp, split]
    if ui.awaiting_run([ui.config_key(*config, m, per_method[m], stop) for m in chosen], key=KEY, execute=execute):
        return
    problem = mt.make_problem(ds, rows=train_rows, **pp)
    colors = {mt.METHODS[m].label: m for m in chosen}
    spectra = {m: {"spectra": True} for m in chosen if "spectra" in {p.name for p in mt.METHODS[m].params}}
    jobs = [ui.Job(mt.METHODS[m].label, ui.config_key(*config, m, per_method[m], stop),
                   lambda cb, m=m: mt.solve(problem, m, callback=cb, **stop, **per_method[m], **spectra.get(m, {})),
                   color=m) for m in chosen]
    results = ui.run_live(jobs, ui.LiveSpec(y=mt.MEASURE, y_title="‖Z − prox(Z − ∇f(Z))‖", tol=stop["tol"],
                                            max_iter=stop["max_iter"]), key=KEY, execute=execute)
    if not results:
        return
    tabs = ui.view_tabs(["Convergence", "Structure", "Fit vs baselines", "Eq. (14) explorer", "Sweep", "Data",
                         "Algorithm", "Export"], key=f"{KEY}.view")
    drawn = ui.tabs_to_draw(tabs, export=7)
    figures: dict = {}
    if drawn[0]:
        with tabs[0]:
            convergence_tab(results, colors, problem, figures)
    if drawn[1]:
        with tabs[1]:
            structure_tab(results, ds, problem, figures)
    if drawn[2]:
        with tabs[2]:
            if len(test_rows):
                fit_tab(results, colors, ds, problem, test_rows, config, figures)
            else:
                st.info(f"No held-out rows to score the fits: {more_test_rows(ds)}.")
    if drawn[3]:
        with tabs[3]:
            explorer_tab(results, problem)
    if drawn[4]:
        with tabs[4]:
            if len(test_rows):
                sweep_tab(ds, problem, test_rows, config)
            else:
                st.info(f"The sweep scores each cell on held-out rows, and there are none: {more_test_rows(ds)}.")
    if drawn[5]:
        with tabs[5]:
            data_tab(ds, problem, train_rows, test_rows)
    if drawn[6]:
        with tabs[6]:
            algorithm_tab()
    if drawn[7]:
        with tabs[7]:
            ui.export_panel({k: r.history_with_arrays() for k, r in results.items()}, figures, key="multitask",
                            config={"problem": pp, "split": split, "methods": per_method, "stopping": stop})


ui.run_page(main)

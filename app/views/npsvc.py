"""NPSVC++ (seed 004): TWSVM / LSTSVM vs K-NPSVC++ and D-NPSVC++; Pareto weights, per-class objectives,
learned features, decision regions, ablation, sensitivity and the Table 2 protocol."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from app import ui
from app.ui import figcache
from app.ui.cost import LIVE_SECONDS
from app.views import _npsvc_figures as figs
from app.views._npsvc_algorithm import algorithm_tab
from app.views._presets import PRESETS
from solvers import npsvc as fam
from solvers.core import InputError, Param
from solvers.datasets import Dataset
from solvers.npsvc.experiments import PAPER_TABLE2, accuracy_splits, fit_svc, summarize, with_paper
from solvers.npsvc.knpsvc import OFFICIAL_MAX_ITER
from solvers.sweep import expand, solve_shipped_job
from app.ui.sweep import run_grid

KEY = "np"
BUNDLED = ("iris", "wine", "breast_cancer", "digits")
# The page always holds rows out: its tables, the sensitivity sweep and the ablation all score test accuracy (with
# test_size = 0 they showed "nan ± nan" and empty charts).
PAGE_PROBLEM_OVERRIDES = {"max_train": {"default": 300},
                          "test_size": {"low_strict": True, "help": "test fraction of a random split (Table 2: 0.4); "
                                        "every view of this page scores the held-out rows"}}
PAGE_PROBLEM_PARAMS = [replace(p, **PAGE_PROBLEM_OVERRIDES.get(p.name, {})) for p in fam.PROBLEM_PARAMS]
STOPPING = [
    Param("tol", 1e-6, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon", ui_range=(1e-10, 1e-1),
          help="stop when the optimality measure falls below this (K-NPSVC++: the relative primal–dual gap and "
               "the relative change of max J over the last iteration, both)"),
    Param("max_iter", None, int, low=1, high=2000,
          help="iteration cap; empty: each method's own default (K-NPSVC++: the official code's 10 outer "
               "iterations; TWSVM: 1000 QP iterations per class; deep models: their epochs)"),
]
SWEEPABLE = ("r1", "r2", "mu", "c", "gamma")
KERNEL_METHODS = ("twsvm", "npsvm", "pin-twsvm", "lstsvm", "knpsvc")


def iteration_cap(method: str, stop: dict) -> int:
    """The sidebar's iteration cap, or the method's own default when the box is empty."""
    return stop["max_iter"] or fam.default_max_iter(method)


def check_classification(ds: Dataset) -> None:
    if ds.task != "classification":
        raise InputError(f"{ds.name} is a {ds.task} dataset; NPSVC needs class labels")


@st.cache_resource(max_entries=8, show_spinner="Preparing the problem…")
def cached_problem(data_key: str, frozen: tuple, _ds: Dataset) -> fam.NPSVCProblem:
    """The problem keeps its kernel and Cholesky factor, so reruns do not rebuild them."""
    return fam.make_problem(_ds, **dict(frozen))


@st.cache_data(max_entries=32, show_spinner="Embedding…")
def embed(key: str, how: str, _points: np.ndarray) -> np.ndarray:
    """2-D t-SNE (seed 0, perplexity ≤ 30) or PCA of the points; cached by ``key``."""
    if _points.shape[1] <= 2:
        return np.c_[_points, np.zeros((len(_points), 2 - _points.shape[1]))]
    if how == "t-SNE" and len(_points) >= 5:
        perplexity = float(min(30, max(2, (len(_points) - 1) // 3)))
        return TSNE(n_components=2, perplexity=perplexity, random_state=0, init="pca").fit_transform(_points)
    return PCA(n_components=2, random_state=0).fit_transform(_points)


def class_names(problem: fam.NPSVCProblem) -> list[str]:
    return [str(c) for c in problem.classes]


def learned_features(problem: fam.NPSVCProblem, method: str, result) -> tuple[np.ndarray, str]:
    """Training-row features each method learns: z = P̂ᵀψ (K), the encoder z (deep), hyperplane distances."""
    sol = result.solution
    if method == "knpsvc":
        return problem.features.Psi @ sol["P"], "z(x) = P̂ᵀψ(x)"
    if method in fam.DEEP_METHODS:
        from solvers.npsvc.dnpsvc import deep_features  # torch, loaded by the deep run itself

        return deep_features(sol["net"], problem.X_train), "encoder output z(x)"
    F = problem.features.Psi @ sol["U"]
    return np.abs(F) / sol["norms"], "distances |f_l(x)|/‖w_l‖ (no learned representation)"


def grid_predictions(problem: fam.NPSVCProblem, method: str, result, grid: np.ndarray):
    """(codes, scores or None) of a finished run on grid points."""
    sol = result.solution
    if method in fam.DEEP_METHODS:
        import torch

        from solvers.npsvc.dnpsvc import deep_scores, predict_from_scores

        F = deep_scores(sol["net"], grid)
        norms = sol["net"].heads.weight.norm(dim=1).detach() if sol["normalize_heads"] else None
        return predict_from_scores(torch.as_tensor(F), norms, sol["criterion"]).numpy(), None
    F = problem.features(grid) @ sol["U"]
    return problem.predict_codes(F, sol["norms"]), F


def convergence_tab(results, labels, histories, tol: float) -> dict:
    shown = (figcache.shown(results), labels)
    figures = {"convergence": figcache.cached("np.convergence", shown, lambda: figs.convergence_figure(histories,
                                                                                                     labels))}
    st.plotly_chart(figures["convergence"], key=f"{KEY}.conv")
    st.caption("One clock for every method: solver seconds. TWSVM (and pinball TWSVM) solve their K class problems "
               "one after another, so until the last one is done some hyperplanes are still zero and their max J and "
               "accuracy describe no finished classifier: they are drawn at their final point (◆). K-NPSVC++ updates "
               "every class in each outer iteration, so each of its points is a complete classifier.")
    converges = figcache.cached("np.converges", (shown, tol), lambda: figs.what_converges_figure(histories, labels,
                                                                                                  tol))
    if converges is not None:
        figures["what converges"] = converges
        st.plotly_chart(converges, key=f"{KEY}.gap")
        st.caption("max J settles within a few outer iterations; the stopping test does not fall to zero. τ moves a "
                   "fraction β towards the class whose J_l is largest, and the next P-step serves that class, which "
                   "can make another class's J_l the largest: max J steps up by a percent or so and the gap reopens. "
                   "So the gap and the change of max J oscillate (between about 1e-2 and 1e-6) instead of reaching a "
                   "small tol; the official code stops after 10 outer iterations, the default here, by which the test "
                   "accuracy in the chart above has settled.")
    figures["optimality"] = figcache.cached("np.optimality", shown, lambda: ui.line_chart(
        histories, "time", "optimality", log_y=True, title="Optimality measure vs solver time",
        x_title="solver time [s]", y_title="relative gap / duality gap / residual", color_keys=labels))
    st.plotly_chart(figures["optimality"], key=f"{KEY}.opt")
    table = ui.summary_table(results, "optimality")
    table["train acc"] = [float(r.history["train_acc"].iloc[-1]) for r in results.values()]
    table["test acc"] = [float(r.history["test_acc"].iloc[-1]) for r in results.values()]
    table["device"] = [r.info.get("device", "cpu (numpy)") for r in results.values()]  # deep models: torch device
    st.dataframe(table, hide_index=True)
    st.caption("Optimality: K-NPSVC++ and the deep models the larger of (max J − τᵀJ)/max J and the relative "
               "change of max J over the last iteration (epoch); TWSVM the largest relative duality gap of its "
               "K box QPs; LSTSVM the residual of its linear systems. The gap alone only says that τ sits on the "
               "class with the largest J_l: it shrinks by 1 − β per iteration whatever the hyperplanes do (at β = 1 "
               "it can be 0 after one iteration), so K-NPSVC++ also waits for the primal curve to flatten.")
    return figures


def pareto_tab(problem, results, labels, histories) -> dict:
    figures = {}
    names = class_names(problem)
    label = st.selectbox("Run", list(results), key=f"{KEY}.pareto_run",
                         index=next((i for i, k in enumerate(results) if labels[k] in ("knpsvc", "dnpsvc")), 0))
    h = histories[label]
    run = figcache.shown({label: results[label]})
    figures["tau"] = figcache.cached("np.tau", run, lambda: figs.tau_area(
        h, names, f"Pareto weights τ over iterations: {label}"))
    st.plotly_chart(figures["tau"], key=f"{KEY}.tau")
    figures["per_class"] = figcache.cached("np.per_class", run, lambda: figs.class_objectives(
        h, names, f"Per-class objectives J_l: {label}"))
    st.plotly_chart(figures["per_class"], key=f"{KEY}.jl")
    st.markdown("**Radar of the per-class objectives (Fig. A.4)**: NPSVC++ against a run with fixed uniform τ "
                "(DTWSVN for the deep model, TWSVM or LSTSVM for the kernel one).")
    if len(results) < 2:
        st.info("Pick two methods (e.g. D-NPSVC++ and DTWSVN) to compare them on the radar.")
        return figures
    c1, c2, c3 = st.columns([2, 2, 1])
    if not set(st.session_state.get(f"{KEY}.radar_runs", [])) <= set(results):
        st.session_state.pop(f"{KEY}.radar_runs")  # runs of other methods (the method picker changed): default pair
    pair = c1.multiselect("Compare", list(results), default=list(results)[:2], max_selections=2,
                          key=f"{KEY}.radar_runs")
    rows = min(len(histories[k]) for k in pair) if pair else 1
    row = c2.slider("iteration / epoch", 0, max(rows - 1, 1), max(rows - 1, 0), key=f"{KEY}.radar_epoch")
    log = c3.toggle("log axis", value=True, key=f"{KEY}.radar_log")
    if pair:
        figures["radar"] = figcache.cached("np.radar", (figcache.shown({k: results[k] for k in pair}), labels, row, log),
                                           lambda: figs.radar({k: histories[k] for k in pair}, labels, names, row, log))
        st.plotly_chart(figures["radar"], key=f"{KEY}.radar")
    return figures


def features_tab(problem, results, labels, run_keys) -> dict:
    figures = {}
    c1, c2, c3 = st.columns(3)
    label = c1.selectbox("Learned features of", list(results), key=f"{KEY}.feat_run",
                         index=next((i for i, k in enumerate(results) if labels[k] in ("knpsvc", "dnpsvc")), 0))
    how = c2.radio("Projection", ["PCA", "t-SNE"], horizontal=True, key=f"{KEY}.feat_how",
                   help="t-SNE (seed 0, perplexity 30) takes a few seconds; more than a few waits for a press; "
                        "results are cached")
    limit = c3.slider("points", 50, 1000, 400, 50, key=f"{KEY}.feat_n", help="training rows embedded")
    if how == "t-SNE" and not tsne_allowed(min(limit, problem.n_train), (run_keys[label], limit)):
        return figures
    figures.update(figcache.cached("np.features", (figcache.shown({label: results[label]}), run_keys[label], how,
                                                   limit), lambda: embeddings(problem, labels[label], results[label],
                                                                              run_keys[label], how, limit)))
    left, right = st.columns(2)
    left.plotly_chart(figures["raw"], key=f"{KEY}.raw")
    right.plotly_chart(figures["learned"], key=f"{KEY}.learned")
    return figures


def tsne_allowed(points: int, wanted: tuple) -> bool:
    """Whether the page may project now: at once when both t-SNE projections are estimated under LIVE_SECONDS or
    were asked for before in this session, else after a press of "Compute t-SNE" beside the estimate."""
    cost = ui.tsne_cost(points, projections=2)
    done = st.session_state.setdefault(f"{KEY}.tsne_done", set())
    if cost.seconds <= LIVE_SECONDS or wanted in done:
        return True
    if ui.refused(cost) or not st.button("Compute t-SNE", key=f"{KEY}.tsne_run"):
        return False
    done.add(wanted)
    return True


def embeddings(problem, method: str, result, run_key: str, how: str, limit: int) -> dict:
    """The raw and the learned features of ``limit`` training rows, projected by PCA or t-SNE (Fig. 3)."""
    rows = np.random.default_rng(0).permutation(problem.n_train)[:limit]
    codes = problem.y_train[rows]
    learned, what = learned_features(problem, method, result)
    axis = "t-SNE" if how == "t-SNE" else "PC"
    raw = figs.embedding_figure(embed(f"raw:{run_key}:{limit}", how, problem.X_train[rows]), codes,
                                class_names(problem), f"{how} of the raw features φ(x) (Fig. 3a)", axis)
    if not np.isfinite(learned[rows]).all():  # a diverged run (e.g. a deep model's rate or margin too large)
        return {"raw": raw, "learned": ui.base_figure(
            f"{what} is not finite (run status: {result.status}): lower the learning rate, margin or C", "", "",
            height=440)}
    learned_points = embed(f"learned:{run_key}:{limit}", how, learned[rows])
    return {"raw": raw, "learned": figs.embedding_figure(learned_points, codes, class_names(problem),
                                                         f"{how} of {what} (Fig. 3b)", axis)}


def geometry_tab(problem, results, labels) -> dict:
    if problem.X_train.shape[1] != 2:
        st.info("Decision regions need 2-D data: pick a synthetic set (blobs, moons, crossed lines). "
                "For crossed lines use the linear kernel without bias, so the planes pass through the crossing.")
        return {}
    figures = figcache.cached("np.regions", (figcache.shown(results), labels), lambda: regions(problem, results,
                                                                                               labels))
    cols = st.columns(2)
    for i, label in enumerate(results):
        cols[i % 2].plotly_chart(figures[f"regions {label}"], key=f"{KEY}.reg{i}")
    cols[len(results) % 2].plotly_chart(figures["regions SVC"], key=f"{KEY}.regsvc")
    return figures


def regions(problem, results, labels) -> dict:
    """Each run's decision regions on a 90 × 90 grid around the data, and those of an SVC with the same kernel."""
    X = np.r_[problem.X_train, problem.X_test]
    lo, hi = X.min(0) - 0.5, X.max(0) + 0.5
    xs, ys = np.linspace(lo[0], hi[0], 90), np.linspace(lo[1], hi[1], 90)
    grid = np.array(np.meshgrid(xs, ys)).reshape(2, -1).T
    names = class_names(problem)
    figures = {}
    for label, r in results.items():
        codes, scores = grid_predictions(problem, labels[label], r, grid)
        figures[f"regions {label}"] = figs.regions_figure(xs, ys, codes, scores, problem.X_train, problem.y_train,
                                                          names, f"{label}: regions and hyperplanes f_l = 0")
    svc, _, _ = fit_svc(problem)
    figures["regions SVC"] = figs.regions_figure(xs, ys, svc.predict(grid), None, problem.X_train, problem.y_train,
                                                 names, "SVC (same kernel): regions")
    return figures


def ablation_tab(problem, per_method, stop, data_key) -> dict:
    st.markdown("Train D-NPSVC++ three times with one seed: heads on [φ; z] (full), on z only, on φ only (Fig. 4).")
    params = dict(per_method.get("dnpsvc") or {})
    key = ui.config_key(KEY, "ablation", data_key, params, stop["max_iter"])
    store = st.session_state.setdefault(f"{KEY}.ablations", {})
    if st.button("Run ablation", key=f"{KEY}.ablate"):
        bar = ui.StoppableProgress(f"{KEY}.ablate", "ablation…")
        runs = {}
        for i, (label, hyp) in enumerate((("full: wᵀφ + vᵀz", "full"), ("z only: vᵀz", "z"),
                                          ("φ only: wᵀφ", "phi"))):
            bar.progress(i / 3, text=label)
            runs[label] = fam.solve(problem, "dnpsvc", tol=1e-12, max_iter=stop["max_iter"],
                                    **{**params, "hypothesis": hyp}).history
        bar.empty()
        store[key] = runs
    if key in store:
        fig = figs.ablation_figure(store[key])
        st.plotly_chart(fig, key=f"{KEY}.ablation")
        return {"ablation": fig}
    return {}


def sensitivity_tab(problem, per_method, stop, data_key) -> dict:
    c1, c2, c3 = st.columns(3)
    method = c1.selectbox("Method", KERNEL_METHODS, index=KERNEL_METHODS.index("knpsvc"), format_func=lambda m: fam.METHODS[m].label,
                          key=f"{KEY}.sens_method")
    allowed = [p for p in SWEEPABLE if p in {q.name for q in fam.METHODS[method].params}]
    params = c2.multiselect("Hyperparameters (one: lines, two: heatmap)", allowed, default=allowed[:1],
                            max_selections=2, key=f"{KEY}.sens_params")
    points = c3.slider("grid points per parameter (10⁻³ … 10³)", 3, 7, 4, key=f"{KEY}.sens_points")
    if not params:
        return {}
    base = dict(per_method.get(method) or {})
    grid = {p: list(np.logspace(-3, 3, points)) for p in params}
    key = ui.config_key(KEY, "sens", data_key, method, base, grid, stop)
    if ui.refused(ui.npsvc_cost(len(problem.y_train), len(problem.y_test), len(problem.classes),
                                max_iter=iteration_cap(method, stop), methods=points ** len(params))):
        return {}
    configs = expand(grid, fixed={"family": "npsvc", "method": method, **stop,
                                  **{k: v for k, v in base.items() if k not in grid}})
    draw = lambda table: figs.sensitivity_figure(table, params, fam.METHODS[method].label)  # noqa: E731
    table = run_grid(solve_shipped_job, configs, key=f"{KEY}.sens", cache_key=key, data=problem, figure=draw)
    if table is not None and "test_acc" in table:
        fig = draw(table)
        st.plotly_chart(fig, key=f"{KEY}.sens")
        return {"sensitivity": fig}
    return {}


def results_tab(ds, problem, problem_params, per_method, stop) -> None:
    st.markdown("Table 2 protocol: random stratified splits with the page's test size (paper: 60/40, 10 splits), "
                "mean ± std of test accuracy; ‡ / † mark a paired t-test against K-NPSVC++ at p < 0.05 / 0.1. "
                f"K-NPSVC++ runs at most the official code's {OFFICIAL_MAX_ITER} outer iterations, as the paper's "
                "table did.")
    splits = ui.slider("splits", 2, 10, 3, key=f"{KEY}.splits")
    methods = {fam.METHODS[m].label: (m, dict(per_method.get(m) or {})) for m in KERNEL_METHODS}
    key = ui.config_key(KEY, "table", ds.meta["key"], problem_params, methods, stop, splits)
    store = st.session_state.setdefault(f"{KEY}.tables", {})
    # every split solves each kernel method and SVC on a problem of this page's size: refuse before any work
    cost = ui.npsvc_cost(len(problem.y_train), len(problem.y_test), len(problem.classes),
                         max_iter=max(iteration_cap(m, stop) for m in KERNEL_METHODS),
                         methods=splits * (len(methods) + 1))
    if ui.refused(cost):
        return
    if st.button("Run splits", key=f"{KEY}.table_run"):
        bar = ui.StoppableProgress(f"{KEY}.table", "splits…")
        budgets = {label: iteration_cap(m, stop) for label, (m, _) in methods.items()}
        budgets["K-NPSVC++"] = min(budgets["K-NPSVC++"], OFFICIAL_MAX_ITER)
        runs = accuracy_splits(ds, methods, n_splits=splits, problem_params=problem_params, tol=stop["tol"],
                               max_iter=fam.FAMILY_MAX_ITER, budgets=budgets,
                               progress=lambda f, t: bar.progress(f, text=t))
        bar.empty()
        store[key] = with_paper(summarize(runs), ds.name)
    if key in store:
        st.dataframe(store[key][["method", "ours", "paper (Table 2)", "p vs K-NPSVC++", "seconds", "converged"]],
                     hide_index=True)
        if ds.name not in PAPER_TABLE2:
            st.caption(f"The paper's Table 2 has no {ds.name}; its datasets: {', '.join(PAPER_TABLE2)}.")


def data_tab(ds: Dataset, problem: fam.NPSVCProblem) -> None:
    st.markdown(f"**{ds.name}**: {ds.description or ds.summary()}")
    counts = pd.Series(problem.y_train).value_counts().sort_index()
    st.markdown(f"{problem.n_train} training rows, {len(problem.y_test)} test rows, {problem.X_train.shape[1]} "
                f"features, {problem.n_classes} classes; kernel {problem.kernel.name}"
                + (f" with width t = {problem.kernel.width:.4g}" if problem.kernel.name == "rbf" else "") + ".")
    st.plotly_chart(figcache.cached("np.counts", (problem.classes.tolist(), counts.to_dict()), lambda: ui.base_figure(
        "Training rows per class", "class", "rows").add_bar(x=[str(problem.classes[i]) for i in counts.index],
                                                            y=counts.to_numpy(), name="rows")), key=f"{KEY}.counts")
    if problem.image_shape is not None:
        cols = st.columns(8)
        for i, col in enumerate(cols):
            img = problem.X_train[i].reshape(problem.image_shape)
            col.image((img - img.min()) / max(np.ptp(img), 1e-12), caption=str(problem.classes[problem.y_train[i]]),
                      clamp=True, width="stretch")


def main() -> None:
    ui.page_header(fam.TITLE, fam.PAPER,
                   "Nonparallel classifiers fit one hyperplane per class. NPSVC++ adds a representation shared by all "
                   "classes and balances the classes' objectives with Pareto weights τ. Compare TWSVM and LSTSVM with "
                   "the kernel (K-NPSVC++) and deep (D-NPSVC++) versions: primal/dual convergence, τ, per-class "
                   "objectives, learned features and decision regions.")
    ui.preset_buttons(PRESETS["npsvc"], key=KEY)
    ui.prepare_workers("solvers.npsvc.dnpsvc:warm_up", "torch")  # the lesson's first preset is a deep run
    side = st.sidebar
    side.header("Data")
    ds = ui.dataset_picker("npsvc", key=f"{KEY}.data", bundled=BUNDLED, check=check_classification,
                           sources=("bundled", "synthetic", "real", "upload"))
    if ds is None:
        return
    side.header("Problem")
    problem_params = ui.param_form(PAGE_PROBLEM_PARAMS, key=f"{KEY}.problem", container=side)
    side.header("Methods")
    chosen = ui.method_picker(fam.METHODS, key=f"{KEY}.methods", default=["twsvm", "knpsvc"], container=side)
    per_method = ui.method_params(fam.METHODS, chosen, key=f"{KEY}.m", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    n_test = int(ds.n_samples * problem_params["test_size"])
    cost = ui.npsvc_cost(min(ds.n_samples - n_test, problem_params["max_train"]), n_test, len(ds.classes),
                         max_iter={m: iteration_cap(m, stop) for m in chosen} or fam.FAMILY_MAX_ITER,
                         methods=chosen,
                         epochs={m: per_method[m]["epochs"] for m in chosen if "epochs" in per_method[m]})
    execute = ui.run_controls(KEY, live_default=problem_params["max_train"] <= 400, cost=cost)
    if not chosen:
        st.info("Pick at least one method in the sidebar.")
        return
    labels = {fam.METHODS[m].label: m for m in chosen}
    run_keys = {fam.METHODS[m].label: ui.config_key(KEY, ds.meta["key"], problem_params, m, per_method[m], stop)
                for m in chosen}
    if ui.awaiting_run(list(run_keys.values()), key=KEY, execute=execute):
        return
    problem = cached_problem(ds.meta["key"], tuple(sorted(problem_params.items())), ds)
    jobs = [ui.Job(fam.METHODS[m].label, run_keys[fam.METHODS[m].label],
                   lambda cb, m=m: fam.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
            for m in chosen]
    results = ui.run_live(jobs, ui.LiveSpec(y="optimality", y_title="optimality measure (log)", tol=stop["tol"],
                                            max_iter=stop["max_iter"]), key=KEY, execute=execute)
    labels = {k: v for k, v in labels.items() if k in results}
    histories = {k: r.history for k, r in results.items()}
    tabs = ui.view_tabs(["Convergence", "Pareto weights", "Features", "Geometry", "Ablation", "Sensitivity",
                         "Results table", "Data", "Algorithm", "Export"], key=f"{KEY}.view")
    drawn = ui.tabs_to_draw(tabs, export=9)
    figures: dict = {}
    data_key = ui.config_key(ds.meta["key"], problem_params)
    if results and drawn[0]:
        with tabs[0]:
            figures.update(convergence_tab(results, labels, histories, stop["tol"]))
    if results and drawn[1]:
        with tabs[1]:
            figures.update(pareto_tab(problem, results, labels, histories))
    if results and drawn[2]:
        with tabs[2]:
            figures.update(features_tab(problem, results, labels, run_keys))
    if results and drawn[3]:
        with tabs[3]:
            figures.update(geometry_tab(problem, results, labels))
    if drawn[4]:
        with tabs[4]:
            figures.update(ablation_tab(problem, per_method, stop, data_key))
    if drawn[5]:
        with tabs[5]:
            figures.update(sensitivity_tab(problem, per_method, stop, data_key))
    if drawn[6]:
        with tabs[6]:
            results_tab(ds, problem, problem_params, per_method, stop)
    if drawn[7]:
        with tabs[7]:
            data_tab(ds, problem)
    if drawn[8]:
        with tabs[8]:
            algorithm_tab()
    if drawn[9]:
        with tabs[9]:
            ui.export_panel(histories, figures, key="npsvc",
                            config={"data": ds.meta["key"], "problem": problem_params, "methods": per_method,
                                    "stopping": stop})


ui.run_page(main)

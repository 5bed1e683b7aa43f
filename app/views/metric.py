"""Metric learning with safe triplet screening (seed 003): screening rates, speed-ups, bounds, the learned metric."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import ui
from app.ui import figcache
from app.views import _metric_figures as figs
from app.views._metric_algorithm import algorithm_tab
from solvers import datasets, metric
from solvers.core import InputError, Param, Result
from solvers.datasets import Dataset
from solvers.metric import analysis
from solvers.metric.problem import lambda_max
from solvers.metric.projected_gradient import minimize

KEY = "ml"
CONFIGS = {"naive": (), "gb": ("gb",), "pgb": ("pgb",), "dgb": ("dgb",), "cdgb": ("cdgb",), "rrpb": ("rrpb",),
           "rrpb+pgb": ("rrpb", "pgb")}
CONFIG_LABELS = {"naive": "Naive (no screening)", "gb": "GB", "pgb": "PGB", "dgb": "DGB", "cdgb": "CDGB",
                 "rrpb": "RRPB", "rrpb+pgb": "RRPB+PGB"}
STOPPING = [
    Param("tol", 1e-6, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon",
          help="relative duality gap at which each λ stops", ui_range=(1e-10, 1e-3)),
    Param("max_iter", 2000, int, low=1, high=100_000, log=True, help="iteration cap per λ", ui_range=(10, 20_000)),
]
MASK_BUDGET = 20_000_000  # triplets × λ-steps of screened sets kept for the margin and audit views
HINGE_MAX_ITER = 100
#: The page starts with ρ = 0.6 (27 λ on iris instead of the paper's ≈ 130 at 0.9) so that a slider notch re-runs
#: its three paths in well under a second of CPU; the presets and the slider restore the paper's grid.
PATH_PARAMS = [replace(p, default=0.6) if p.name == "rho" else p for p in metric.PATH_PARAMS]


def check_classes(ds: Dataset) -> None:
    if ds.task != "classification" or ds.y is None or len(ds.classes) < 2:
        raise InputError(f"{ds.name} needs class labels with at least 2 classes for triplets")


@st.cache_resource(max_entries=8, show_spinner="Building triplets…")
def build_problem(data_key: str, _ds: Dataset, frozen: tuple) -> metric.TripletProblem:
    return metric.make_problem(_ds, **dict(frozen))


def run_path(problem, bounds, rule, path_params, stop, keep_masks, callback) -> Result:
    res = metric.regularization_path(problem, bounds=bounds, rule=rule, keep_masks=keep_masks, callback=callback,
                                     tol=stop["tol"], max_iter=stop["max_iter"], **path_params)
    table = res.table
    return Result(solution={"M": res.solutions[-1], "path": res}, history=table, status=res.status,
                  info={"n_iter": int(table["iters"].sum()), "time": float(table["time"].sum())})


PRESETS = {
    "fast": ("Screening removes ~90 % of triplets (seconds)",
             {"ml.data.source": "real", "ml.data.real": "iris.scale", "ml.problem.k": 0, "ml.problem.max_samples": 60,
              "ml.bounds": ["naive", "rrpb+pgb"], "ml.rules": ["sphere"], "ml.path.rho": 0.8, "ml.live": True}),
    "segment": ("segment at full size: 2,310 samples, k = 20, 924,000 triplets (minutes; press Run)",
                {"ml.data.source": "real", "ml.data.real": "segment", "ml.problem.k": 20, "ml.problem.max_samples": 0,
                 "ml.bounds": ["naive", "rrpb+pgb"], "ml.rules": ["sphere"], "ml.path.rho": 0.9, "ml.live": False}),
}


def apply_preset() -> None:
    """Button callback (runs before the widgets are drawn): copy the chosen preset into the widgets' state."""
    chosen = st.session_state.get(f"{KEY}.preset")
    if chosen in PRESETS:
        st.session_state.update(PRESETS[chosen][1])


def preset_picker(side) -> None:
    real = datasets.available("metric")
    offered = [name for name, (_, values) in PRESETS.items() if real.get(values["ml.data.real"]) == "real"]
    if not offered:
        return
    side.selectbox("Preset", offered, key=f"{KEY}.preset", format_func=lambda n: PRESETS[n][0],
                   help="Sets the data, triplets, bounds and path below to a run that shows the payoff of screening.")
    side.button("Apply preset", key=f"{KEY}.apply_preset", on_click=apply_preset, width="stretch")


def sidebar():
    side = st.sidebar
    preset_picker(side)
    ds = ui.dataset_picker("metric", key=f"{KEY}.data", bundled=("iris", "wine", "digits", "breast_cancer"),
                           check=check_classes)
    if ds is None:
        return None
    side.header("Triplets")
    pp = ui.param_form(metric.PROBLEM_PARAMS, key=f"{KEY}.problem", container=side)
    side.header("Screening")
    configs = ui.choices("Bounds to compare", list(CONFIGS), default=["naive", "pgb", "rrpb"], container=side,
                         key=f"{KEY}.bounds", format_func=CONFIG_LABELS.get,
                         help="Each runs the whole λ-path with path + dynamic screening by that sphere.")
    rules = ui.choices("Rules", list(metric.RULES), default=["sphere"], key=f"{KEY}.rules", container=side,
                       format_func=metric.RULE_LABELS.get,
                       help="sphere: eq. (4); linear: Thm 3.1; semidefinite: SDLS dual (slow, strongest)")
    path_params = ui.param_form(PATH_PARAMS, key=f"{KEY}.path", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    return ds, pp, configs, rules, path_params, stop


def main() -> None:
    ui.page_header(metric.TITLE, metric.PAPER,
                   "Triplets are (same-class neighbour, other-class neighbour) pairs around each sample. Safe "
                   "screening proves, before the optimum is known, which triplets end in the linear or the zero "
                   "part of the loss, and removes them. Compare bounds and rules along the λ-path: how many "
                   "triplets each removes, how much time it saves, and that the answer never changes.")
    chosen = sidebar()
    if chosen is None:
        return
    ds, pp, configs, rules, path_params, stop = chosen
    path_rules = [rule for config in configs for rule in (["naive"] if config == "naive" else rules)]
    cost = ui.metric_cost(ds.y, ds.n_features, k=pp["k"], diagonal=pp["diagonal"], max_samples=pp["max_samples"],
                          max_steps=path_params["max_steps"], max_iter=stop["max_iter"], rules=path_rules or ["sphere"],
                          rho=path_params["rho"], stop=path_params["stop"])
    execute = ui.run_controls(KEY, live_default=ds.n_samples <= 200 and pp["k"] and pp["k"] <= 5, cost=cost)
    if not configs or not rules:
        st.info("Pick at least one bound and one rule in the sidebar.")
        return
    if pp["gamma"] == 0 and stop["max_iter"] > HINGE_MAX_ITER:
        stop = {**stop, "max_iter": HINGE_MAX_ITER}
        st.caption(f"γ = 0 is the hinge loss: projected *sub*gradient, whose duality gap rarely reaches the tolerance "
                   f"(App. L.1), so each λ is capped at {HINGE_MAX_ITER} iterations.")
    jobs, meta = [], {}
    for config in configs:
        for rule in (["sphere"] if config == "naive" else rules):
            label = CONFIG_LABELS[config] if config == "naive" or len(rules) == 1 else \
                f"{CONFIG_LABELS[config]} · {metric.RULE_LABELS[rule]}"
            meta[label] = (config, rule)
            key = ui.config_key(KEY, ds.meta["key"], pp, config, rule, path_params, stop)  # these fix keep_masks
            jobs.append(ui.Job(label, key, lambda cb, b=CONFIGS[config], r=rule: run_path(
                problem, b, r, path_params, stop, keep_masks, cb), color=config))
    if ui.awaiting_run([job.key for job in jobs], key=KEY, execute=execute):
        return
    problem = build_problem(ds.meta["key"], ds, tuple(sorted(pp.items())))
    keep_masks = problem.n_triplets * path_params["max_steps"] <= MASK_BUDGET
    results = ui.run_live(jobs, ui.LiveSpec(y="rate_path", y_title="path screening rate |L̂∪R̂| / |L*∪R*|",
                                            x="neg_log10_lam", x_title="−log₁₀ λ", log_y=False,
                                            title="Screening rate along the path (live)",
                                            max_iter=path_params["max_steps"]), key=KEY, execute=execute)
    runs = {label: {"config": meta[label][0], "rule": meta[label][1], "label": label, "result": r,
                    "table": r.history, "path": r.solution["path"], "history": r.solution["path"].history,
                    "rounds": r.solution["path"].rounds} for label, r in results.items() if label in meta}
    st.caption(f"{problem.n_triplets:,} triplets from {problem.X.shape[0]} samples, d = {problem.dim}"
               f"{' (diagonal M)' if problem.diagonal else ''}, γ = {problem.gamma}; λ_max = {lambda_max(problem)[0]:.4g}.")
    figures: dict[str, go.Figure] = {}
    draw = {"Screening": lambda: screening_tab(runs, figures), "Time": lambda: time_tab(runs, figures, ds.name),
            "Dynamic": lambda: dynamic_tab(runs, figures, path_params["period"]),
            "Range": lambda: range_tab(problem, runs, figures),
            "Radii": lambda: radii_tab(runs, figures), "Solution": lambda: solution_tab(problem, runs, figures),
            "Safety": lambda: safety_tab(problem, runs, figures, keep_masks),
            "Geometry": lambda: geometry_tab(ds, pp, figures), "Data": lambda: data_tab(ds, problem),
            "Algorithm": algorithm_tab,
            "Export": lambda: export_tab(runs, figures, ds.name, {"problem": pp, "bounds": configs, "rules": rules,
                                                                   "path": path_params, "stop": stop})}
    if not runs:
        draw = {"Algorithm": algorithm_tab}
    # only the open tab is computed (Streamlit's lazy tabs: .open is None when every tab must be drawn), so a
    # slider notch pays for the figures on screen, not for all eleven views
    for tab, name in zip(ui.view_tabs(list(draw), key=f"{KEY}.view"), draw):
        if tab.open is not False:
            with tab:
                draw[name]()


def radii_tab(runs, figures) -> None:
    figures["radii"] = figcache.cached("ml.radii", shown(runs), lambda: figs.radius_figure(next(iter(runs.values()))))
    st.plotly_chart(figures["radii"], key=f"{KEY}.radii")
    t = next(iter(runs.values()))["table"].iloc[1:]
    st.caption("Theorems 3.8 and 3.9 predict r_PGB ≈ r_RRPB and r_DGB ≈ 2 r_RRPB when the previous λ was solved "
               f"exactly: here median r_PGB/r_RRPB = {np.median(t['r_pgb'] / t['r_rrpb']):.3f}, "
               f"median r_DGB/r_RRPB = {np.median(t['r_dgb'] / t['r_rrpb']):.3f}. GB stays large as λ → 0 "
               "because its centre leaves the PSD cone.")


def export_tab(runs, figures, dataset: str, config: dict) -> None:
    """CSV/JSON of every path's table and the two headline figures (built here: the other tabs are not drawn)."""
    if "rate" not in figures:
        figures["rate"] = figcache.cached("ml.path_rate", shown(runs), lambda: figs.rate_figure(
            runs, "rate_path", "path screening rate |L̂∪R̂| / |L*∪R*|"))
    if "total_time" not in figures:
        figures["total_time"] = figcache.cached("ml.total_time", (shown(runs), dataset), lambda: figs.total_time_figure(
            runs, dataset))
    ui.export_panel({label: run["table"] for label, run in runs.items()}, figures, key="metric", config=config)


def screening_tab(runs, figures) -> None:
    denominator = ui.choice("Rate denominator", ["|L* ∪ R*| (rejection ratio)", "|T| (all triplets)"],
                           key=f"{KEY}.denominator", widget="radio", horizontal=True)
    when = ui.choice("Screened sets", ["at the start of each λ (path screening)", "at the end of each λ (+ dynamic)"],
                     key=f"{KEY}.when", widget="radio", horizontal=True)
    figures["rate"] = figcache.cached("ml.rate", (shown(runs), denominator, when), lambda: figs.rate_figure(
        shown_rates(runs, denominator.startswith("|T|"), when.startswith("at the start")), "shown_rate",
        f"screening rate ({denominator.split(' (')[0]})"))
    st.plotly_chart(figures["rate"], key=f"{KEY}.rate")
    st.caption("Colour and dash: the bound; marker: the rule (● sphere, ■ + linear, ◆ + semidefinite). PGB and "
               "RRPB usually overlap: from the same previous solution they are the same sphere (Thm 3.8); PGB's "
               "dotted line is drawn over RRPB's solid one. GB falls at small λ because its centre leaves the PSD "
               "cone.")
    screened = [label for label, run in runs.items() if run["config"] != "naive"]
    if screened:
        pick = st.selectbox("Partition view for", screened, key=f"{KEY}.stack_run")
        figures["stacked"] = figcache.cached("ml.stacked", shown({pick: runs[pick]}), lambda: figs.stacked_figure(
            runs[pick]))
        st.plotly_chart(figures["stacked"], key=f"{KEY}.stacked")


def shown(runs: dict) -> list:
    """The part of a figure's key that names the paths it shows (app/ui/figcache.py)."""
    return figcache.shown({label: run["result"] for label, run in runs.items()})


def shown_rates(runs: dict, over_T: bool, at_start: bool) -> dict:
    """The runs with a ``shown_rate`` column: screened triplets (at the start or the end of each λ) over
    |L* ∪ R*| or over all triplets |T|. Copies: the stored tables are shared by every session."""
    out = {}
    for label, run in runs.items():
        t = run["table"]
        total = t["L_star"] + t["R_star"] if not over_T else t["L_star"] + t["C_star"] + t["R_star"]
        column = ["path_L", "path_R"] if at_start else ["final_L", "final_R"]
        out[label] = {**run, "table": t.assign(shown_rate=(t[column[0]] + t[column[1]]) / total.clip(lower=1))}
    return out


def time_tab(runs, figures, dataset: str) -> None:
    ratio = figcache.cached("ml.time_ratio", shown(runs), lambda: figs.time_ratio_figure(runs))
    if ratio is None:
        st.info("Add “Naive (no screening)” to the bounds to see time ratios.")
    else:
        figures["time_ratio"] = ratio
        st.plotly_chart(ratio, key=f"{KEY}.time_ratio")
    figures["total_time"] = figcache.cached("ml.total_time", (shown(runs), dataset), lambda: figs.total_time_figure(
        runs, dataset))
    st.plotly_chart(figures["total_time"], key=f"{KEY}.total_time")
    figures["work_share"] = figcache.cached("ml.work_share", shown(runs), lambda: figs.work_share_figure(runs))
    st.plotly_chart(figures["work_share"], key=f"{KEY}.work_share")
    st.caption("Solid: triplets left after path screening; dashed: the pairs (x_i, x_j) those triplets still use. "
               "The solver's work per iteration is one pass over the remaining triplets plus one over their pairs "
               "(#pairs·d²), so screening pays fully only when both fall.")
    paper = figs.paper_table(runs, dataset)
    if paper is not None:
        st.markdown("**Beside the paper's Table 4** (their sizes and hardware; compare speed-ups, not seconds)")
        st.dataframe(paper, hide_index=True)
    summary = ui.summary_table({label: run["result"] for label, run in runs.items()}, "rel_gap")
    summary["λ stopped at max_iter"] = [run["path"].n_capped for run in runs.values()]
    st.dataframe(summary, hide_index=True)
    st.caption("Per path: *converged* when every λ's relative duality gap (rel_gap, shown for the last λ) reached the "
               "tolerance and the path ended by its elasticity test (Sec. 5); *max_iter* when a λ stopped at its "
               "iteration cap or the path ran out of λ steps. Iterations and time are summed over the path.")


def dynamic_tab(runs, figures, period: int) -> None:
    screened = [label for label, run in runs.items() if run["config"] != "naive"]
    if not screened:
        st.info("Dynamic screening needs a bound: add one in the sidebar.")
        return
    pick = st.selectbox("Heatmap for", screened, key=f"{KEY}.dyn_run")
    if runs[pick]["rounds"].empty:
        st.info(f"No dynamic screening round ran on {pick}: rounds run every `period` = {period} iterations, and "
                "every λ stopped before that. Lower the period to see the heatmap.")
    else:
        figures["dynamic"] = figs.dynamic_heatmap(runs[pick])
        st.plotly_chart(figures["dynamic"], key=f"{KEY}.dynamic")
    steps = int(runs[pick]["table"]["step"].max())
    step = st.slider("λ step to follow", 1, max(steps, 1), max(1, steps // 2), key=f"{KEY}.dyn_step") if steps > 1 else 1
    gap, scr = figs.step_history_figures(runs, step)
    figures["step_gap"], figures["step_screened"] = gap, scr
    left, right = st.columns(2)
    left.plotly_chart(gap, key=f"{KEY}.step_gap")
    right.plotly_chart(scr, key=f"{KEY}.step_screened")


def range_tab(problem, runs, figures) -> None:
    st.markdown("From the solution at each reference λ0 (x-axis), RRPB's range (Thm 4.1) certifies triplets for a "
                "whole interval of λ below it; the colour is the share of the true L* ∪ R* at the target λ (y-axis) "
                "screened without evaluating any rule.")
    run = next(iter(runs.values()))
    if len(run["table"]) > 250:
        st.info("The path is long; the heatmap uses the first 250 λ.")
    figures["range"] = figs.range_heatmap(problem, run)
    st.plotly_chart(figures["range"], key=f"{KEY}.range")


def solution_tab(problem, runs, figures) -> None:
    labels = list(runs)
    pick = st.selectbox("Run", labels, key=f"{KEY}.sol_run")
    run = runs[pick]
    steps = len(run["path"].solutions) - 1
    step = st.slider("λ step", 0, max(steps, 1), steps, key=f"{KEY}.sol_step") if steps > 0 else 0
    step = min(step, steps)
    M = run["path"].solutions[step]
    masks = run["path"].masks[step - 1] if 0 < step <= len(run["path"].masks) else None
    lam = run["table"]["lam"].iloc[step]
    figures["margins"] = figs.margin_histogram(problem, M, masks, f"Margins at λ = {lam:.4g} ({pick})")
    st.plotly_chart(figures["margins"], key=f"{KEY}.margins")
    heat, spec, emb = figs.metric_figures(problem, M)
    left, right = st.columns(2)
    left.plotly_chart(heat, key=f"{KEY}.heat")
    right.plotly_chart(spec, key=f"{KEY}.spectrum")
    st.plotly_chart(emb, key=f"{KEY}.embedding")
    figures["knn"] = figs.knn_figure(problem, run)
    st.plotly_chart(figures["knn"], key=f"{KEY}.knn")
    figures.update({"metric": heat, "spectrum": spec, "embedding": emb})


def safety_tab(problem, runs, figures, keep_masks: bool) -> None:
    naive = next((r for r in runs.values() if r["config"] == "naive"), None)
    if naive is None:
        st.info("Add “Naive (no screening)” to audit the screened runs against it.")
        return
    audits = {label: (run["config"], analysis.safety_audit(problem, run["path"], naive["path"]))
              for label, run in runs.items() if run["config"] != "naive"}
    rows = []
    for label, (_, df) in audits.items():
        row = {"configuration": label, "λ checked": len(df), "max ‖ΔM‖_F": float(df["dM"].max()) if len(df) else 0.0}
        if "false_L" in df:
            row["false screens (must be 0)"] = int(df["false_L"].sum() + df["false_R"].sum())
        rows.append(row)
    if rows:
        st.dataframe(rows, hide_index=True)
    if not keep_masks:
        st.caption("Screened sets were not kept for this size, so only ‖ΔM‖ is audited.")
    figures["audit"] = figs.audit_figure(audits)
    st.plotly_chart(figures["audit"], key=f"{KEY}.audit")


@st.cache_resource(max_entries=16, show_spinner="Solving the 2-D toy…")
def toy_problem(data_key: str, _ds: Dataset, features: tuple, gamma: float, lam_exp: float):
    sub = _ds.subset(metric.subsample_rows(np.asarray(_ds.y), 120, 0))
    X = sub.dense()[:, list(features)]
    problem = metric.make_problem(Dataset("toy", X, sub.y, "classification"), k=3, gamma=gamma, diagonal=True)
    lam_L, K = lambda_max(problem)
    lam = lam_L * 10.0 ** lam_exp
    # the hinge loss (γ = 0) is solved by subgradient steps that rarely meet the tolerance: cap them (78 s otherwise)
    M_star = minimize(problem, lam, K / lam_L, tol=1e-12, max_iter=20_000 if gamma > 0 else 1_000).solution["M"]
    return problem, lam, M_star


def geometry_tab(ds, pp, figures) -> None:
    st.markdown("A diagonal metric on two features lives in the plane; the PSD cone is the non-negative quadrant. "
                "Move the reference point away from the optimum and watch the spheres grow: PGB is GB pulled into "
                "the quadrant, DGB is centred at the reference, and the linear rule's half-plane cuts GB.")
    d = ds.n_features
    cols = st.columns(4)
    f1 = cols[0].selectbox("feature 1", list(range(d)), index=0, key=f"{KEY}.toy_f1")
    f2 = cols[1].selectbox("feature 2", list(range(d)), index=min(1, d - 1), key=f"{KEY}.toy_f2")
    lam_exp = cols[2].slider("log₁₀(λ/λ_max)", -4.0, 0.0, -1.0, 0.5, key=f"{KEY}.toy_lam")
    shift = cols[3].slider("reference point: M* × (1 + shift)", -0.9, 2.0, 0.5, 0.1, key=f"{KEY}.toy_shift")
    if f1 == f2:
        st.info("Pick two different features.")
        return
    problem, lam, M_star = toy_problem(ds.meta["key"], ds, (f1, f2), pp["gamma"], lam_exp)
    t = ui.slider("triplet whose level lines are drawn", 0, problem.n_triplets - 1, 0, key=f"{KEY}.toy_t")
    M = np.maximum(M_star * (1 + shift) + np.array([0.0, 0.1 * shift]) * np.max(M_star), 0.0)
    figures["geometry"] = figs.toy_figure(problem, M_star, M, lam, t)
    st.plotly_chart(figures["geometry"], key=f"{KEY}.toy")


def data_tab(ds, problem) -> None:
    st.markdown(f"**{ds.summary()}** — {ds.description}")
    counts = np.bincount(problem.codes)
    st.markdown(f"Samples used: {problem.X.shape[0]} (per class {counts.tolist()}); triplets {problem.n_triplets:,}; "
                f"distinct pairs {len(problem.triplets.pairs):,}. Features are min–max scaled to [−1, 1] "
                "(LIBSVM's .scale) when *scale* is on.")
    fig = ui.base_figure("First two features (as used)", "feature 0 [scaled]", "feature 1 [scaled]")
    for c in np.unique(problem.codes):
        sel = problem.codes == c
        fig.add_trace(go.Scatter(x=problem.X[sel, 0], y=problem.X[sel, 1] if problem.dim > 1 else np.zeros(sel.sum()),
                                 mode="markers", name=f"class {c}", marker=dict(color=ui.method_color(f"class-{c}"))))
    st.plotly_chart(fig, key=f"{KEY}.data")


ui.run_page(main)

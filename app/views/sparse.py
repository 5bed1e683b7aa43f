"""Sparse ℓ0 (seed 001): PG / APG / PG+ / APG+ vs PG-LL, APG-LL+ and GraSP on ℓ0-constrained LS and logistic."""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from app.ui import figcache
from app.views._presets import PRESETS
from app.views._sparse_algorithm import algorithm_tab
from app.views._sparse_quality import quality_tab
from app.views._sparse_figures import (
    coefficients, extrapolation_steps, objective_gap, residual_with_events, support_changes, sweep_figure, toy_figure,
    toy_figure_3d,
)
from solvers import sparse as fam
from solvers.core import InputError, Param
from solvers.sparse.problem import LOSS_LABELS
from solvers.sweep.family_jobs import sparse_fit_job
from app.ui.sweep import cluster_panel, run_grid

KEY = "sp"
STOPPING = [
    Param("tol", 1e-6, float, low=0, low_strict=True, log=True, symbol=r"\hat\epsilon",
          help="stop when the residual (24) falls below this (paper: 1e-6)", ui_range=(1e-10, 1e-1)),
    Param("max_iter", 2000, int, low=1, high=10_000, log=True, help="iteration cap (paper: 10,000)",
          ui_range=(10, 10_000)),
    Param("time_limit", 10.0, float, low=0.5, high=600.0, help="solver seconds per method", ui_range=(1.0, 120.0)),
]
SPLIT = Param("test_fraction", 0.2, float, low=0.0, high=0.5,
              help="share of rows held out for the test metric (datasets with their own test part keep it)")
KAPPAS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0)  # Fig. 2
TOLERANCES = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # Fig. 5


@st.cache_resource(max_entries=8, show_spinner="Computing L = σ_max(X)²…")
def build_problem(_train, data_key: str, frozen_params: tuple) -> fam.SparseProblem:
    """Problem (1) for these data and settings; cached because L needs a top singular value."""
    return fam.make_problem(_train, **dict(frozen_params))


def summary(results: dict, problem: fam.SparseProblem, test, labels: dict) -> pd.DataFrame:
    """One row per run; objective and residual are the last history row's, i.e. those of the returned w."""
    rows = []
    for label, r in results.items():
        h = r.history
        name, value = fam.prediction_score(problem, test, r.solution["w"])
        status = "stalled" if r.info.get("stalled") and r.status == "stopped" else r.status
        rows.append({"method": label, "status": ("" if r.converged else "* ") + status,
                     "time [s]": round(float(r.info["time"]), 4), "GE": r.info["grad_evals"], "CG": r.info["hess_vec"],
                     "objective": float(h["objective"].iloc[-1]), "residual (24)": float(h["residual"].iloc[-1]),
                     "‖w‖₀": int(np.count_nonzero(r.solution["w"])),
                     "extrapolations": r.info.get("extrapolations", 0), "identified at": identified_at(r.info),
                     f"test {name}": value})
    table = pd.DataFrame(rows)
    pg = table[table["method"] == "PG"]
    if len(pg):  # the paper's speed-up columns (Table 1 ratios), measured side by side in this run
        table["GE PG / method"] = (pg["GE"].iloc[0] / table["GE"]).round(1)
        table["time PG / method"] = (pg["time [s]"].iloc[0] / table["time [s]"].clip(lower=1e-6)).round(1)
    return table


def convergence_figure(name: str, histories: dict, results: dict, labels: dict, tol: float):
    """The Convergence tab's figures: residual vs time and vs gradient evaluations (with the tolerance), the gap."""
    if name == "objective":
        return objective_gap(results, labels)
    x, x_title, title = {"residual_time": ("time", "solver time [s]", "Residual (24) vs time (Figs. 1, 3, 4)"),
                         "residual_ge": ("grad_evals", "gradient evaluations (GE)",
                                         "Residual (24) vs gradient evaluations")}[name]
    fig = ui.line_chart(histories, x, "residual", log_y=True, title=title, x_title=x_title, y_title="residual (24)",
                        color_keys=labels)
    x_end = max(float(np.max(t.x)) for t in fig.data)
    return ui.add_reference(fig, [0.0, x_end], [tol] * 2, "tolerance ε̂")


def identified_at(info: dict) -> str:
    """The iteration where Newton steps began: "—" for a method without a Newton phase, "not reached" if never."""
    if "identified_at" not in info:
        return "—"
    return "not reached" if info["identified_at"] is None else str(info["identified_at"])


def sweep_configs(kind: str, train, problem, problem_params: dict, chosen: list, per_method: dict,
                  stop: dict) -> list[dict]:
    """Fig. 2's cells (method × κ, s = ⌈κm⌉, the κ with s > n left out) or Fig. 5's (method × ε̂ at the page's s)."""
    rounding = problem_params.get("s_rounding", "ceil")
    cells = []
    for value in (KAPPAS if kind == "transition" else TOLERANCES):
        s = fam.sparsity_from_ratio(value, train.n_samples, rounding) if kind == "transition" else problem.s
        if s > train.n_features:
            continue
        for m in chosen:
            cells.append({"method": m, "s": s, "kappa": value if kind == "transition" else None, **stop,
                          "tol": value if kind == "tolerance" else stop["tol"], **per_method[m]})
    return cells


def run_sweep_tab(kind: str, client, train, test, problem, sweep_key: str, cells: list[dict], **button) -> pd.DataFrame | None:
    """The sweep's cells on the sweep executor (app/ui/sweep.py): progress, Stop, the figure filled as they finish."""
    draw = {"transition": lambda t: sweep_figure(t, "s", "time", title="Time vs s (log scale)", x_title="sparsity level s",
                                                 y_title="solver time [s]"),
            "tolerance": lambda t: sweep_figure(t, "tol", "score", title="Test score vs tolerance ε̂", log_x=True,
                                                x_title="tolerance ε̂ on the residual (24)", y_title="test score",
                                                log_y=False)}[kind]
    table = run_grid(sparse_fit_job, cells, key=f"{KEY}.{kind}", cache_key=f"{kind}.{sweep_key}", client=client,
                     data={"problem": problem, "test": test}, figure=lambda t: draw(with_labels(t)),
                     start=st.button(**button))
    return None if table is None or "time" not in table else with_labels(table)


def with_labels(table: pd.DataFrame) -> pd.DataFrame:
    """The figures' columns: ``method`` the label, ``key`` the method's key (its colour)."""
    return table.assign(key=table["method"], method=table["method"].map(lambda m: fam.METHODS[m].label))


def sweeps_tab(train, test, problem, problem_params, chosen, per_method, stop) -> dict:
    figures = {}
    st.markdown("**Transition plot (Fig. 2)**: solver time and gradient evaluations as s = ⌈κm⌉ grows, "
                f"κ ∈ {{{', '.join(f'{k:g}' for k in KAPPAS)}}} (values with s > n are skipped).")
    sweep_key = ui.config_key(KEY, problem_params, chosen, per_method, stop, train.n_samples, train.n_features)
    X = train.as_vectors()
    sweep_cost = ui.sparse_cost(X.nnz if hasattr(X, "nnz") else X.size, train.n_samples, train.n_features,
                                max_iter=stop["max_iter"], time_limit=stop["time_limit"], methods=chosen,
                                fits=len(KAPPAS), loss=problem_params["loss"])
    if ui.refused(sweep_cost):
        return figures
    client = cluster_panel()  # one sidebar panel for both sweeps
    cells = sweep_configs("transition", train, problem, problem_params, chosen, per_method, stop)
    table = run_sweep_tab("transition", client, train, test, problem, sweep_key, cells,
                          label="Run transition sweep", key=f"{KEY}.sweep_transition")
    if table is not None:
        figures["transition_time"] = sweep_figure(table, "s", "time", title="Time vs s (log scale)",
                                                  x_title="sparsity level s", y_title="solver time [s]")
        st.plotly_chart(figures["transition_time"], key=f"{KEY}.tr_time")
        figures["transition_ge"] = sweep_figure(table, "s", "GE", title="Gradient evaluations vs s",
                                                x_title="sparsity level s", y_title="GE")
        st.plotly_chart(figures["transition_ge"], key=f"{KEY}.tr_ge")
    st.markdown("**Prediction vs tolerance (Fig. 5)**: test accuracy (logistic) or MSE (LS) when each method "
                "stops at ε̂ = 10⁻¹ … 10⁻⁶. Needs a test part (a test fraction above 0).")
    cells = sweep_configs("tolerance", train, problem, problem_params, chosen, per_method, stop)
    table = run_sweep_tab("tolerance", client, train, test, problem, sweep_key, cells, label="Run tolerance sweep",
                          key=f"{KEY}.sweep_tol", disabled=test is None or test.n_samples == 0)
    if table is not None and "score" in table:
        metric = table["metric"].dropna().iloc[0]
        figures["tolerance"] = sweep_figure(table, "tol", "score", title=f"Test {metric} vs tolerance ε̂",
                                            x_title="tolerance ε̂ on the residual (24)", y_title=f"test {metric}",
                                            log_x=True, log_y=False)
        figures["tolerance"].update_xaxes(autorange="reversed")
        st.plotly_chart(figures["tolerance"], key=f"{KEY}.tol_fig")
    return figures


def toy_paths(problem: fam.SparseProblem, steps: int) -> tuple[dict, dict]:
    """The points zᵏ (from w⁰ = 0) that PG, APG and APG+ visit in their first ``steps`` iterations."""
    paths, keys = {}, {}
    for m in ("pg", "apg", "apg+"):
        pts = [np.zeros(problem.n)]
        for k in range(1, steps + 1):  # a run of k iterations returns zᵏ
            r = fam.solve(problem, m, tol=1e-12, max_iter=k)
            pts.append(r.solution["w"])
            if r.status == "converged":
                break
        paths[fam.METHODS[m].label] = np.array(pts)
        keys[fam.METHODS[m].label] = m
    return paths, keys


def toy_tab() -> None:
    st.markdown("Least squares f(w) = ½‖Xw − y‖² on a union of coordinate subspaces. PG hops between "
                "subspaces until the support settles (Thm 2.1 b); APG then extrapolates inside the subspace "
                "and APG+ finishes with a Newton step.")
    c1, c2, c3, c4 = st.columns(4)
    dim = ui.choice("space", ["2-D, s = 1", "3-D, s = 1", "3-D, s = 2"], key=f"{KEY}.toy_dim", widget="radio",
                    container=c1)
    rho = ui.slider("feature correlation ρ", -0.95, 0.95, 0.8, 0.05, key=f"{KEY}.toy_rho", container=c2)
    angle = ui.slider("direction of y [degrees]", 0, 180, 105, 5, key=f"{KEY}.toy_angle", container=c3)
    steps = ui.slider("iterations shown", 1, 40, 15, key=f"{KEY}.toy_steps", container=c4)
    direction = np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))])
    if dim.startswith("2-D"):
        # feature 1 is 1.5× longer, so the first gradient step favours it even when axis 2 fits better
        X = np.array([[1.5, rho], [0.0, np.sqrt(1 - rho * rho)]])
        y = 2.0 * direction
        st.plotly_chart(figcache.cached("sp.toy", (dim, rho, angle, steps), lambda: toy_figure(
            X, y, *toy_paths(fam.SparseProblem(X, y, loss="ls", s=1), steps))), key=f"{KEY}.toy")
        return
    X = np.linalg.cholesky(np.array([[1.0, rho, rho**2], [rho, 1.0, rho], [rho**2, rho, 1.0]])).T  # XᵀX = Toeplitz
    y = 2.0 * np.r_[direction * 0.8, 0.6]
    s = int(dim[-1])
    st.plotly_chart(figcache.cached("sp.toy3d", (dim, rho, angle, steps), lambda: toy_figure_3d(
        *toy_paths(fam.SparseProblem(X, y, loss="ls", s=s), steps), s)), key=f"{KEY}.toy3d")


def main() -> None:
    ui.page_header(fam.TITLE, fam.PAPER,
                   "Pick data, a loss and s, then compare PG with the paper's accelerations: extrapolation inside "
                   "a subspace (APG) and Newton steps once the support is identified (APG+). Watch the residual "
                   "(24) against time and gradient evaluations, the support settling, and the final coefficients.")
    ui.preset_buttons(PRESETS["sparse"], key=KEY)
    side = st.sidebar
    side.header("Data")
    ds = ui.dataset_picker("sparse", key=f"{KEY}.data", bundled=("diabetes", "breast_cancer"),
                           sources=("synthetic", "real", "bundled", "upload"))
    if ds is None:
        return
    split = ui.param_form([SPLIT], key=f"{KEY}.split", container=side)
    side.header("Problem")
    problem_params = ui.param_form(fam.PROBLEM_PARAMS, key=f"{KEY}.problem", container=side)
    side.header("Methods")
    chosen = ui.method_picker(fam.METHODS, key=f"{KEY}.methods", default=["pg", "apg", "apg+"], container=side)
    per_method = ui.method_params(fam.METHODS, chosen, key=f"{KEY}.m", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    X = ds.as_vectors()
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    cost = ui.sparse_cost(nnz, ds.n_samples, ds.n_features, max_iter=stop["max_iter"], time_limit=stop["time_limit"],
                          methods=chosen, loss=problem_params["loss"])
    execute = ui.run_controls(KEY, live_default=nnz <= 2_000_000, cost=cost)
    if not chosen:
        st.info("Pick at least one method in the sidebar.")
        return
    train, test = fam.train_test(ds, split["test_fraction"])
    if train.n_samples < 2:
        raise InputError("the training part has fewer than 2 rows; lower the test fraction")
    data_key = (ds.meta["key"], split["test_fraction"])
    labels = {fam.METHODS[m].label: m for m in chosen}
    jobs = [ui.Job(fam.METHODS[m].label, ui.config_key(KEY, data_key, problem_params, m, per_method[m], stop),
                   lambda cb, m=m: fam.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
            for m in chosen]
    if ui.awaiting_run([job.key for job in jobs], key=KEY, execute=execute):
        return
    problem = build_problem(train, ui.config_key(data_key), tuple(sorted(problem_params.items())))
    results = ui.run_live(jobs, ui.LiveSpec(y="residual", y_title="residual (24)", x="time", x_title="solver time [s]",
                                            tol=stop["tol"], max_iter=stop["max_iter"]), key=KEY, execute=execute)
    tabs = ui.view_tabs(["Convergence", "Support & steps", "Solution", "Subset quality", "Sweeps", "Toy 2-D", "Data",
                         "Algorithm", "Export"], key=f"{KEY}.view")
    drawn = ui.tabs_to_draw(tabs, export=8)
    figures = {}
    histories = {k: r.history for k, r in results.items()}
    shown = (figcache.shown(results, jobs), labels, stop["tol"])
    if drawn[0]:
        with tabs[0]:
            if results:
                for name in ("residual_time", "residual_ge", "objective"):
                    figures[name] = figcache.cached(f"sp.{name}", shown, lambda name=name: convergence_figure(
                        name, histories, results, labels, stop["tol"]))
                    st.plotly_chart(figures[name], key=f"{KEY}.{name}")
                st.dataframe(figcache.cached("sp.summary", (shown, data_key), lambda: summary(
                    results, problem, test, labels)), hide_index=True)
                st.caption(f"L = {problem.L:.4g}, λ = {problem.lam:.3g}, s = {problem.s}, m = {problem.m}, n = {problem.n}. "
                           f"‘*’: the run ended with the residual (24) above ε̂ = {stop['tol']:g}, at the cap of "
                           f"{stop['max_iter']:,} iterations or {stop['time_limit']:g} s, or stalled (GraSP made no more "
                           "progress); the paper marks its 10,000-iteration cap the same way. ‘identified at’: the "
                           "iteration of the first Newton step, ‘—’ for a method without Newton steps.")
    if drawn[1]:
        with tabs[1]:
            if results:
                for name, build in (("events", residual_with_events), ("support", support_changes),
                                    ("t_steps", extrapolation_steps)):
                    figures[name] = figcache.cached(f"sp.{name}", shown, lambda build=build: build(results, labels))
                    st.plotly_chart(figures[name], key=f"{KEY}.{name}")
    if drawn[2]:
        with tabs[2]:
            if results:
                figures["coefficients"] = figcache.cached("sp.coefficients", (shown, ds.meta["key"]), lambda: coefficients(
                    results, labels, ds.meta.get("w_true")))
                st.plotly_chart(figures["coefficients"], key=f"{KEY}.coef")
                if ds.meta.get("w_true") is not None:
                    truth = set(np.flatnonzero(ds.meta["w_true"]).tolist())
                    st.dataframe(pd.DataFrame([{"method": k, "true features found": len(truth & set(r.solution["support"].tolist())),
                                                "of": len(truth)} for k, r in results.items()]), hide_index=True)
    if drawn[3]:
        with tabs[3]:
            figures.update(quality_tab(problem, stop, ds.meta.get("w_true"), KEY, ui.config_key(data_key, problem_params)))
    if drawn[4]:
        with tabs[4]:
            figures.update(sweeps_tab(train, test, problem, problem_params, chosen, per_method, stop))
    if drawn[5]:
        with tabs[5]:
            toy_tab()
    if drawn[6]:
        with tabs[6]:
            st.markdown(f"**{ds.name}**: {ds.description or ds.summary()}")
            kind = f"sparse CSR, {nnz} nonzeros ({nnz / max(1, X.shape[0] * X.shape[1]):.2%})" if hasattr(X, "nnz") else "dense"
            st.markdown(f"{train.n_samples} training rows, {0 if test is None else test.n_samples} test rows, "
                        f"{ds.n_features} features; X is {kind}. Loss: {LOSS_LABELS[problem.loss]}.")
    if drawn[7]:
        with tabs[7]:
            algorithm_tab()
    if drawn[8]:
        with tabs[8]:
            ui.export_panel(histories, figures, key="sparse",
                            config={"data": ds.meta["key"], "problem": problem_params, "methods": per_method, "stopping": stop})


ui.run_page(main)

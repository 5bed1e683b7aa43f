"""Foundations: gradient descent, heavy ball and Nesterov/FISTA, projected or not, on 2-D problems."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import ui
from app.ui import figcache
from app.views import _foundations_figures as figs
from app.views._presets import PRESETS
from solvers import foundations as fd
from solvers.core import InputError, Param
from solvers.datasets import Dataset

KEY = "fd"
STOPPING = [
    Param("tol", 1e-8, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon",
          help="stop when the gradient mapping ‖x − P(x − ∇f/L)‖·L falls below this", ui_range=(1e-12, 1e-2)),
    Param("max_iter", 200, int, low=1, high=5000, log=True, help="iteration cap", ui_range=(10, 5000)),
]
# the page's one step and one momentum control (every method's step; heavy ball's β), on 0.05 / 0.01 steps
STEP_CONTROL = Param("step", 1.0, float, low=0.05, high=3.0, symbol=r"\alpha L", ui_range=(0.05, 3.0),
                     help="every method steps by α = (this)/L; on a quadratic gradient descent diverges above 2/L")
BETA_CONTROL = Param("beta", 0.5, float, low=0.0, high=0.99, symbol=r"\beta", ui_range=(0.0, 0.99),
                     help="heavy ball: x⁺ = x − α∇f(x) + β(x − x⁻); β = 0 is gradient descent")
CONSTRAINT_TEXT = {
    "none": r"\mathbb{R}^2",
    "box": r"[-1.5,\,0.5]\times[-0.5,\,2.5]",
    "l0": r"\{x : \|x\|_0 \le 1\}\ \text{(the two axes)}",
    "capped-simplex": r"\{x : x_1 + x_2 = 1,\ 0 \le x \le 1\}",
}


def check_planar(ds: Dataset) -> None:
    if ds.n_features != 2:
        raise InputError(f"{ds.name} has {ds.n_features} features; the plane needs exactly 2")
    if ds.task != "classification" or len(ds.classes) != 2:
        raise InputError(f"{ds.name} needs two classes for logistic regression")


def gap_figure(problem: fd.Problem2D, results: dict, labels: dict, max_iter: int) -> go.Figure:
    histories = {k: r.history for k, r in results.items()}
    fig = ui.line_chart(histories, "iter", "gap", log_y=True, title="Objective gap f(xₖ) − f* (log scale)",
                        x_title="iteration k", y_title="f(xₖ) − f*", color_keys=labels)
    if problem.convex:
        # The classical bounds for convex L-smooth f with step 1/L (Beck & Teboulle 2009, Thms 3.1 and 4.4).
        k = np.arange(1, max_iter + 1)
        r0 = float(np.sum((problem.project(problem.x0) - problem.x_star) ** 2))
        ui.add_reference(fig, k, problem.L * r0 / (2 * k), "O(1/k): L‖x₀−x*‖²/(2k)")
        ui.add_reference(fig, k, 2 * problem.L * r0 / (k + 1) ** 2, "O(1/k²): 2L‖x₀−x*‖²/(k+1)²", dash="dash")
    return fig


def algorithm_tab(constraint: str) -> None:
    st.markdown(f"Every method minimises $f$ over $C = {CONSTRAINT_TEXT[constraint]}$ with step "
                r"$\alpha = \text{step}/L$ and the projection $P_C$ after each step.")
    st.markdown("**Projected gradient**")
    st.latex(r"x_{k+1} = P_C\big(x_k - \alpha \nabla f(x_k)\big)")
    st.markdown("**Heavy ball** (Polyak): a constant momentum β")
    st.latex(r"x_{k+1} = P_C\big(x_k - \alpha \nabla f(x_k) + \beta (x_k - x_{k-1})\big)")
    st.markdown("**Nesterov / FISTA**: the momentum sequence the seeds' APG methods use")
    st.latex(r"t_{k+1} = \tfrac{1 + \sqrt{1 + 4t_k^2}}{2},\quad y_k = x_k + \tfrac{t_k - 1}{t_{k+1}}(x_k - x_{k-1}),"
             r"\quad x_{k+1} = P_C\big(y_k - \alpha \nabla f(y_k)\big)")
    st.markdown("**Stopping**: the gradient mapping, zero exactly at stationary points of the constrained problem")
    st.latex(r"G(x) = L\,\big\|x - P_C\big(x - \nabla f(x)/L\big)\big\| \le \varepsilon")
    st.markdown("For convex $f$ with $\\alpha = 1/L$: $f(x_k) - f^* \\le L\\|x_0 - x^*\\|^2/(2k)$ for projected "
                "gradient and $\\le 2L\\|x_0 - x^*\\|^2/(k+1)^2$ for FISTA, drawn as guides on the gap chart. "
                "The ℓ0 ball is not convex: there the methods reach a stationary point that may not be the "
                "global minimiser $x^*$ (found here by brute force over both axes).")


def stopping_specs(problem_name: str) -> list[Param]:
    """Rosenbrock's L (the largest Hessian norm over the window) makes α = 1/L tiny: 2000 iterations by default."""
    if problem_name != "rosenbrock":
        return STOPPING
    return [STOPPING[0], dataclasses.replace(STOPPING[1], default=2000)]


def follow_problem_default(problem_name: str) -> None:
    """A change of objective moves the iteration cap to the new objective's default, unless the user changed it."""
    state, cap = st.session_state, f"{KEY}.stop.max_iter"
    previous = state.get(f"{KEY}.shown_problem")
    state[f"{KEY}.shown_problem"] = problem_name
    if previous is None or previous == problem_name or cap not in state:
        return
    if state[cap] == stopping_specs(previous)[1].default:
        state[cap] = stopping_specs(problem_name)[1].default


def set_start_from_click() -> None:
    """The iterate plot's click (a point of its invisible start grid) moves the start sliders."""
    selection = st.session_state.get(f"{KEY}.contour")
    points = (selection or {}).get("selection", {}).get("points", [])
    if len(points) == 1 and "x" in points[0] and "y" in points[0]:
        st.session_state[f"{KEY}.problem.x0"] = float(np.clip(points[0]["x"], *fd.WINDOW[0]))
        st.session_state[f"{KEY}.problem.y0"] = float(np.clip(points[0]["y"], *fd.WINDOW[1]))


def set_beta(value: float) -> None:
    st.session_state[f"{KEY}.beta"] = value


def momentum_controls(box, problem_name: str, kappa: float) -> tuple[float, float]:
    """The one step-size and one momentum slider of the page, with the thresholds they teach."""
    step = ui.param_widget(STEP_CONTROL, key=f"{KEY}.step", container=box)
    beta = ui.param_widget(BETA_CONTROL, key=f"{KEY}.beta", container=box)
    if step > 2:
        box.warning(f"α·L = {step:.2f} > 2: beyond gradient descent's divergence threshold 2/L.")
    else:
        box.caption(f"α·L = {step:.2f} ≤ 2 (gradient descent diverges above 2/L).")
    if problem_name == "quadratic":
        best = figs.heavy_ball_beta_star(step, kappa)
        alpha_opt, beta_opt = figs.polyak_optimum(kappa)
        box.markdown(f"Optimal β at this step for κ = {kappa:g}: **β\\* = {best:.3f}** "
                     f"(rate √β\\* = {math.sqrt(best):.3f} per step). Polyak's best pair: α·L = {alpha_opt:.2f}, "
                     f"β = {beta_opt:.2f}.")
        # rounded up to the slider's 0.01 steps: below β* the slowest mode's roots turn real and its rate jumps
        box.button("Use β*", key=f"{KEY}.use_beta_star", on_click=set_beta, args=(min(math.ceil(best * 100) / 100, 0.99),),
                   help="set the β slider to β* (rounded up to its 0.01 steps)")
    return step, beta


def main() -> None:
    ui.page_header(fd.TITLE, fd.PAPER,
                   "Move the step size α and the momentum β next to the plot and watch the paths and the gap "
                   "change; click the plot to start somewhere else; ▶ Play replays the iterations. "
                   "Projection onto a box, the ℓ0 ball (sparse vectors, as in the Sparse page) or the capped "
                   "simplex (the Multi-task page's eigenvalue set) turns each method into its projected version.")
    ui.preset_buttons(PRESETS["foundations"], key=KEY)
    side = st.sidebar
    side.header("Problem")
    # show only the settings the chosen objective uses (κ for the quadratic, μ for logistic regression)
    unused = {"quadratic": {"mu"}, "rosenbrock": {"kappa", "mu"}, "logistic": {"kappa"}}
    problem_spec = next(p for p in fd.PROBLEM_PARAMS if p.name == "problem")
    problem_name = ui.param_widget(problem_spec, key=f"{KEY}.problem.problem", container=side)
    shown = [p for p in fd.PROBLEM_PARAMS
             if p.name not in {"problem", "x0", "y0"} and p.name not in unused[problem_name]]
    pp = {"problem": problem_name, **ui.param_form(shown, key=f"{KEY}.problem", container=side)}
    ds = None
    if pp["problem"] == "logistic":
        ds = ui.dataset_picker("foundations", key=f"{KEY}.data", sources=("synthetic", "upload"), check=check_planar)
        if ds is None:
            return
    side.header("Methods")
    chosen = ui.method_picker(fd.METHODS, key=f"{KEY}.methods", default=list(fd.METHODS), container=side)
    follow_problem_default(problem_name)
    stop = ui.param_form(stopping_specs(problem_name), key=f"{KEY}.stop", container=side)
    execute = ui.run_controls(KEY, live_default=True, cost=ui.foundations_cost(len(chosen), stop["max_iter"]))
    tabs = ui.view_tabs(["Iterates", "Convergence", "Algorithm", "Export"], key=f"{KEY}.view")
    drawn = ui.tabs_to_draw(tabs, always=(0,), export=3)  # the Iterates tab holds the step, β and start controls
    with tabs[0]:
        chart_col, control_col = st.columns([3, 1])
    step, beta = momentum_controls(control_col, problem_name, pp.get("kappa", 1.0))
    control_col.markdown("**Start point** (or click the plot)")
    start = {p.name: ui.param_widget(p, key=f"{KEY}.problem.{p.name}", container=control_col)
             for p in fd.PROBLEM_PARAMS if p.name in ("x0", "y0")}
    pp.update(start)
    per_method = {m: {"step": step, **({"beta": beta} if m == "heavy-ball" else {})} for m in chosen}
    if not chosen:
        chart_col.info("Pick at least one method in the sidebar.")
        return
    problem = fd.make_problem(ds, **pp)  # unused settings keep make_problem's defaults
    data_key = ds.meta["key"] if ds is not None else None
    problem_key = ui.config_key(KEY, data_key, pp)
    methods = {fd.METHODS[m].label: m for m in chosen}
    jobs = [ui.Job(fd.METHODS[m].label, ui.config_key(KEY, data_key, pp, m, per_method[m], stop),
                   lambda cb, m=m: fd.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
            for m in chosen]
    with chart_col:
        results = ui.run_live(jobs, ui.LiveSpec(y="gap", y_title="f(xₖ) − f*", tol=None, max_iter=stop["max_iter"]),
                              key=KEY, execute=execute)
    figures = {}
    note = f"α = {step:.2f}/L" + (f", β = {beta:.2f}" if "heavy-ball" in chosen else "")
    shown = (problem_key, figcache.shown(results, jobs), methods, stop["max_iter"])
    figures["iterates"] = figcache.cached("fd.iterates", (shown, note), lambda: figs.iterates_figure(
        problem, problem_key, results, methods, note))
    with chart_col:
        st.plotly_chart(figures["iterates"], key=f"{KEY}.contour", on_select=set_start_from_click,
                        selection_mode="points")
        st.caption(f"L = {problem.L:.4g}{' (largest Hessian norm over the window)' if pp['problem'] == 'rosenbrock' else ''}; "
                   f"f* = {problem.f_star:.6g} at x* = ({problem.x_star[0]:.4f}, {problem.x_star[1]:.4f}). "
                   "Gradient descent is the wide translucent line, heavy ball dashed, Nesterov dotted.")
    if drawn[1]:
        with tabs[1]:
            figures["gap"] = figcache.cached("fd.gap", shown, lambda: gap_figure(problem, results, methods,
                                                                              stop["max_iter"]))
            st.plotly_chart(figures["gap"], key=f"{KEY}.gap")
            figures["grad_map"] = figcache.cached("fd.grad_map", shown, lambda: ui.line_chart(
                {k: r.history for k, r in results.items()}, "iter", "grad_map", log_y=True,
                title="Gradient mapping (the stopping measure)", x_title="iteration k", y_title="L‖x − P(x − ∇f/L)‖",
                color_keys=methods))
            st.plotly_chart(figures["grad_map"], key=f"{KEY}.gm")
            if results:
                st.dataframe(ui.summary_table(results, "grad_map"), hide_index=True)
    if drawn[2]:
        with tabs[2]:
            algorithm_tab(pp["constraint"])
    if drawn[3]:
        with tabs[3]:
            ui.export_panel({k: r.history for k, r in results.items()}, figures, key="foundations",
                            config={"problem": pp, "methods": per_method, "stopping": stop})


ui.run_page(main)

"""Foundations: gradient descent, heavy ball and Nesterov/FISTA, projected or not, on 2-D problems."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app import ui
from solvers import foundations as fd
from solvers.core import InputError, Param
from solvers.datasets import Dataset

KEY = "fd"
STOPPING = [
    Param("tol", 1e-8, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon",
          help="stop when the gradient mapping ‖x − P(x − ∇f/L)‖·L falls below this", ui_range=(1e-12, 1e-2)),
    Param("max_iter", 200, int, low=1, high=5000, log=True, help="iteration cap", ui_range=(10, 5000)),
]
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


def contour_figure(problem: fd.Problem2D, results: dict, labels: dict) -> go.Figure:
    (x_lo, x_hi), (y_lo, y_hi) = fd.WINDOW
    xs, ys = np.linspace(x_lo, x_hi, 140), np.linspace(y_lo, y_hi, 140)
    Z = np.array([[problem.f(np.array([a, b])) for a in xs] for b in ys])
    fig = ui.base_figure("Iterates on the level sets of f", "x₁", "x₂", height=560)
    fig.add_trace(go.Contour(x=xs, y=ys, z=np.log10(Z - Z.min() + 1e-3), colorscale="Blues", reversescale=True,
                             ncontours=30, showscale=True, colorbar=dict(title="log₁₀(f − min f)"),
                             contours=dict(coloring="heatmap"), name="f", hoverinfo="skip", opacity=0.85))
    line = dict(color="#444444", width=3)
    if problem.constraint == "box":
        (bx0, bx1), (by0, by1) = fd.BOX
        fig.add_shape(type="rect", x0=bx0, x1=bx1, y0=by0, y1=by1, line=line)
    elif problem.constraint == "l0":
        fig.add_trace(go.Scatter(x=[x_lo, x_hi], y=[0, 0], mode="lines", line=line, name="feasible set"))
        fig.add_trace(go.Scatter(x=[0, 0], y=[y_lo, y_hi], mode="lines", line=line, showlegend=False))
    elif problem.constraint == "capped-simplex":
        fig.add_trace(go.Scatter(x=[1, 0], y=[0, 1], mode="lines", line=line, name="feasible set"))
    for label, r in results.items():
        h = r.history
        fig.add_trace(go.Scatter(x=h["x"], y=h["y"], name=label, mode="lines+markers",
                                 line=ui.method_line(labels[label]), marker=ui.method_marker(labels[label])))
    fig.add_trace(go.Scatter(x=[problem.x_star[0]], y=[problem.x_star[1]], mode="markers", name="minimiser x*",
                             marker=dict(symbol="star", size=16, color="gold", line=dict(color="black", width=1))))
    fig.update_xaxes(range=[x_lo, x_hi], constrain="domain")
    fig.update_yaxes(range=[y_lo, y_hi], scaleanchor="x")
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.12, x=0))
    return fig


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


def main() -> None:
    ui.page_header(fd.TITLE, fd.PAPER,
                   "Move the step-size and momentum sliders and watch the iterates and the gap change. "
                   "Projection onto a box, the ℓ0 ball (seed 001) or the capped simplex (seed 000) turns each "
                   "method into its projected version.")
    side = st.sidebar
    side.header("Problem")
    # show only the settings the chosen objective uses (κ for the quadratic, μ for logistic regression)
    unused = {"quadratic": {"mu"}, "rosenbrock": {"kappa", "mu"}, "logistic": {"kappa"}}
    problem_spec = next(p for p in fd.PROBLEM_PARAMS if p.name == "problem")
    problem_name = ui.param_widget(problem_spec, key=f"{KEY}.problem.problem", container=side)
    shown = [p for p in fd.PROBLEM_PARAMS if p.name != "problem" and p.name not in unused[problem_name]]
    pp = {"problem": problem_name, **ui.param_form(shown, key=f"{KEY}.problem", container=side)}
    ds = None
    if pp["problem"] == "logistic":
        ds = ui.dataset_picker("foundations", key=f"{KEY}.data", sources=("synthetic", "upload"), check=check_planar)
        if ds is None:
            return
    side.header("Methods")
    chosen = ui.method_picker(fd.METHODS, key=f"{KEY}.methods", default=list(fd.METHODS), container=side)
    per_method = ui.method_params(fd.METHODS, chosen, key=f"{KEY}.m", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    execute = ui.run_controls(KEY, live_default=True)
    if not chosen:
        st.info("Pick at least one method in the sidebar.")
        return
    problem = fd.make_problem(ds, **pp)  # unused settings keep make_problem's defaults
    data_key = ds.meta["key"] if ds is not None else None
    labels = {fd.METHODS[m].label: m for m in chosen}
    jobs = [ui.Job(fd.METHODS[m].label, ui.config_key(KEY, data_key, pp, m, per_method[m], stop),
                   lambda cb, m=m: fd.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
            for m in chosen]
    results = ui.run_live(jobs, ui.LiveSpec(y="gap", y_title="f(xₖ) − f*", tol=None, max_iter=stop["max_iter"]),
                          key=KEY, execute=execute)
    tabs = ui.view_tabs(["Iterates", "Convergence", "Algorithm", "Export"], key=f"{KEY}.view")
    figures = {}
    with tabs[0]:
        figures["iterates"] = contour_figure(problem, results, labels)
        st.plotly_chart(figures["iterates"], key=f"{KEY}.contour")
        st.caption(f"L = {problem.L:.4g}{' (largest Hessian norm over the window)' if pp['problem'] == 'rosenbrock' else ''}; "
                   f"f* = {problem.f_star:.6g} at x* = ({problem.x_star[0]:.4f}, {problem.x_star[1]:.4f}).")
    with tabs[1]:
        figures["gap"] = gap_figure(problem, results, labels, stop["max_iter"])
        st.plotly_chart(figures["gap"], key=f"{KEY}.gap")
        figures["grad_map"] = ui.line_chart({k: r.history for k, r in results.items()}, "iter", "grad_map",
                                            log_y=True, title="Gradient mapping (the stopping measure)",
                                            x_title="iteration k", y_title="L‖x − P(x − ∇f/L)‖", color_keys=labels)
        st.plotly_chart(figures["grad_map"], key=f"{KEY}.gm")
        if results:
            st.dataframe(ui.summary_table(results, "grad_map"), hide_index=True)
    with tabs[2]:
        algorithm_tab(pp["constraint"])
    with tabs[3]:
        ui.export_panel({k: r.history for k, r in results.items()}, figures, key="foundations",
                        config={"problem": pp, "methods": per_method, "stopping": stop})


ui.run_page(main)

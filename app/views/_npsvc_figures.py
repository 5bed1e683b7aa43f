"""Figures of the NPSVC++ page (seed 004): Fig. 2 convergence, Pareto weights, Fig. A.4 radar,
Fig. 3 embeddings, decision regions, Fig. 4 ablation and Figs. A.2–A.3 sensitivity."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app import ui

CLASS_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
                "#882255", "#44AA99"]


def class_color(code: int) -> str:
    return CLASS_COLORS[code % len(CLASS_COLORS)]


def convergence_figure(histories: dict[str, pd.DataFrame], labels: dict[str, str]) -> go.Figure:
    """Fig. 2: primal max_l J_l (solid) and dual τᵀJ (dashed) on a log axis, test accuracy on the right."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for label, h in histories.items():
        color = ui.method_color(labels.get(label, label))
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["primal"]), name=f"{label}: primal max J",
                                 line=dict(color=color, width=2)), secondary_y=False)
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["dual"]), name=f"{label}: dual τᵀJ",
                                 line=dict(color=color, width=2, dash="dash")), secondary_y=False)
        scored = h[h["test_acc"].notna()]  # TWSVM scores only when one of its duals is solved (baselines.run_twsvm)
        if len(scored):
            fig.add_trace(go.Scatter(x=scored["iter"], y=100 * scored["test_acc"], name=f"{label}: test accuracy",
                                     line=dict(color=color, width=1.5, dash="dot")), secondary_y=True)
    fig.update_layout(title="Primal (8), dual (9) and test accuracy (Fig. 2)", height=440,
                      margin=dict(l=60, r=60, t=50, b=50), legend=dict(orientation="h", y=-0.2))
    fig.update_xaxes(title_text="iteration (kernel; TWSVM: QP iterations over all classes) or epoch (deep)")
    fig.update_yaxes(title_text="objective J (log)", type="log", exponentformat="power", secondary_y=False)
    fig.update_yaxes(title_text="test accuracy [%]", range=[0, 101], showgrid=False, tickmode="linear", tick0=0,
                     dtick=20, secondary_y=True)
    return fig


def tau_area(history: pd.DataFrame, class_names: list[str], title: str) -> go.Figure:
    """Pareto weights τ over iterations as a stacked area (they sum to 1)."""
    layout = ui.figure_layout(title, "iteration / epoch", "Pareto weight τ_l (stacked, sums to 1)")
    layout["yaxis"]["range"] = [0, 1]
    layout["legend"]["title_text"] = "class"
    iters = history["iter"].to_numpy()
    # traces as dicts, validated once with the figure: one add_trace per class cost a validation each
    return go.Figure(data=[dict(type="scatter", x=iters, y=history[f"tau_{l}"].to_numpy(), name=f"class {name}",
                                mode="lines", stackgroup="tau", line=dict(width=0.5, color=class_color(l)))
                           for l, name in enumerate(class_names)], layout=layout)


def class_objectives(history: pd.DataFrame, class_names: list[str], title: str) -> go.Figure:
    """Each class's J_l with the maximum (the primal of eq. 8) drawn thick."""
    layout = ui.figure_layout(title, "iteration / epoch", "per-class objective J_l (log)", log_y=True)
    layout["legend"]["title_text"] = "objective"
    iters = history["iter"].to_numpy()
    traces = [dict(type="scatter", x=iters, y=ui.positive(history[f"J_{l}"]), name=f"J for class {name}", mode="lines",
                   line=dict(width=1.2, color=class_color(l))) for l, name in enumerate(class_names)]
    traces.append(dict(type="scatter", x=iters, y=ui.positive(history["primal"]), name="max_l J_l", mode="lines",
                       line=dict(width=4, color="rgba(0,0,0,0.45)")))
    return go.Figure(data=traces, layout=layout)


def radar(histories: dict[str, pd.DataFrame], labels: dict[str, str], class_names: list[str], row: int,
          log: bool) -> go.Figure:
    """Fig. A.4: per-class objectives of two runs at the same iteration/epoch on a radar chart."""
    fig = go.Figure()
    theta = [f"class {n}" for n in class_names]
    for label, h in histories.items():
        r = h.iloc[min(row, len(h) - 1)][[f"J_{l}" for l in range(len(class_names))]].to_numpy(float)
        r = np.log10(np.maximum(r, 1e-16)) if log else r
        color = ui.method_color(labels.get(label, label))
        fig.add_trace(go.Scatterpolar(r=np.r_[r, r[:1]], theta=theta + theta[:1], name=label, fill="toself",
                                      opacity=0.55, line=dict(color=color)))
    what = "log₁₀ J_l" if log else "J_l"
    fig.update_layout(title=f"Per-class objectives {what} at iteration/epoch {row} (Fig. A.4)", height=460,
                      polar=dict(radialaxis=dict(title=what)))
    return fig


def embedding_figure(points: np.ndarray, codes: np.ndarray, class_names: list[str], title: str,
                     axis: str) -> go.Figure:
    fig = ui.base_figure(title, f"{axis} 1", f"{axis} 2", height=440)
    for l, name in enumerate(class_names):
        mask = codes == l
        fig.add_trace(go.Scatter(x=points[mask, 0], y=points[mask, 1], mode="markers", name=f"class {name}",
                                 marker=dict(size=5, color=class_color(l), opacity=0.8)))
    fig.update_layout(legend_title_text="class")
    return fig


def regions_figure(xs: np.ndarray, ys: np.ndarray, grid_codes: np.ndarray, grid_scores: np.ndarray | None,
                   X: np.ndarray, codes: np.ndarray, class_names: list[str], title: str) -> go.Figure:
    """Decision regions on a grid, the zero level sets f_l = 0 (the K nonparallel hyperplanes) and the data."""
    fig = ui.base_figure(title, "x₁ (standardised)", "x₂ (standardised)", height=420)
    K = len(class_names)
    scale = [[i / max(K - 1, 1), class_color(i)] for i in range(K)]
    fig.add_trace(go.Heatmap(x=xs, y=ys, z=grid_codes.reshape(len(ys), len(xs)), colorscale=scale, zmin=0,
                             zmax=max(K - 1, 1), showscale=False, opacity=0.25, hoverinfo="skip"))
    if grid_scores is not None:
        for l in range(K):
            fig.add_trace(go.Contour(x=xs, y=ys, z=grid_scores[:, l].reshape(len(ys), len(xs)), showscale=False,
                                     contours=dict(start=0, end=0, size=1, coloring="lines"), hoverinfo="skip",
                                     line=dict(width=2.5, color=class_color(l)), colorscale=[[0, class_color(l)],
                                                                                            [1, class_color(l)]],
                                     name=f"f = 0, class {class_names[l]}", showlegend=True))
    for l, name in enumerate(class_names):
        mask = codes == l
        fig.add_trace(go.Scatter(x=X[mask, 0], y=X[mask, 1], mode="markers", name=f"class {name}",
                                 marker=dict(size=6, color=class_color(l), line=dict(color="white", width=0.5))))
    fig.update_xaxes(range=[xs[0], xs[-1]])
    fig.update_yaxes(range=[ys[0], ys[-1]])
    fig.update_layout(legend=dict(orientation="h", y=-0.2), legend_title_text="")
    return fig


def ablation_figure(histories: dict[str, pd.DataFrame]) -> go.Figure:
    """Fig. 4: test accuracy per epoch of the three hypotheses, dashed lines at the final values."""
    fig = ui.base_figure("Ablation of the hypothesis f = wᵀφ + vᵀz (Fig. 4)", "epoch", "test accuracy [%]")
    palette = {"full: wᵀφ + vᵀz": "#CC0033", "z only: vᵀz": "#0072B2", "φ only: wᵀφ": "#009E73"}
    for label, h in histories.items():
        color = palette.get(label, "#444444")
        fig.add_trace(go.Scatter(x=h["iter"], y=100 * h["test_acc"], name=label, line=dict(color=color, width=2)))
        final = float(h["test_acc"].iloc[-1])
        if np.isfinite(final):  # no test rows (test_size 0) leaves the curve empty
            fig.add_hline(y=100 * final, line=dict(color=color, dash="dash", width=1))
    return fig


def sensitivity_figure(table: pd.DataFrame, params: list[str], method_label: str) -> go.Figure:
    """Figs. A.2–A.3: test accuracy against one hyperparameter (line) or two (heatmap), log grids."""
    if len(params) == 1:
        p = params[0]
        fig = ui.base_figure(f"{method_label}: test accuracy vs {p} (Figs. A.2–A.3)", f"{p} (log scale)",
                             "test accuracy [%]", log_x=True)
        fig.add_trace(go.Scatter(x=table[p], y=100 * table["test_acc"], mode="lines+markers", name=method_label,
                                 line=dict(color="#CC0033", width=2)))
        return fig
    a, b = params
    pivot = table.pivot(index=b, columns=a, values="test_acc")
    fig = ui.base_figure(f"{method_label}: test accuracy over {a} × {b} (Figs. A.2–A.3)", f"{a} (log₁₀)",
                         f"{b} (log₁₀)")
    fig.add_trace(go.Heatmap(x=np.log10(pivot.columns.to_numpy(float)), y=np.log10(pivot.index.to_numpy(float)),
                             z=100 * pivot.to_numpy(), colorscale="Viridis", colorbar=dict(title="test acc [%]")))
    return fig

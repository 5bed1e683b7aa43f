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


#: methods that solve their K class problems one after another (baselines.run_twsvm): until the last one is done some
#: hyperplanes are still zero, so only their final row is a classifier comparable with the other methods' rows
SEQUENTIAL_METHODS = ("twsvm", "pin-twsvm")
#: bottom margins of the two convergence figures, whose legends sit below the x axis: the x axis's title and two
#: rows of legend at a 1400 px window (Plotly widened them to 119 and 102 px, and drew each figure again);
#: asked for up front so that Plotly draws each once (app/ui/theme.py)
CONVERGENCE_BOTTOM, WHAT_CONVERGES_BOTTOM = 124, 106


def convergence_figure(histories: dict[str, pd.DataFrame], labels: dict[str, str]) -> go.Figure:
    """Fig. 2: primal max_l J_l (solid) and dual τᵀJ (dashed) on a log axis, test accuracy on the right, all against
    solver seconds, the one x-axis that means the same for every method. SEQUENTIAL_METHODS appear at their final
    row only (diamonds), as does a method with a single row (LSTSVM's closed form)."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    for label, h in histories.items():
        color = ui.method_color(labels.get(label, label))
        final_only = labels.get(label) in SEQUENTIAL_METHODS or len(h) == 1
        rows = h.iloc[[-1]] if final_only else h
        style = dict(mode="markers", marker=dict(color=color, size=11, symbol="diamond")) if final_only else \
            dict(mode="lines")
        fig.add_trace(go.Scatter(x=rows["time"], y=ui.positive(rows["primal"]), name=f"{label}: primal max J",
                                 line=dict(color=color, width=2), **style), secondary_y=False)
        fig.add_trace(go.Scatter(x=rows["time"], y=ui.positive(rows["dual"]), name=f"{label}: dual τᵀJ",
                                 line=dict(color=color, width=2, dash="dash"), **style), secondary_y=False)
        scored = rows[rows["test_acc"].notna()]
        fig.add_trace(go.Scatter(x=scored["time"], y=100 * scored["test_acc"], name=f"{label}: test accuracy",
                                 line=dict(color=color, width=1.5, dash="dot"), **style), secondary_y=True)
    fig.update_layout(title="Primal (8), dual (9) and test accuracy (Fig. 2)", height=440,
                      margin=dict(l=ui.axis_room()["l"], r=60, t=50, b=CONVERGENCE_BOTTOM),
                      legend=dict(orientation="h", y=-0.2))
    fig.update_xaxes(title_text="solver time [s] (the same clock for every method)")
    fig.update_yaxes(title_text="objective J (log)", type="log", exponentformat="power", secondary_y=False)
    fig.update_yaxes(title_text="test accuracy [%]", range=[0, 101], showgrid=False, tickmode="linear", tick0=0,
                     dtick=20, secondary_y=True)
    return fig


def what_converges_figure(histories: dict[str, pd.DataFrame], labels: dict[str, str], tol: float) -> go.Figure | None:
    """The Pareto-weighted methods (K-NPSVC++, the deep models) per outer iteration or epoch, each of which updates
    every class: max_l J_l on top, its relative change and the relative Chebyshev gap (the two halves of the
    stopping test) below, with the tolerance. None when no chosen method records the gap."""
    weighted = {label: h for label, h in histories.items() if "relative_gap" in h.columns}
    if not weighted:
        return None
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("max_l J_l, the objective (8) being minimised",
                                        "stopping test: relative change of max J and relative gap (max J − τᵀJ)/max J"))
    for label, h in weighted.items():
        color = ui.method_color(labels.get(label, label))
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["primal"]), name=f"{label}: max J", mode="lines+markers",
                                 line=dict(color=color, width=2)), row=1, col=1)
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["primal_change"]), name=f"{label}: change of max J",
                                 mode="lines+markers", line=dict(color=color, width=1.5)), row=2, col=1)
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["relative_gap"]), name=f"{label}: relative gap",
                                 mode="lines+markers", line=dict(color=color, width=1.5, dash="dot")), row=2, col=1)
    fig.add_hline(y=tol, line=dict(color="grey", dash="dash"), annotation_text=f"tol = {tol:g}", row=2, col=1)
    fig.update_layout(title="What converges: each outer iteration updates every class", height=560,
                      margin=dict(l=ui.axis_room()["l"], r=30, t=70, b=WHAT_CONVERGES_BOTTOM),
                      legend=dict(orientation="h", y=-0.15))
    fig.update_xaxes(title_text="outer iteration (K-NPSVC++) / epoch (deep models)", row=2, col=1)
    fig.update_yaxes(title_text="max J (log)", type="log", exponentformat="power", row=1, col=1)
    fig.update_yaxes(title_text="relative (log)", type="log", exponentformat="power", row=2, col=1)
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

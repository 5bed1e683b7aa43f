"""Figures of the sparse page (seed 001): convergence, support dynamics, coefficients, sweeps, the 2-D toy."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app import ui
from app.ui.glossary import explain_figure
from solvers.core import Result


def objective_gap(results: Mapping[str, Result], labels: Mapping[str, str]) -> go.Figure:
    """f(z^k) − f_best, f_best the lowest objective any run reached (methods may stop at different local optima)."""
    f_best = min(float(r.history["objective"].min()) for r in results.values())
    hist = {k: r.history.assign(gap=r.history["objective"] - f_best) for k, r in results.items()}
    return ui.line_chart(hist, "iter", "gap", log_y=True, title="Objective gap f(zᵏ) − f_best (log scale)",
                         x_title="iteration k", y_title="f(zᵏ) − f_best", color_keys=labels)


def residual_with_events(results: Mapping[str, Result], labels: Mapping[str, str]) -> go.Figure:
    """Residual (24) per iteration with accepted (●) / rejected (×) extrapolations and the Newton phase (◆)."""
    fig = ui.line_chart({k: r.history for k, r in results.items()}, "iter", "residual", log_y=True,
                        title="Residual (24) with extrapolation and Newton events", x_title="iteration k",
                        y_title="residual (24)", color_keys=labels)
    for label, r in results.items():
        h = r.history
        color = ui.method_color(labels.get(label, label))
        y = ui.positive(h["residual"])
        if "extrapolated" in h:
            tried = h["zeta"].notna()
            for mask, symbol, name in ((h["extrapolated"], "circle", "extrapolation accepted"),
                                       (tried & ~h["extrapolated"], "x", "extrapolation rejected")):
                if mask.any():
                    fig.add_trace(go.Scatter(x=h["iter"][mask], y=y[mask.to_numpy()], mode="markers",
                                             name=f"{label}: {name}", marker=dict(symbol=symbol, size=7, color=color),
                                             legendgroup=label))
        if "newton" in h and h["newton"].any():
            mask = h["newton"]
            fig.add_trace(go.Scatter(x=h["iter"][mask], y=y[mask.to_numpy()], mode="markers",
                                     name=f"{label}: Newton step", legendgroup=label,
                                     marker=dict(symbol="diamond", size=9, color=color, line=dict(color="black", width=1))))
        if r.info.get("identified_at"):
            fig.add_vline(x=r.info["identified_at"], line=dict(color=color, dash="dot"),
                          annotation_text=f"{label}: subspace identified", annotation_position="top right")
    fig.update_xaxes(rangemode="nonnegative")
    return explain_figure(fig, "sparse")


def support_changes(results: Mapping[str, Result], labels: Mapping[str, str]) -> go.Figure:
    fig = ui.line_chart({k: r.history for k, r in results.items()}, "iter", "support_changes",
                        title="Support changes |Jₖ₊₁ Δ Jₖ| per iteration (finite identification, Thm 2.1 b)",
                        x_title="iteration k", y_title="indices entering + leaving", color_keys=labels, markers=True)
    return explain_figure(fig, "sparse")


def extrapolation_steps(results: Mapping[str, Result], labels: Mapping[str, str]) -> go.Figure:
    fig = ui.base_figure("Accepted extrapolation steps tₖ (the paper notes tₖ ≫ 1)", "iteration k", "tₖ",
                         log_y=True)
    for label, r in results.items():
        h = r.history
        if "extrapolated" not in h or not h["extrapolated"].any():
            continue
        acc = h[h["extrapolated"]]
        fig.add_trace(go.Scatter(x=acc["iter"], y=acc["t_step"], mode="markers", name=label,
                                 marker=dict(color=ui.method_color(labels.get(label, label)), size=6)))
    return fig


def coefficients(results: Mapping[str, Result], labels: Mapping[str, str], w_true: np.ndarray | None) -> go.Figure:
    """Final coefficients on the union of the supports (and the truth's support), one marker set per method."""
    idx = set()
    for r in results.values():
        idx |= set(np.flatnonzero(r.solution["w"]).tolist())
    if w_true is not None:
        idx |= set(np.flatnonzero(w_true).tolist())
    idx = np.array(sorted(idx), dtype=int)
    fig = ui.base_figure("Final coefficients on the union of supports", "feature index j", "wⱼ")
    pos = np.arange(idx.size)
    if w_true is not None:
        fig.add_trace(go.Bar(x=pos, y=w_true[idx], name="truth w*", marker_color="rgba(0,0,0,0.25)"))
    offsets = np.linspace(-0.3, 0.3, len(results)) if len(results) > 1 else [0.0]
    for (label, r), dx in zip(results.items(), offsets):  # side by side, so equal solutions stay visible
        fig.add_trace(go.Scatter(x=pos + dx, y=r.solution["w"][idx], mode="markers", name=label,
                                 marker=dict(color=ui.method_color(labels.get(label, label)), size=9)))
    fig.update_xaxes(tickmode="array", tickvals=pos, ticktext=[str(j) for j in idx])
    return fig


def sweep_figure(table: pd.DataFrame, x: str, y: str, *, title: str, x_title: str, y_title: str,
                 log_x: bool = False, log_y: bool = True) -> go.Figure:
    fig = ui.base_figure(title, x_title, y_title, log_x=log_x, log_y=log_y)
    for method, part in table.groupby("method", sort=False):
        fig.add_trace(go.Scatter(x=part[x], y=ui.positive(part[y]) if log_y else part[y], name=method,
                                 mode="lines+markers", line=dict(color=ui.method_color(part["key"].iloc[0]))))
    return fig


def toy_figure(X: np.ndarray, y: np.ndarray, paths: Mapping[str, np.ndarray], keys: Mapping[str, str]) -> go.Figure:
    """Contours of f(w) = ½‖Xw − y‖² over the plane; the feasible set ‖w‖₀ ≤ 1 is the two axes."""
    lim = 1.2 * max(1.0, *(np.abs(p).max() for p in paths.values()))
    xs = np.linspace(-lim, lim, 120)
    W1, W2 = np.meshgrid(xs, xs)
    R = X[:, :1, None] * W1[None] + X[:, 1:, None] * W2[None] - y[:, None, None]
    Z = 0.5 * (R**2).sum(axis=0)
    fig = ui.base_figure("PG and APG on the union of the two axes (n = 2, s = 1)", "w₁", "w₂", height=560)
    fig.add_trace(go.Contour(x=xs, y=xs, z=np.log10(Z - Z.min() + 1e-3), colorscale="Blues", reversescale=True,
                             ncontours=25, showscale=True, colorbar=dict(title="log₁₀(f − min f)"),
                             contours=dict(coloring="heatmap"), hoverinfo="skip", name="f", opacity=0.85))
    axis = dict(color="#333333", width=4)
    fig.add_trace(go.Scatter(x=[-lim, lim], y=[0, 0], mode="lines", line=axis, name="feasible set A₁"))
    fig.add_trace(go.Scatter(x=[0, 0], y=[-lim, lim], mode="lines", line=axis, showlegend=False))
    for label, path in paths.items():
        fig.add_trace(go.Scatter(x=path[:, 0], y=path[:, 1], mode="lines+markers", name=label,
                                 line=dict(color=ui.method_color(keys[label]), width=2), marker=dict(size=7)))
    fig.update_yaxes(scaleanchor="x")
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.12, x=0))
    return fig


def toy_figure_3d(paths: Mapping[str, np.ndarray], keys: Mapping[str, str], s: int) -> go.Figure:
    """Iterates in R³ over the feasible set: the three axes (s = 1) or the three coordinate planes (s = 2)."""
    lim = 1.2 * max(1.0, *(np.abs(p).max() for p in paths.values()))
    fig = go.Figure()
    fig.update_layout(title=f"PG and APG in R³ with s = {s}: the feasible set is the union of the coordinate "
                            f"{'axes' if s == 1 else 'planes'}", height=600, margin=dict(l=0, r=0, t=50, b=0),
                      scene=dict(xaxis_title="w₁", yaxis_title="w₂", zaxis_title="w₃", aspectmode="cube"))
    if s == 1:
        for axis in np.eye(3):
            seg = np.outer([-lim, lim], axis)
            fig.add_trace(go.Scatter3d(x=seg[:, 0], y=seg[:, 1], z=seg[:, 2], mode="lines", showlegend=False,
                                       line=dict(color="#333333", width=5), hoverinfo="skip"))
    else:
        g = np.array([-lim, lim])
        A, B = np.meshgrid(g, g)
        Z = np.zeros_like(A)
        for xyz in ((A, B, Z), (A, Z, B), (Z, A, B)):  # the planes w₃ = 0, w₂ = 0, w₁ = 0
            fig.add_trace(go.Surface(x=xyz[0], y=xyz[1], z=xyz[2], showscale=False, opacity=0.25,
                                     colorscale=[[0, "#888888"], [1, "#888888"]], hoverinfo="skip"))
    for label, path in paths.items():
        fig.add_trace(go.Scatter3d(x=path[:, 0], y=path[:, 1], z=path[:, 2], mode="lines+markers", name=label,
                                   line=dict(color=ui.method_color(keys[label]), width=5), marker=dict(size=4)))
    return fig

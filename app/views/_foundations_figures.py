"""The Foundations iterate plot: level sets, every method's path (distinct dash and marker), play/pause and
an iteration scrubber that move a marker per method along its path (Plotly frames), a clickable grid for the start
point, and the momentum formulas it annotates."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app import ui
from solvers import foundations as fd

# Gradient descent is drawn first, wide and translucent, so the dashed/dotted momentum paths on top never hide it.
STYLE = {
    "gd": dict(dash="solid", symbol="circle-open", width=6.0, opacity=0.55, size=9),
    "heavy-ball": dict(dash="dash", symbol="square", width=2.5, opacity=1.0, size=6),
    "nesterov": dict(dash="dot", symbol="diamond", width=2.5, opacity=1.0, size=7),
}
DRAW_ORDER = ("gd", "heavy-ball", "nesterov")
MAX_ZOOM_OUT = 3.0  # the view grows with the iterates up to this many times the default window
PATH_POINTS = 300  # points drawn per path (all early iterates, then log-spaced ones)
FRAMES = 40
CLICK_SPACING = 0.2  # the clickable start-point grid (a multiple of the start sliders' step)
COLORBAR_ROOM = 140  # px right of the level sets: Plotly's colour bar with its title took 137 in Chromium


def heavy_ball_beta_star(step: float, kappa: float) -> float:
    """The momentum that minimises heavy ball's worst-case rate on a quadratic with spectrum [μ, L] at step α.

    On an eigenvalue λ the iteration matrix has roots of z² − (1 + β − αλ) z + β; both are complex with
    modulus √β exactly when (1 − √(αλ))² ≤ β. Taking β = max over λ ∈ {μ, L} of (1 − √(αλ))² makes every
    mode converge at rate √β, the smallest achievable. At α = 4/(√L + √μ)² it is Polyak's
    β* = ((√κ − 1)/(√κ + 1))². Here L = 1 and μ = 1/κ (app's quadratic), α = step/L.
    """
    alpha, mu, L = step, 1.0 / kappa, 1.0
    return max((1 - math.sqrt(alpha * mu)) ** 2, (1 - math.sqrt(alpha * L)) ** 2)


def polyak_optimum(kappa: float) -> tuple[float, float]:
    """Polyak's best pair (α·L, β) for the quadratic with condition number κ."""
    root = math.sqrt(kappa)
    return 4.0 / (1.0 + 1.0 / root) ** 2, ((root - 1) / (root + 1)) ** 2


def view_range(results: dict) -> tuple[tuple[float, float], tuple[float, float]]:
    """The default window, grown to hold every finite iterate, at most MAX_ZOOM_OUT times its size."""
    out = []
    for axis, col in enumerate(("x", "y")):
        lo, hi = fd.WINDOW[axis]
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        values = np.concatenate([r.history[col].to_numpy(float) for r in results.values()] or [np.empty(0)])
        values = values[np.isfinite(values)]
        if values.size:
            lo = max(min(lo, values.min() - 0.05 * half), mid - MAX_ZOOM_OUT * half)
            hi = min(max(hi, values.max() + 0.05 * half), mid + MAX_ZOOM_OUT * half)
        out.append((float(lo), float(hi)))
    return out[0], out[1]


@st.cache_data(max_entries=64, show_spinner=False)
def level_sets(problem_key: str, _problem: fd.Problem2D, xr: tuple, yr: tuple, n: int = 100):
    xs, ys = np.linspace(*xr, n), np.linspace(*yr, n)
    Z = np.array([[_problem.f(np.array([a, b])) for a in xs] for b in ys])
    return xs, ys, np.log10(Z - min(Z.min(), _problem.f_star) + 1e-3)


def shown_rows(n: int) -> np.ndarray:
    """Which iterates a path draws: the first 60, then log-spaced ones up to the last."""
    if n <= PATH_POINTS:
        return np.arange(n)
    head = np.arange(60)
    tail = np.unique(np.geomspace(60, n - 1, PATH_POINTS - 60).astype(int))
    return np.unique(np.r_[head, tail, n - 1])


def _finite_path(h: pd.DataFrame) -> pd.DataFrame:
    ok = np.isfinite(h["x"].to_numpy(float)) & np.isfinite(h["y"].to_numpy(float))
    return h.loc[ok, ["iter", "x", "y"]]


def _constraint_traces(fig: go.Figure, constraint: str, xr, yr) -> None:
    line = dict(color="#444444", width=3)
    if constraint == "box":
        (bx0, bx1), (by0, by1) = fd.BOX
        fig.add_shape(type="rect", x0=bx0, x1=bx1, y0=by0, y1=by1, line=line)
    elif constraint == "l0":
        fig.add_trace(go.Scatter(x=list(xr), y=[0, 0], mode="lines", line=line, name="feasible set", hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=[0, 0], y=list(yr), mode="lines", line=line, showlegend=False, hoverinfo="skip"))
    elif constraint == "capped-simplex":
        fig.add_trace(go.Scatter(x=[1, 0], y=[0, 1], mode="lines", line=line, name="feasible set", hoverinfo="skip"))


def iterates_figure(problem: fd.Problem2D, problem_key: str, results: dict, methods: dict, note: str) -> go.Figure:
    """Level sets of f with each method's path; ``methods`` maps legend label → method name.

    Play/Pause and the slider under the plot move a marker per method to iterate k (Plotly frames);
    clicking a grid point (invisible, hover says "start here") moves the start point.
    """
    xr, yr = view_range(results)
    xs, ys, logz = level_sets(problem_key, problem, xr, yr)
    fig = ui.base_figure("Iterates on the level sets of f", "x₁", "x₂", height=600)
    fig.add_trace(go.Contour(x=xs, y=ys, z=logz, colorscale="Blues", reversescale=True, ncontours=30, showscale=True,
                             colorbar=dict(title="log₁₀(f − min f)"), contours=dict(coloring="heatmap"),
                             name="f", hoverinfo="skip", opacity=0.85))
    _constraint_traces(fig, problem.constraint, xr, yr)
    order = sorted(results, key=lambda label: DRAW_ORDER.index(methods[label]) if methods[label] in DRAW_ORDER else 99)
    paths = {label: _finite_path(results[label].history) for label in order}
    for label in order:
        style = STYLE.get(methods[label], STYLE["heavy-ball"])
        p = paths[label].iloc[shown_rows(len(paths[label]))]
        fig.add_trace(go.Scatter(
            x=p["x"].to_numpy(), y=p["y"].to_numpy(), name=label, mode="lines+markers", opacity=style["opacity"],
            customdata=p["iter"].to_numpy(),
            line=dict(color=ui.method_color(methods[label]), width=style["width"], dash=style["dash"]),
            marker=dict(symbol=style["symbol"], size=style["size"]),
            hovertemplate=f"{label}<br>k = %{{customdata}}<br>x = (%{{x:.3f}}, %{{y:.3f}})<extra></extra>"))
    fig.add_trace(go.Scatter(x=[problem.x_star[0]], y=[problem.x_star[1]], mode="markers", name="minimiser x*",
                             marker=dict(symbol="star", size=16, color="gold", line=dict(color="black", width=1))))
    gx = np.arange(math.ceil(xr[0] / CLICK_SPACING), math.floor(xr[1] / CLICK_SPACING) + 1) * CLICK_SPACING
    gy = np.arange(math.ceil(yr[0] / CLICK_SPACING), math.floor(yr[1] / CLICK_SPACING) + 1) * CLICK_SPACING
    GX, GY = np.meshgrid(gx, gy)
    fig.add_trace(go.Scatter(x=GX.ravel().round(6), y=GY.ravel().round(6), mode="markers", name="start grid",
                             showlegend=False, marker=dict(size=12, color="rgba(0,0,0,0)"),
                             hovertemplate="click: start here (%{x:.1f}, %{y:.1f})<extra></extra>"))
    fig.update_xaxes(range=list(xr), constrain="domain")
    fig.update_yaxes(range=list(yr), scaleanchor="x")
    # r asked for up front: a margin Plotly has to widen costs a second draw of the whole figure (app/ui/theme.py)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.34, x=0), clickmode="event+select",
                      margin=dict(b=220, r=COLORBAR_ROOM))
    fig.add_annotation(text=note, xref="paper", yref="paper", x=0, y=1.0, xanchor="left", yanchor="bottom",
                       showarrow=False, align="left", font=dict(size=13))
    _add_animation(fig, [paths[label] for label in order], [STYLE.get(methods[label], STYLE["heavy-ball"]) for label in order],
                   [ui.method_color(methods[label]) for label in order])
    return fig


def _add_animation(fig: go.Figure, paths: list[pd.DataFrame], styles: list[dict], colors: list[str]) -> None:
    """A marker per method at iterate k, moved by frames; Play/Pause buttons and a scrubber over k.

    The frames move one small trace (one point per method) over the full paths: Plotly validates every frame
    object in Python, and frames that redrew whole paths cost seconds per rerun on the 2-core machine.
    """
    last = max((int(p["iter"].iloc[-1]) for p in paths if len(p)), default=0)
    if last < 1:
        return
    xs = [p["x"].to_numpy(float) for p in paths]
    ys = [p["y"].to_numpy(float) for p in paths]
    its = [p["iter"].to_numpy(int) for p in paths]

    def at(k: int) -> tuple[list, list]:
        idx = [max(int(np.searchsorted(it, k, side="right")) - 1, 0) for it in its]
        return [float(x[i]) for x, i in zip(xs, idx)], [float(y[i]) for y, i in zip(ys, idx)]

    ks = np.unique(np.r_[np.round(np.linspace(0, last, FRAMES)).astype(int), last])
    x_start, y_start = at(0)  # the scrubber starts at k = 0 so that ▶ Play (from the current frame) runs forward
    symbols = [style["symbol"].replace("-open", "") for style in styles]
    fig.add_trace(go.Scatter(x=x_start, y=y_start, mode="markers", name="iterate k", hoverinfo="skip",
                             marker=dict(size=15, color=colors, symbol=symbols, line=dict(color="black", width=1.5))))
    marker_trace = len(fig.data) - 1
    fig.frames = [go.Frame(data=[go.Scatter(x=x, y=y)], traces=[marker_trace], name=str(k))
                  for k, (x, y) in ((k, at(int(k))) for k in ks)]
    # redraw=True: without it Plotly drops the contour (not an animatable trace) on the first frame
    still = dict(frame=dict(duration=0, redraw=True), mode="immediate", transition=dict(duration=0))
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="left", x=0, y=-0.2, xanchor="left", yanchor="top",
                          showactive=False, pad=dict(t=0, r=8), buttons=[
                              dict(label="▶ Play", method="animate",
                                   args=[None, dict(frame=dict(duration=150, redraw=True), fromcurrent=True,
                                                    transition=dict(duration=0), mode="immediate")]),
                              dict(label="❚❚ Pause", method="animate", args=[[None], still])])],
        sliders=[dict(active=0, x=0.2, len=0.8, y=-0.17, yanchor="top", pad=dict(t=0),
                      currentvalue=dict(prefix="iteration k = ", xanchor="right", font=dict(size=14)),
                      steps=[dict(label=str(k), method="animate", args=[[str(k)], still]) for k in ks])])

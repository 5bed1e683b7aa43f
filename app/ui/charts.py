"""Plotly figures with titles, axis units, log scales and the method colours."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .colors import method_color


def base_figure(title: str, x_title: str, y_title: str, *, log_x: bool = False, log_y: bool = False,
                height: int = 420) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title=title, height=height, margin=dict(l=60, r=20, t=50, b=50), legend_title_text="method",
        xaxis_title=x_title, yaxis_title=y_title, hovermode="closest",
    )
    if log_x:
        fig.update_xaxes(type="log", exponentformat="power")
    if log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    return fig


def positive(values: pd.Series | np.ndarray, floor: float = 1e-16) -> np.ndarray:
    """Values for a log axis: non-positive entries are raised to ``floor`` (exact zeros happen at fixed points)."""
    return np.maximum(np.asarray(values, dtype=float), floor)


def line_chart(
    histories: Mapping[str, pd.DataFrame],
    x: str,
    y: str,
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    color_keys: Mapping[str, str] | None = None,
    markers: bool = False,
) -> go.Figure:
    """One line per history: ``histories`` maps legend label → DataFrame with columns x and y.

    ``color_keys`` maps a label to the method name whose colour it takes (default: the label).
    """
    fig = base_figure(title, x_title, y_title, log_x=log_x, log_y=log_y)
    for label, df in histories.items():
        if df is None or x not in df or y not in df or df.empty:
            continue
        ys = positive(df[y]) if log_y else df[y]
        color = method_color((color_keys or {}).get(label, label))
        fig.add_trace(go.Scatter(x=df[x], y=ys, name=label, mode="lines+markers" if markers else "lines",
                                 line=dict(color=color, width=2), marker=dict(size=5)))
    return fig


def add_reference(fig: go.Figure, x: Sequence[float], y: Sequence[float], name: str, dash: str = "dot",
                  color: str = "#666666") -> go.Figure:
    """A dashed guide curve (a rate bound, a threshold) that is not a method."""
    fig.add_trace(go.Scatter(x=list(x), y=list(y), name=name, mode="lines",
                             line=dict(color=color, dash=dash, width=1.5), hoverinfo="skip"))
    return fig

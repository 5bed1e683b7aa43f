"""Plotly figures with titles, axis units, log scales and each method's colour, dash and marker.

Readable in a lecture hall: 14 px ticks and legends, 16 px axis titles in near-black (#222, 15.9:1 on white,
AA); in presentation mode (sidebar toggle) 18 px ticks, 20 px titles, thicker lines, and ``line_chart`` draws
the previous run's curves as grey "before" ghosts.
"""
from __future__ import annotations

import hashlib
from contextvars import ContextVar
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .colors import GREY, method_line, method_marker
from .theme import INK, PRESENT_KEY, figure_layout, font_sizes, presenting  # noqa: F401 (re-exported)

GHOSTS = "_charts.ghosts"  # session key: {chart title: (data hash, curves, previous curves)}
# While a figure is built for the figure cache (app/ui/figcache.py), ``line_chart`` records its curves here instead
# of drawing a session's ghosts: the cached figure is shared by every session, and the cache adds each session's own.
GHOST_RECORDS: ContextVar[list | None] = ContextVar("ghost_records", default=None)


def base_figure(title: str, x_title: str, y_title: str, *, log_x: bool = False, log_y: bool = False,
                height: int = 420) -> go.Figure:
    """An empty chart with the lab's look (app/ui/theme.py), its layout validated once."""
    return go.Figure(layout=figure_layout(title, x_title, y_title, log_x=log_x, log_y=log_y, height=height))


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
    markers: bool = True,
    ghost: bool = True,
) -> go.Figure:
    """One line per history: ``histories`` maps legend label → DataFrame with columns x and y.

    ``color_keys`` maps a label to the method name whose look it takes (default: the label). Each curve gets
    its method's dash and (at most 12) markers. With ``ghost`` the previous different data of this chart (same
    title) is remembered and, in presentation mode, drawn first in light grey as "before".
    """
    width = 3.5 if presenting() else 2.5
    curves = []
    for label, df in histories.items():
        if df is None or x not in df or y not in df or df.empty:
            continue
        ys = positive(df[y]) if log_y else np.asarray(df[y], dtype=float)
        curves.append((label, np.asarray(df[x], dtype=float), ys))
    traces = []  # built as dicts and validated once with the figure: a chart per rerun, several per page
    if ghost:
        records = GHOST_RECORDS.get()
        if records is not None:
            records.append((title, curves_digest(curves), curves))
        else:
            traces.extend(ghost_traces(remember(title, curves)))
    for label, xs, ys in curves:
        key = (color_keys or {}).get(label, label)
        traces.append(dict(type="scatter", x=xs, y=ys, name=label, mode="lines+markers" if markers else "lines",
                           line=method_line(key, width), marker=method_marker(key)))
    return go.Figure(data=traces, layout=figure_layout(title, x_title, y_title, log_x=log_x, log_y=log_y))


def ghost_traces(curves: list) -> list[dict]:
    """The "before" curves of a chart as light grey traces (dicts), drawn under the current ones."""
    width = (3.5 if presenting() else 2.5) + 2
    return [dict(type="scatter", x=xs, y=ys, name=f"before: {label}", mode="lines", opacity=0.45,
                 line=dict(color=GREY, width=width), hoverinfo="skip", legendgroup="before")
            for label, xs, ys in curves]


def curves_digest(curves: list) -> str:
    return hashlib.sha1(repr([(c[0], c[1].tobytes(), c[2].tobytes()) for c in curves]).encode()).hexdigest()


def remember(title: str, curves: list, digest: str | None = None) -> list:
    """Store this chart's curves; return the previous run's (different) curves when presenting, else []."""
    try:
        store = st.session_state.setdefault(GHOSTS, {})
    except Exception:  # outside a Streamlit run
        return []
    digest = digest or curves_digest(curves)
    entry = store.get(title)
    if curves and (entry is None or entry[0] != digest):
        store[title] = entry = (digest, curves, entry[1] if entry else [])
    return entry[2] if entry and presenting() else []


def add_reference(fig: go.Figure, x: Sequence[float], y: Sequence[float], name: str, dash: str = "dot",
                  color: str = "#555555") -> go.Figure:
    """A dashed guide curve (a rate bound, a threshold) that is not a method."""
    fig.add_trace(go.Scatter(x=list(x), y=list(y), name=name, mode="lines",
                             line=dict(color=color, dash=dash, width=1.5), hoverinfo="skip"))
    return fig

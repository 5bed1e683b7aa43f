"""One readable look for every Plotly figure of the lab, the family pages' own figures included.

Streamlit's chart theme draws axis titles in a faded grey (3.7:1 on white) and ticks at 12 px; a page cannot
change that theme per chart, but explicit layout values win over it. So:

- ``figure_layout(...)`` is the layout of a new chart as one dict (``go.Figure(layout=...)`` validates it once:
  ≈ 10 ms here, against ≈ 70 ms for the same layout set by ``update_layout`` + ``update_xaxes`` + ``update_yaxes``);
- ``readable(fig)`` raises any figure's fonts to the lab's sizes (14 px ticks, 16 px axis titles; 18 / 20 px in
  presentation mode) and inks unset or faded text near-black (#222, 15.9:1, AA), in one ``update_layout``;
- ``install()`` (called by ``run_page``) makes ``st.plotly_chart`` apply ``readable`` to every figure a page
  draws, so the SMM, Metric and NPSVC++ pages get the same sizes and contrast without changes of their own.

Every cartesian axis also gets ``ticklabeloverflow="allow"``. Plotly's default for a linear or log axis, "hide past
div", measures each tick label's box after every draw to hide the ones past the chart's edge: a forced layout per
label, 0.1 s of the browser's main thread per rerun of the SMM page in software rendering. The lab's margins are
wide enough for its tick labels, so nothing is hidden either way.

Margins are asked for at the size Plotly ends up giving them. Plotly draws a figure, measures what its legend and
its axes' labels push the margins to (``margin.autoexpand``, ``axis.automargin``) and, when that differs from the
margins the layout asked for, draws the whole figure again: on every chart of every page it did, since the legend
on the right needs 100–220 px against the 20 asked for and the axes' labels 75–95 against 60–70. So
``figure_layout`` asks for the axes' room (``AXIS_ROOM``) and ``readable`` for the legend's room from its labels'
lengths (``legend_room``); Plotly still widens a margin that turns out too small, at the cost of the second draw.
"""
from __future__ import annotations

import functools
import unicodedata
from typing import Any

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

INK = "#222222"
PRESENT_KEY = "present"  # session state (and URL) key of the presentation-mode toggle
NORMAL_SIZES = {"tick": 14, "title": 16, "legend": 14, "heading": 18}
PRESENT_SIZES = {"tick": 18, "title": 20, "legend": 18, "heading": 22}
TICK_LABEL_OVERFLOW = "allow"  # no per-label box measurement after a draw (module docstring)
COLORBAR_TRACES = {"heatmap", "contour", "histogram2d", "histogram2dcontour", "surface"}
#: margins in tick-font sizes that hold an axis's tick labels and title (measured in Chromium at 14 px ticks:
#: Plotly's automargin gave 76–95 px on the left, 74 px below a linear x axis and up to 87 px below a log one)
AXIS_ROOM = {"left": 7.0, "bottom": 5.7, "bottom_log": 6.3}
#: a vertical legend at the right edge is about LEGEND_ITEM + its longest label wide (or LEGEND_TITLE + its title),
#: in px at 14 px, and pushes the right margin LEGEND_GAP px further (its offset x = 1.02 and border): fitted to
#: Plotly's legends on every page in Chromium, within 5 px below and 20 px above (labels of math symbols)
LEGEND_ITEM, LEGEND_TITLE, LEGEND_GAP = 48.0, 32.0, 28.0
#: label widths in ems of the legend's font, by kind of character (combining marks take no width)
NARROW_CHARS, NARROW_EM, WIDE_EM, OTHER_EM = set("fijlrtI1.,:;|!'()[] -"), 0.3, 0.65, 0.52


def presenting() -> bool:
    """True while the sidebar's presentation mode is on."""
    try:
        return bool(st.session_state.get(PRESENT_KEY, False))
    except Exception:  # outside a Streamlit run (scripts, the bench): normal sizes
        return False


def font_sizes() -> dict[str, int]:
    return dict(PRESENT_SIZES if presenting() else NORMAL_SIZES)


def axis_layout(text: str, *, log: bool = False, sizes: dict[str, int] | None = None) -> dict[str, Any]:
    """One axis: its title and ticks in ink at the lab's sizes; powers of ten on a log axis."""
    sizes = sizes or font_sizes()
    axis = dict(title=dict(text=text, font=dict(size=sizes["title"], color=INK)),
                tickfont=dict(size=sizes["tick"], color=INK), linecolor=INK, showline=True,
                ticklabeloverflow=TICK_LABEL_OVERFLOW)
    if log:
        axis.update(type="log", exponentformat="power")
    return axis


def axis_room(*, log_x: bool = False) -> dict[str, int]:
    """Left and bottom margins (``l``, ``b``) that hold a titled axis's tick labels and title at the lab's sizes
    (powers of ten on a log x axis are taller), so that Plotly need not widen them and draw the figure again."""
    tick = font_sizes()["tick"]
    return dict(l=round(AXIS_ROOM["left"] * tick), b=round(AXIS_ROOM["bottom_log" if log_x else "bottom"] * tick))


def figure_layout(title: str, x_title: str, y_title: str, *, log_x: bool = False, log_y: bool = False,
                  height: int = 420) -> dict[str, Any]:
    """The layout of a new chart with one x and one y axis, as a dict for ``go.Figure(layout=...)``."""
    sizes = font_sizes()
    return dict(
        title=dict(text=title, font=dict(size=sizes["heading"], color=INK)),
        height=int(height * 1.15) if presenting() else height, margin=dict(r=20, t=60, **axis_room(log_x=log_x)),
        legend=dict(title_text="method", font=dict(size=sizes["legend"], color=INK)),
        font=dict(size=sizes["tick"], color=INK), hovermode="closest", hoverlabel=dict(font_size=sizes["tick"]),
        xaxis=axis_layout(x_title, log=log_x, sizes=sizes), yaxis=axis_layout(y_title, log=log_y, sizes=sizes),
    )


def subplot_layout(title: str, axes: dict[str, tuple[str, bool]], *, height: int = 420) -> dict[str, Any]:
    """The lab's look for a figure with several axes (``make_subplots``), for one ``update_layout`` call:
    ``axes`` maps an axis name ("xaxis2") to its title and whether it is logarithmic."""
    sizes = font_sizes()
    layout = dict(title=dict(text=title, font=dict(size=sizes["heading"], color=INK)),
                  height=int(height * 1.15) if presenting() else height,
                  legend=dict(font=dict(size=sizes["legend"], color=INK)), font=dict(size=sizes["tick"], color=INK),
                  hoverlabel=dict(font_size=sizes["tick"]))
    for name, (text, log) in axes.items():
        layout[name] = axis_layout(text, log=log, sizes=sizes)
    return layout


def _font(current: dict | None, size: int) -> dict[str, Any] | None:
    """The font change that makes ``current`` at least ``size`` px and inked (a colour the figure chose stays);
    None when it already is."""
    current = current or {}
    if (current.get("size") or 0) >= size and current.get("color"):
        return None
    return {"size": max(current.get("size") or 0, size), "color": current.get("color") or INK}


def _changes(pairs: dict[str, Any]) -> dict[str, Any]:
    """The nested dict without the parts that need no change (None, or dicts left empty)."""
    out = {}
    for name, value in pairs.items():
        if isinstance(value, dict):
            value = _changes(value)
        if value:
            out[name] = value
    return out


def readable(fig: go.Figure) -> go.Figure:
    """Raise the figure's fonts to the lab's sizes and ink its unset text, in place (idempotent); returns it.

    Only what falls short is updated: a figure made with ``figure_layout`` costs one read of its layout, since
    each ``update_layout`` costs 10–80 ms of validation on the loaded machine.
    """
    sizes = font_sizes()
    traces = [{"name": t.name, "showlegend": t.showlegend} for t in fig.data]
    update = _changes(_wanted(fig.layout.to_plotly_json(), sizes, traces))
    if update:
        fig.update_layout(update)
    for trace in fig.data:
        if trace.type in COLORBAR_TRACES:
            change = _changes(_colorbar(trace.colorbar.to_plotly_json() if trace.colorbar is not None else None,
                                        sizes))
            if change:
                trace.update(colorbar=change)
    return fig


def readable_dict(figure: dict[str, Any]) -> dict[str, Any]:
    """``readable`` for a figure already turned into Plotly's dict (``fig.to_dict()``), in place; returns it.

    The same changes, merged into the dict: no Plotly validation (an ``update_layout`` costs 10–80 ms here), for
    figures kept serialised (app/ui/figcache.py).
    """
    sizes = font_sizes()
    layout = figure.setdefault("layout", {})
    _merge(layout, _changes(_wanted(layout, sizes, figure.get("data") or [])))
    for trace in figure.get("data") or []:
        if trace.get("type") in COLORBAR_TRACES:
            change = _changes(_colorbar(trace.get("colorbar"), sizes))
            if change:
                _merge(trace.setdefault("colorbar", {}), change)
    return figure


def _merge(target: dict[str, Any], changes: dict[str, Any]) -> None:
    """Nested ``changes`` written into ``target`` (what ``update_layout`` does with a nested dict)."""
    for name, value in changes.items():
        if isinstance(value, dict) and isinstance(target.get(name), dict):
            _merge(target[name], value)
        else:
            target[name] = value


def _wanted(layout: dict[str, Any], sizes: dict[str, int], traces: list[dict[str, Any]]) -> dict[str, Any]:
    """The font changes ``layout`` (explicit values only, as ``to_plotly_json`` gives them) needs, its axes'
    tick label overflow and its legend's room, None where it needs none; ``traces``: each trace's name and
    showlegend."""
    hover_size = ((layout.get("hoverlabel") or {}).get("font") or {}).get("size") or 0
    legend = layout.get("legend") or {}
    wanted: dict[str, Any] = {
        "font": _font(layout.get("font"), sizes["tick"]),
        "legend": {"font": _font(legend.get("font"), sizes["legend"]),
                   "title": {"font": _font((legend.get("title") or {}).get("font"), sizes["legend"])}
                   if (legend.get("title") or {}).get("text") else None},
        "hoverlabel": {"font": {"size": sizes["tick"]} if hover_size < sizes["tick"] else None},
    }
    room = legend_room(layout, traces, sizes["legend"])
    if room is not None and room > ((layout.get("margin") or {}).get("r") or 0):
        wanted["margin"] = {"r": room}
    title = layout.get("title") or {}
    if title.get("text"):
        wanted["title"] = {"font": _font(title.get("font"), sizes["heading"])}
    axes = ["xaxis", "yaxis"] + [name for name in layout if name.startswith(("xaxis", "yaxis"))
                                 and name not in ("xaxis", "yaxis")]  # the first pair even when left unset
    for name in axes:
        axis = layout.get(name) or {}
        wanted[name] = {"tickfont": _font(axis.get("tickfont"), sizes["tick"]),
                        "ticklabeloverflow": None if axis.get("ticklabeloverflow") else TICK_LABEL_OVERFLOW,
                        "title": {"font": _font((axis.get("title") or {}).get("font"), sizes["title"])}}
    if "coloraxis" in layout:
        wanted["coloraxis"] = {"colorbar": _colorbar((layout["coloraxis"] or {}).get("colorbar"), sizes)}
    return wanted


def legend_room(layout: dict[str, Any], traces: list[dict[str, Any]], size: int) -> int | None:
    """The right margin a vertical legend at the chart's right edge (Plotly's default place) pushes to, a few px
    over rather than under; None when the figure draws no such legend. Plotly shows the legend when the layout
    says so or, by default, when at least two traces are listed in it."""
    legend = layout.get("legend") or {}
    if legend.get("orientation") == "h" or (legend.get("x") is not None and legend["x"] < 1):
        return None
    listed = [t for t in traces if t.get("showlegend") is not False]
    shown = layout.get("showlegend")
    if shown is False or (shown is None and len(listed) < 2) or not listed:
        return None
    font = (legend.get("font") or {}).get("size") or size
    names = [str(t.get("name") if t.get("name") is not None else f"trace {i}") for i, t in enumerate(listed)]
    title = str((legend.get("title") or {}).get("text") or "")
    grow = font - NORMAL_SIZES["legend"]  # the fitted constants are at the normal legend size
    width = max(LEGEND_ITEM + grow + font * max(map(_text_ems, names)), LEGEND_TITLE + grow + font * _text_ems(title))
    return round(width + LEGEND_GAP)


def _text_ems(text: str) -> float:
    """About how many ems ``text`` takes in a proportional sans-serif font."""
    ems = 0.0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        ems += NARROW_EM if ch in NARROW_CHARS else WIDE_EM if ch.isupper() or ch in "mwMW" else OTHER_EM
    return ems


def _colorbar(current: dict | None, sizes: dict[str, int]) -> dict[str, Any]:
    current = current or {}
    return {"tickfont": _font(current.get("tickfont"), sizes["tick"]),
            "title": {"font": _font((current.get("title") or {}).get("font"), sizes["title"])}}


def install() -> None:
    """Make ``st.plotly_chart`` (and ``container.plotly_chart``) draw every Plotly figure through ``readable``.

    Idempotent; the original is kept as ``__wrapped__``. Other chart kinds pass through unchanged.
    """
    if getattr(DeltaGenerator.plotly_chart, "_readable", False):
        return
    original = DeltaGenerator.plotly_chart

    @functools.wraps(original)
    def plotly_chart(self: DeltaGenerator, figure_or_data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(figure_or_data, go.Figure):
            readable(figure_or_data)
        return original(self, figure_or_data, *args, **kwargs)

    plotly_chart._readable = True  # type: ignore[attr-defined]
    DeltaGenerator.plotly_chart = plotly_chart  # type: ignore[method-assign]
    st.plotly_chart = st._main.plotly_chart  # the module-level function is the main container's bound method

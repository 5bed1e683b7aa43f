"""Figures built once per configuration and kept serialised, so a rerun whose results are cached costs no Plotly work.

A page asks for a figure with ``cached(name, key, build)``: ``key`` holds everything the figure depends on (the
configuration keys of the runs it shows, the page's display settings); ``build()`` returns a ``go.Figure``, a
dict of them, or None. The first call builds it, raises its fonts (``theme.readable_dict``), and keeps it as a
``PreparedFigure``: Plotly's own dict of the figure together with its JSON. Every session shares the store
(``st.cache_resource``, least recently used dropped first beyond a count and a size: app/ui/lru.py), so forty students on one configuration build it once.

``install()`` lets ``st.plotly_chart`` take a prepared figure as it is: Streamlit validates a figure (≈ 10–40 ms)
and serialises it to JSON (≈ 5–30 ms) on every call; for a prepared one both steps return what was computed at
build time. Anything else passes through Plotly's functions unchanged.

Ghost curves ("before", presentation mode) belong to one session: a cached figure holds none; ``line_chart``
records its curves while the figure is built, and ``cached`` adds the session's previous curves to a copy.
"""
from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any, Callable, Mapping

import plotly.graph_objects as go
import plotly.io
import plotly.tools
import streamlit as st

from ..memory import approx_bytes
from .charts import GHOST_RECORDS, curves_digest, ghost_traces, remember
from .lru import LRUStore
from .theme import font_sizes, readable_dict

STORE_SIZE = 400  # figures (≈ 20–300 kB each): a lesson's configurations of every page
STORE_BYTES = 8 << 20  # a lesson's open tabs on every page (≈ 0.1–0.6 MB a configuration at the defaults)
BUILDS: Counter = Counter()  # figure name → times built in this process (tests read it; a hit adds nothing)


class PreparedFigure(dict):
    """A finished figure: Plotly's dict of it (a valid figure anywhere a dict is) and ``json``, its serialised form."""

    def __init__(self, figure: Mapping[str, Any], json: str) -> None:
        super().__init__(figure)
        self.json = json


def prepare(fig: go.Figure) -> PreparedFigure:
    """The figure with the lab's fonts, as a dict and as JSON (trace uids dropped, as Streamlit drops them)."""
    figure = readable_dict(fig.to_dict())
    return PreparedFigure(figure, plotly.io.to_json(figure, validate=False))


def entry_bytes(value: Any) -> int:
    """A stored figure's size: twice its JSON (Plotly's dict of it holds about as much again); anything else
    (a figure's table, a dict of figures, an entry with its ghost records) summed over its parts."""
    if isinstance(value, PreparedFigure):
        return 2 * len(value.json)
    if isinstance(value, (tuple, list)):
        return sum(entry_bytes(v) for v in value)
    if isinstance(value, Mapping):
        return sum(entry_bytes(v) for v in value.values())
    return approx_bytes(value)


@st.cache_resource
def _store() -> LRUStore:
    return LRUStore(STORE_SIZE, STORE_BYTES, size=entry_bytes)


def _remember(key: str, value: Any) -> None:
    _store()[key] = value


def _lookup(key: str) -> Any:
    return _store().get(key)


def store_key(*parts: Any) -> str:
    """The store's key for anything JSON-able: its canonical JSON, unhashed (app/ui/runs.py, which hashes its own
    keys, imports this module, so this one does not import from it)."""
    return json.dumps(parts, sort_keys=True, default=str)


def shown(results: Mapping[str, Any], jobs: Any = ()) -> list:
    """The part of a figure's key that names the runs it shows: per label, its job's configuration key (when
    ``jobs`` are given) and the identity of the stored result (a run computed again, after the run store dropped
    it, is a new result with its own timings)."""
    keys = {job.label: job.key for job in jobs}
    return [(label, keys.get(label), id(result), (getattr(result, "info", None) or {}).get("time"))
            for label, result in results.items()]


def cached(name: str, key: Any, build: Callable[[], Any]) -> Any:
    """The figure (or dict of figures, or None) that ``build()`` makes for ``key``, built at most once.

    ``key`` must capture every input of the figure; the lab's font sizes (presentation mode) are added here.
    """
    full = store_key("figure", name, key, font_sizes())
    entry = _lookup(full)
    if entry is None:
        BUILDS[name] += 1
        records: list = []
        token = GHOST_RECORDS.set(records)
        try:
            built = build()
        finally:
            GHOST_RECORDS.reset(token)
        if isinstance(built, go.Figure):
            value: Any = prepare(built)
        elif isinstance(built, Mapping):
            value = {k: prepare(v) if isinstance(v, go.Figure) else v for k, v in built.items()}
        else:
            value = built
        entry = (value, records)
        _remember(full, entry)
    value, records = entry
    return _with_ghosts(full, value, records) if records else value


def _with_ghosts(full: str, value: Any, records: list) -> Any:
    """Update this session's ghost memory with the charts' curves; in presentation mode return copies of the
    charts that have previous curves, with those drawn first in grey (cached too: a class shares its history)."""
    for title, digest, curves in records:
        previous = remember(title, curves, digest)
        if not previous:
            continue
        if isinstance(value, PreparedFigure):
            value = _ghosted(full, value, previous)
        elif isinstance(value, Mapping):
            value = {k: _ghosted(full, v, previous) if isinstance(v, PreparedFigure) and _title(v) == title else v
                     for k, v in value.items()}
    return value


def _title(figure: Mapping[str, Any]) -> str | None:
    return ((figure.get("layout") or {}).get("title") or {}).get("text")


def _ghosted(full: str, figure: PreparedFigure, previous: list) -> PreparedFigure:
    key = store_key(full, "ghosts", curves_digest(previous))
    hit = _lookup(key)
    if hit is None:
        copy = dict(figure, data=ghost_traces(previous) + list(figure.get("data") or []))
        hit = PreparedFigure(copy, plotly.io.to_json(copy, validate=False))
        _remember(key, hit)
    return hit


def install() -> None:
    """Let Plotly's ``return_figure_from_figure_or_data`` and ``io.to_json`` (what ``st.plotly_chart`` calls) return
    a prepared figure's dict and JSON as they are. Idempotent; other arguments go to the originals."""
    if getattr(plotly.io.to_json, "_prepared", False):
        return
    to_json, to_figure = plotly.io.to_json, plotly.tools.return_figure_from_figure_or_data

    @functools.wraps(to_json)
    def prepared_to_json(fig: Any, *args: Any, **kwargs: Any) -> str:
        return fig.json if isinstance(fig, PreparedFigure) else to_json(fig, *args, **kwargs)

    @functools.wraps(to_figure)
    def prepared_figure(figure_or_data: Any, *args: Any, **kwargs: Any) -> Any:
        return figure_or_data if isinstance(figure_or_data, PreparedFigure) else to_figure(figure_or_data, *args,
                                                                                             **kwargs)

    prepared_to_json._prepared = True  # type: ignore[attr-defined]
    plotly.io.to_json = prepared_to_json
    plotly.tools.return_figure_from_figure_or_data = prepared_figure

"""Export: histories as CSV / JSON (with the page's state, loadable again), figures as standalone HTML, PNG or SVG.

The HTML embeds plotly.js (≈4.6 MB), so a figure opens offline; it is built only when its button is
pressed (deferred download data). PNG and SVG are drawn by kaleido (the optional ``images`` extra) in the
system Chromium, with plotly.js from the plotly package and MathJax off: no network. One image takes a few
seconds (Chromium starts for it), so it is made on request, for one figure at a time.
"""
from __future__ import annotations

import importlib.util
import json
import logging
from functools import lru_cache
from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go
import plotly.io
import streamlit as st

from .page_state import link_state, share_url

log = logging.getLogger(__name__)
IMAGE_FORMATS = {"png": "image/png", "svg": "image/svg+xml"}


@lru_cache(maxsize=1)
def static_images_unavailable() -> str | None:
    """Why PNG/SVG cannot be made here (None when they can): kaleido missing, or no Chromium/Chrome found."""
    if importlib.util.find_spec("kaleido") is None:
        return "PNG/SVG need kaleido: pip install -e \".[images]\""
    from choreographer.browsers.chromium import Chromium

    if Chromium.find_browser(skip_local=True) is None:
        return "PNG/SVG need Chromium or Chrome on the server (apt-get install chromium)"
    return None


def static_image(fig: go.Figure, fmt: str, *, width: int = 1000, height: int = 600) -> bytes:
    """The figure as PNG or SVG bytes, drawn offline by kaleido (plotly.js from the plotly package, no MathJax)."""
    import kaleido

    return kaleido.calc_fig_sync(fig, opts={"format": fmt, "width": width, "height": height},
                                 kopts={"mathjax": False})


def histories_long(histories: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """All histories in one table with a ``method`` column."""
    frames = [df.assign(method=label) for label, df in histories.items() if df is not None and len(df)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def figure_html(fig: go.Figure | Mapping[str, Any]) -> str:
    """A standalone page that needs no network: plotly.js is inside the file. ``fig``: a figure or its dict (a
    cached figure, app/ui/figcache.py)."""
    return plotly.io.to_html(fig, include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def run_payload(table: pd.DataFrame, config: Mapping[str, Any] | None, link: Mapping[str, Any] | None = None,
                url: str | None = None) -> dict[str, Any]:
    """What the JSON export holds: ``link`` (the page's URL state, which "Load a configuration" reads back),
    the address, the solver configuration and the histories. ``link`` and ``url`` default to this run's."""
    return {"link": link_state() if link is None else dict(link), "url": share_url() if url is None else url,
            "config": dict(config or {}), "histories": json.loads(table.to_json(orient="records"))}


def export_panel(histories: Mapping[str, pd.DataFrame], figures: Mapping[str, go.Figure], *, key: str,
                 config: Mapping[str, Any] | None = None) -> None:
    """Download buttons: the histories (CSV, JSON with the configuration) and each figure (HTML).

    Every file is made when its button is pressed (deferred data), not on each rerun; the JSON's link and
    address are this run's, read now (the deferred call runs outside the page's session).
    """
    if not any(df is not None and len(df) for df in histories.values()):
        st.info("Nothing to export yet: run at least one method.")
        return
    c1, c2 = st.columns(2)
    c1.download_button("Histories (CSV)", lambda: histories_long(histories).to_csv(index=False),
                       file_name=f"{key}-histories.csv", mime="text/csv", key=f"{key}.csv", on_click="ignore")
    link, url = link_state(), share_url()
    c2.download_button("Histories + configuration (JSON)",
                       lambda: json.dumps(run_payload(histories_long(histories), config, link, url), default=str,
                                          indent=1),
                       file_name=f"{key}-run.json", mime="application/json", key=f"{key}.json", on_click="ignore",
                       help="Load it back with “Share or load this view” in the sidebar.")
    for name, fig in figures.items():
        st.download_button(f"Figure “{name}” (HTML, works offline)", lambda fig=fig: figure_html(fig),
                           file_name=f"{key}-{name.replace(' ', '_')}.html", mime="text/html",
                           key=f"{key}.fig.{name}", on_click="ignore")
    if figures:
        image_panel(figures, key=key)
    st.caption("The URL of this page holds the current settings and the open tab: copy it (sidebar, “Share or "
               "load this view”) to share or reproduce this run.")


def image_panel(figures: Mapping[str, go.Figure], *, key: str) -> None:
    """One figure as PNG or SVG, made when asked (a few seconds), then offered for download."""
    why_not = static_images_unavailable()
    if why_not:
        st.caption(f"{why_not}; the HTML files above and the camera icon of each chart still work.")
        return
    c1, c2, c3 = st.columns([3, 2, 2], vertical_alignment="bottom")
    name = c1.selectbox("Figure as an image", list(figures), key=f"{key}.image_figure")
    fmt = c2.radio("format", list(IMAGE_FORMATS), horizontal=True, key=f"{key}.image_format")
    if not c3.button("Make image", key=f"{key}.image_make", help="Draws it in Chromium: a few seconds"):
        return
    try:
        with st.spinner(f"Drawing “{name}” as {fmt.upper()}…"):
            data = static_image(figures[name], fmt)
    except Exception as exc:  # a page never shows a traceback; the server log keeps it
        log.exception("static image of %s failed", name)
        st.error(f"Could not draw the image ({type(exc).__name__}: {exc}); the HTML export works offline.")
        return
    st.download_button(f"Download “{name}” ({fmt.upper()}, {len(data) / 1024:.0f} kB)", data,
                       file_name=f"{key}-{name.replace(' ', '_')}.{fmt}", mime=IMAGE_FORMATS[fmt],
                       key=f"{key}.image_download", on_click="ignore")

"""Export: histories as CSV / JSON (with the page's state, loadable again), figures as standalone HTML.

The HTML embeds plotly.js (≈4.6 MB), so a figure opens offline; it is built only when its button is
pressed (deferred download data). PNG/SVG need kaleido, which is not installed: not offered.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from .page_state import link_state, share_url


def histories_long(histories: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """All histories in one table with a ``method`` column."""
    frames = [df.assign(method=label) for label, df in histories.items() if df is not None and len(df)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def figure_html(fig: go.Figure) -> str:
    """A standalone page that needs no network: plotly.js is inside the file."""
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})


def run_payload(table: pd.DataFrame, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the JSON export holds: ``link`` (the page's URL state, which "Load a configuration" reads back),
    the address, the solver configuration and the histories."""
    return {"link": link_state(), "url": share_url(), "config": dict(config or {}),
            "histories": json.loads(table.to_json(orient="records"))}


def export_panel(histories: Mapping[str, pd.DataFrame], figures: Mapping[str, go.Figure], *, key: str,
                 config: Mapping[str, Any] | None = None) -> None:
    """Download buttons: the histories (CSV, JSON with the configuration) and each figure (HTML)."""
    table = histories_long(histories)
    if table.empty:
        st.info("Nothing to export yet: run at least one method.")
        return
    c1, c2 = st.columns(2)
    c1.download_button("Histories (CSV)", table.to_csv(index=False), file_name=f"{key}-histories.csv",
                       mime="text/csv", key=f"{key}.csv", on_click="ignore")
    payload = run_payload(table, config)
    c2.download_button("Histories + configuration (JSON)", json.dumps(payload, default=str, indent=1),
                       file_name=f"{key}-run.json", mime="application/json", key=f"{key}.json", on_click="ignore",
                       help="Load it back with “Share or load this view” in the sidebar.")
    for name, fig in figures.items():
        st.download_button(f"Figure “{name}” (HTML, works offline)", lambda fig=fig: figure_html(fig),
                           file_name=f"{key}-{name.replace(' ', '_')}.html", mime="text/html",
                           key=f"{key}.fig.{name}", on_click="ignore")
    st.caption("The URL of this page holds the current settings and the open tab: copy it (sidebar, “Share or "
               "load this view”) to share or reproduce this run. Figures as PNG: use the camera icon of a chart.")

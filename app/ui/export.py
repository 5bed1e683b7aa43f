"""Export: histories as CSV / JSON, figures as standalone HTML."""
from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st


def histories_long(histories: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """All histories in one table with a ``method`` column."""
    frames = [df.assign(method=label) for label, df in histories.items() if df is not None and len(df)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
    payload = {"config": dict(config or {}), "histories": json.loads(table.to_json(orient="records"))}
    c2.download_button("Histories + configuration (JSON)", json.dumps(payload, default=str, indent=1),
                       file_name=f"{key}-run.json", mime="application/json", key=f"{key}.json", on_click="ignore")
    for name, fig in figures.items():
        st.download_button(f"Figure “{name}” (HTML)", fig.to_html(include_plotlyjs="cdn", full_html=True),
                           file_name=f"{key}-{name.replace(' ', '_')}.html", mime="text/html",
                           key=f"{key}.fig.{name}", on_click="ignore")
    st.caption("The URL of this page holds the current settings: copy it to share or reproduce this run.")

"""app/ui/sweep.py in AppTest: Run fills the figure and returns the table; errors shown, never raised;
an unreachable $OPTLAB_SCHEDULER is reported in the sidebar and the grid runs in-process."""
import socket

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.xdist_group("dask-cluster")


def grid_page():
    import plotly.graph_objects as go
    import streamlit as st

    from app.ui.sweep import run_grid
    from solvers.sweep import expand
    from tests.sweep.toy_jobs import fails_on_three

    def figure(table):
        fig = go.Figure(go.Scatter(x=table["x"], y=table.get("value"), name="value"))
        return fig.update_layout(title="value vs x", xaxis_title="x", yaxis_title="value")

    configs = expand({"x": [1, 2, 3, 4]})
    table = run_grid(fails_on_three, configs, key="t.grid", cache_key="t.grid.1", figure=figure)
    if table is not None:
        st.dataframe(table)


def test_run_fills_the_table_and_reports_the_failed_cell(monkeypatch):
    monkeypatch.delenv("OPTLAB_SCHEDULER", raising=False)
    at = AppTest.from_function(grid_page, default_timeout=60).run()
    assert not at.exception and not at.dataframe
    at.button(key="t.grid_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert table["status"].tolist() == ["ok", "ok", "error", "ok"]
    assert any("1 of 4 cells failed" in e.value for e in at.error)
    assert at.sidebar.toggle(key="sweep.local").value is False  # in-process unless asked


def test_an_unreachable_scheduler_is_reported_and_the_grid_runs_here(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPTLAB_SCHEDULER", f"tcp://127.0.0.1:{port}")
    at = AppTest.from_function(grid_page, default_timeout=60).run()
    assert not at.exception
    assert any("no Dask scheduler answered" in e.value for e in at.sidebar.error)
    at.button(key="t.grid_run").click().run()
    assert not at.exception and len(at.dataframe[0].value) == 4

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


def streaming_page():
    """A grid of four 0.6 s cells whose figure records how many cells had finished at each redraw; with
    ``stop_after`` in the session, the figure presses Stop (a rerun, as Streamlit does on a click) then."""
    import plotly.graph_objects as go
    import streamlit as st

    from app.ui.sweep import run_grid
    from solvers.sweep import expand
    from tests.sweep.toy_jobs import noisy_square

    def figure(table):
        finished = int((table["status"] == "ok").sum())
        st.session_state.setdefault("draws", []).append(finished)
        if finished == st.session_state.get("stop_after"):
            st.session_state.pop("stop_after")
            st.rerun()
        return go.Figure(go.Scatter(x=table["x"], y=table["value"])).update_layout(
            title="value vs x", xaxis_title="x", yaxis_title="value")

    table = run_grid(noisy_square, expand({"x": [1, 2, 3, 4]}, fixed={"sleep": 0.6}), key="t.live",
                     cache_key="t.live.1", figure=figure)
    if table is not None:
        st.dataframe(table)


def test_the_figure_is_redrawn_as_each_cell_finishes(monkeypatch):
    monkeypatch.delenv("OPTLAB_SCHEDULER", raising=False)
    at = AppTest.from_function(streaming_page, default_timeout=60).run()
    at.button(key="t.live_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # cells finish ≥ 0.6 s apart, beyond the 0.5 s redraw throttle: one redraw per finished cell
    assert at.session_state["draws"] == [1, 2, 3, 4]
    assert at.dataframe[0].value["status"].tolist() == ["ok"] * 4


def test_stop_keeps_the_finished_cells_and_cancels_the_rest(monkeypatch):
    monkeypatch.delenv("OPTLAB_SCHEDULER", raising=False)
    at = AppTest.from_function(streaming_page, default_timeout=60).run()
    at.session_state["stop_after"] = 2
    at.button(key="t.live_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert table["status"].tolist() == ["ok", "ok", "cancelled", "cancelled"]
    assert table["value"].iloc[:2].notna().all() and table["value"].iloc[2:].isna().all()
    assert any("Stopped" in w.value for w in at.warning)
    at.run()  # a later rerun shows the kept table, with nothing restarted
    assert at.dataframe[0].value["status"].tolist() == ["ok", "ok", "cancelled", "cancelled"]

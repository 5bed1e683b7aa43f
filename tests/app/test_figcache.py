"""The figure cache (app/ui/figcache.py): a rerun with the same state builds no figure, a prepared figure reaches the
browser as the same JSON as the figure itself, and presentation mode's "before" curves stay per session."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from app import ui
from app.views import _foundations_figures
from tests.app_harness import assert_clean, open_page, plotly_figures


@pytest.fixture
def builder_calls(monkeypatch) -> dict[str, int]:
    """Counts calls of the Foundations page's figure builders (the page looks them up at each call)."""
    calls = {"iterates": 0, "line_chart": 0}

    def counting(name, original):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(_foundations_figures, "iterates_figure", counting("iterates", _foundations_figures.iterates_figure))
    monkeypatch.setattr(ui, "line_chart", counting("line_chart", ui.line_chart))
    return calls


def test_a_rerun_with_the_same_state_builds_no_figure(builder_calls):
    at = open_page("foundations")
    assert_clean(at)
    first = [f["data"] for f in plotly_figures(at)]
    assert len(first) == 3
    builder_calls.update(iterates=0, line_chart=0)
    at.run()
    assert_clean(at)
    assert builder_calls == {"iterates": 0, "line_chart": 0}
    assert [f["data"] for f in plotly_figures(at)] == first
    at.slider(key="fd.step").set_value(0.55).run()  # a new configuration builds its figures once
    assert builder_calls["iterates"] == 1 and builder_calls["line_chart"] == 2


def draw_both_ways():
    """One figure drawn as a go.Figure (Streamlit validates and serialises it) and as a prepared figure."""
    import plotly.graph_objects as go
    import streamlit as st

    from app.ui import figcache, theme

    theme.install()
    figcache.install()

    from plotly.subplots import make_subplots

    from app import ui

    def figures():
        """Unset fonts, a heatmap's colorbar, subplots' axes, and one with the lab's layout and a small legend."""
        bare = go.Figure(go.Scatter(x=[0.0, 1.0, 2.0], y=[3.0, float("nan"), 1e-300], name="run"))
        bare.update_layout(title="t", xaxis=dict(title="x"))
        grid = make_subplots(rows=1, cols=2)
        grid.add_trace(go.Heatmap(z=[[1, 2], [3, 4]], colorbar=dict(title="c")), row=1, col=1)
        grid.add_trace(go.Scatter(x=[1, 2], y=[3, 4]), row=1, col=2)
        grid.update_layout(xaxis2=dict(tickfont=dict(size=30)), coloraxis=dict(colorscale="Blues"))
        lab = ui.base_figure("lab", "k", "gap", log_y=True)
        lab.add_scatter(x=[1, 2], y=[1e-3, 1e-6], name="GD")
        lab.update_layout(legend=dict(font=dict(size=9)))
        return [bare, grid, lab]

    st.session_state["present"] = st.session_state.get("present", False)
    for i, fig in enumerate(figures()):
        st.plotly_chart(fig, key=f"plain{i}")
    for i, fig in enumerate(figures()):
        st.plotly_chart(figcache.prepare(fig), key=f"prepared{i}")


@pytest.mark.parametrize("present", [False, True])
def test_a_prepared_figure_reaches_the_browser_as_the_figure_itself(present):
    at = AppTest.from_function(draw_both_ways)
    at.session_state["present"] = present
    at.run()
    assert not at.exception
    specs = [json.loads(e.proto.spec) for e in at.get("plotly_chart")]
    assert len(specs) == 6
    assert specs[:3] == specs[3:]
    assert specs[1]["data"][0]["colorbar"]["tickfont"]["size"] >= 14  # the fonts were raised, not left as given


def two_configurations():
    import pandas as pd
    import streamlit as st

    from app import ui
    from app.ui import figcache

    figcache.install()
    st.session_state["present"] = st.session_state.get("present", False)
    value = st.session_state.get("value", 1.0)
    history = pd.DataFrame({"iter": [0, 1, 2], "gap": [1.0, value, value / 10]})
    fig = figcache.cached("test.ghost", ("ghost-test", value), lambda: ui.line_chart(
        {"GD": history}, "iter", "gap", log_y=True, title="ghost test", x_title="k", y_title="gap"))
    st.plotly_chart(fig, key="chart")


@pytest.mark.parametrize("present", [False, True])
def test_before_curves_are_per_session_and_only_in_presentation_mode(present):
    at = AppTest.from_function(two_configurations)
    at.session_state["present"] = present
    at.session_state["value"] = 0.5
    at.run()
    at.session_state["value"] = 0.25
    at.run()
    names = [t["name"] for t in plotly_figures(at)[0]["data"]]
    assert names == (["before: GD", "GD"] if present else ["GD"])
    other = AppTest.from_function(two_configurations)  # a second session, cache hit, no history of its own
    other.session_state["present"] = present
    other.session_state["value"] = 0.25
    other.run()
    assert [t["name"] for t in plotly_figures(other)[0]["data"]] == ["GD"]

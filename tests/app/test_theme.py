"""The lab's figure look (app/ui/theme.py): every figure on every page, the family pages' own
figures included, has ticks of at least 14 px (16 px in presentation mode) and axis titles in AA contrast."""
from __future__ import annotations

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from app.ui.theme import INK, NORMAL_SIZES, figure_layout, legend_room, readable, readable_dict
from tests.app_harness import assert_clean, open_page, plotly_figures


def relative_luminance(hex_color: str) -> float:
    c = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_on_white(hex_color: str) -> float:
    """WCAG 2 contrast ratio against white."""
    return 1.05 / (relative_luminance(hex_color) + 0.05)


def axes(layout: dict) -> dict:
    return {name: axis for name, axis in layout.items() if name.startswith(("xaxis", "yaxis"))}


def test_ink_meets_aa_contrast():
    assert contrast_on_white(INK) >= 4.5


def test_readable_raises_small_fonts_inks_unset_text_and_keeps_larger_ones():
    fig = make_subplots(rows=1, cols=2)
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]]), row=1, col=1)
    fig.add_trace(go.Scatter(x=[1, 2], y=[3, 4]), row=1, col=2)
    fig.update_layout(title="t", xaxis=dict(tickfont=dict(size=9)), xaxis2=dict(tickfont=dict(size=30)),
                      yaxis2=dict(title=dict(text="y", font=dict(color="#0072B2"))))
    layout = readable(fig).to_plotly_json()["layout"]
    assert set(axes(layout)) == {"xaxis", "yaxis", "xaxis2", "yaxis2"}
    for name, axis in axes(layout).items():
        assert axis["tickfont"]["size"] >= NORMAL_SIZES["tick"], name
        assert axis["title"]["font"]["size"] >= NORMAL_SIZES["title"], name
    assert layout["xaxis2"]["tickfont"]["size"] == 30  # larger sizes stay
    assert layout["xaxis"]["title"]["font"]["color"] == INK
    assert layout["yaxis2"]["title"]["font"]["color"] == "#0072B2"  # a colour the figure chose stays
    assert {axis["ticklabeloverflow"] for axis in axes(layout).values()} == {"allow"}  # no per-label measuring
    heatmap = fig.data[0].to_plotly_json()
    assert heatmap["colorbar"]["tickfont"]["size"] >= NORMAL_SIZES["tick"]
    before = fig.to_plotly_json()
    assert readable(fig).to_plotly_json() == before  # idempotent


def test_an_axis_that_chose_its_tick_label_overflow_keeps_it_in_both_forms():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(xaxis=dict(ticklabeloverflow="hide past domain")))
    for layout in (readable(go.Figure(fig)).to_plotly_json()["layout"], readable_dict(fig.to_dict())["layout"]):
        assert layout["xaxis"]["ticklabeloverflow"] == "hide past domain"
        assert layout["yaxis"]["ticklabeloverflow"] == "allow"


@pytest.mark.parametrize("present, tick, title", [(False, 14, 16), (True, 16, 18)])
def test_a_family_pages_own_figures_get_the_look(present, tick, title):
    """SMM draws its figures by hand (app/views/_smm_figures.py) and was not changed for this."""
    at = open_page("smm", query={"present": "true"} if present else None)
    assert_clean(at)
    figures = plotly_figures(at)
    assert figures
    for fig in figures:
        for name, axis in axes(fig["layout"]).items():
            assert axis["tickfont"]["size"] >= tick, (fig["layout"].get("title"), name)
            assert axis["title"]["font"]["size"] >= title, (fig["layout"].get("title"), name)
            assert contrast_on_white(axis["title"]["font"]["color"]) >= 4.5, (fig["layout"].get("title"), name)
            assert axis["ticklabeloverflow"] == "allow", (fig["layout"].get("title"), name)
        legend_title = (fig["layout"].get("legend") or {}).get("title") or {}
        if legend_title.get("text"):  # Streamlit's theme would draw it in its faded grey
            assert legend_title["font"]["size"] >= tick, fig["layout"].get("title")
            assert contrast_on_white(legend_title["font"]["color"]) >= 4.5, fig["layout"].get("title")
    assert any(((fig["layout"].get("legend") or {}).get("title") or {}).get("text") for fig in figures)


def two_line_figure(*names: str, **layout) -> go.Figure:
    fig = go.Figure(layout=figure_layout("t", "x", "y", log_y=True))
    for i, name in enumerate(names):
        fig.add_trace(go.Scatter(x=[1, 2], y=[i + 1, i + 2], name=name))
    return fig.update_layout(**layout)


def test_the_right_margin_is_asked_for_at_the_legends_width_in_both_forms():
    """Plotly draws a chart again when its legend pushes the right margin past what the layout asked for; the
    margin asked for grows with the longest label, and the dict form gets the same margin as the figure form."""
    short, long_ = two_line_figure("PG", "APG"), two_line_figure("PG", "Thm A.1: 2L_k‖Z₀−Z*‖²/k² (a bound)")
    r_short = readable(go.Figure(short)).layout.margin.r
    r_long = readable(go.Figure(long_)).layout.margin.r
    assert figure_layout("t", "x", "y")["margin"]["r"] < r_short < r_long
    assert readable_dict(short.to_dict())["layout"]["margin"]["r"] == r_short
    # legend width ≈ symbol + label in ems: a label 20 characters longer needs well over 100 px more
    assert r_long - r_short > 100


def test_no_legend_room_where_plotly_draws_no_legend_at_the_right():
    one = two_line_figure("only")
    assert legend_room(one.layout.to_plotly_json(), [{"name": "only"}], 14) is None  # one trace: no legend
    for layout in ({"showlegend": False}, {"legend": {"orientation": "h"}}, {"legend": {"x": 0.98}}):
        fig = two_line_figure("PG", "APG", **layout)
        assert readable(fig).layout.margin.r == 20, layout
    wide = two_line_figure("PG", "APG", margin=dict(r=400))
    assert readable(wide).layout.margin.r == 400  # a margin already wider stays


def test_a_larger_legend_font_asks_for_more_room():
    traces = [{"name": "PG"}, {"name": "APG"}]
    assert legend_room({}, traces, 18) > legend_room({}, traces, 14)  # the lab's size, presentation against normal
    assert legend_room({"legend": {"font": {"size": 24}}}, traces, 14) > legend_room({}, traces, 18)  # its own size

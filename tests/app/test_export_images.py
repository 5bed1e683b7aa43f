"""PNG/SVG export, offline: kaleido draws a page's figure in the system Chromium, without
network (plotly.js from the plotly package, MathJax off). Skipped with the reason where kaleido or Chromium is
missing; the HTML export covers those machines."""
from __future__ import annotations

import io

import pytest

from app.ui.charts import line_chart
from app.ui.export import static_image, static_images_unavailable
from tests.app_harness import assert_clean, open_page

pytestmark = pytest.mark.skipif(static_images_unavailable() is not None, reason=str(static_images_unavailable()))


def figure():
    import pandas as pd

    history = pd.DataFrame({"iter": [0, 1, 2, 3], "gap": [1.0, 0.1, 0.01, 0.001]})
    return line_chart({"Gradient descent": history}, "iter", "gap", log_y=True, title="Gap of a test run",
                      x_title="iteration k", y_title="f(xₖ) − f*", color_keys={"Gradient descent": "gd"})


def test_svg_holds_the_titles_and_the_curve():
    svg = static_image(figure(), "svg").decode()
    assert svg.startswith("<svg") and "Gap of a test run" in svg and "iteration k" in svg
    assert "rgb(0, 114, 178)" in svg  # the curve, in gradient descent's colour (#0072B2)


def test_png_has_the_asked_size():
    from PIL import Image

    png = static_image(figure(), "png", width=640, height=400)
    assert Image.open(io.BytesIO(png)).size == (640, 400)


def test_the_export_tab_makes_an_image_on_request():
    at = open_page("foundations", query={"fd.view": "export"})
    downloads = len(at.get("download_button"))
    at.selectbox(key="foundations.image_figure").set_value("gap")
    at.radio(key="foundations.image_format").set_value("svg")
    at.button(key="foundations.image_make").click().run()
    assert_clean(at)
    assert len(at.get("download_button")) == downloads + 1

"""``python -m app.latency`` moves sliders that exist: each page it times has each slider it names, wherever the
page draws it, and every notch is a value that slider offers (so the tool cannot drift from the pages)."""
import pytest

from app import latency
from tests.app_harness import APP, assert_clean


def test_every_page_has_its_notches():
    views = {p.stem for p in (APP / "views").glob("*.py") if not p.stem.startswith("_")}
    assert set(latency.NOTCHES) == views - {"home"}


@pytest.mark.parametrize("page", list(latency.NOTCHES))
def test_each_notch_is_a_value_of_a_slider_on_the_page(page):
    at = latency.open_page(page, timeout=120)
    at.run()
    assert_clean(at, allow_errors=True)
    for kind, key, values in latency.NOTCHES[page]:
        widget = latency.notch_widget(at, kind, key)  # KeyError when the page has no such widget
        assert len(set(values)) == len(values) and widget.value not in values, "each notch a value not computed yet"
        if kind == "slider":
            lo, hi, step = widget.proto.min, widget.proto.max, widget.proto.step
            assert all(lo <= v <= hi for v in values), (key, lo, hi)
            assert all(abs((v - lo) / step - round((v - lo) / step)) < 1e-6 for v in values), (key, step)
        else:
            assert all(widget.format_func(v) in widget.options for v in values), (key, widget.options)

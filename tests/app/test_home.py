"""Home as a class sees it on a served lab: no server file paths, lesson links on lines of their own."""
from __future__ import annotations

from tests.app_harness import assert_clean, open_page


def texts(at) -> list[str]:
    return [el.value for kind in ("markdown", "caption", "text", "info", "warning") for el in getattr(at, kind)]


def test_home_says_whether_the_data_directory_is_there_without_its_path(tmp_path, monkeypatch):
    data = tmp_path / "private-server-data"
    data.mkdir()
    monkeypatch.setenv("SOLVERS_DATA", str(data))
    at = open_page("main")
    assert_clean(at)
    shown = " ".join(texts(at))
    assert "Data directory found (0 of the papers'" in shown
    assert str(tmp_path) not in shown and "private-server-data" not in shown
    monkeypatch.setenv("SOLVERS_DATA", str(tmp_path / "absent"))
    at = open_page("main")
    assert "No data directory found" in " ".join(texts(at))


def test_lesson_links_are_not_squeezed_into_a_column():
    at = open_page("main")
    lesson = [el for el in at.main.children.values() if getattr(el, "type", None) == "page_link"
              and el.proto.label[:1].isdigit()]
    nested = [el for el in at.get("page_link") if el.proto.label[:1].isdigit()]
    assert lesson and len(lesson) == len(nested)  # every lesson link sits in the page's main column at full width

"""Follow mode: two sessions of one server (two AppTests in one process share st.cache_resource), the lecturer's
and a student's. A student's ``run()`` here stands for the follower's once-a-second check (its fragment runs in
every full run too)."""
from __future__ import annotations

import pytest

from app.ui.follow import board
from tests.app_harness import assert_clean, open_page

KEY = "class-key-123"
KAPPA = "fd.problem.kappa"


@pytest.fixture
def lecture(monkeypatch):
    monkeypatch.setenv("OPTLAB_LECTURER_KEY", KEY)
    board().end("fd.")
    yield
    board().end("fd.")


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


@pytest.mark.slow
def test_a_follower_takes_the_lecturers_settings_breaks_away_and_comes_back(lecture):
    lecturer = open_page("foundations", query={"lecturer": KEY})
    assert "lecturer" not in lecturer.query_params  # the key leaves the address (and the share link) at once
    lecturer.toggle(key="_follow.lead.fd.").set_value(True).run()
    student = open_page("foundations")
    student.toggle(key="_follow.on.fd.").set_value(True).run()
    lecturer.select_slider(key=KAPPA).set_value(100.0).run()
    student.run()
    assert_clean(student)
    assert student.select_slider(key=KAPPA).value == 100
    assert student.query_params.get(KAPPA) == "100"  # the student's own link shows the followed settings
    lecturer.run()  # the lecturer's count refreshes on its runs
    assert "**1** student follow" in captions(lecturer)

    student.toggle(key="_follow.on.fd.").set_value(False).run()  # break away and explore
    student.select_slider(key=KAPPA).set_value(5.0).run()
    lecturer.select_slider(key=KAPPA).set_value(1000.0).run()
    student.run()
    assert student.select_slider(key=KAPPA).value == 5
    lecturer.run()
    assert "**0** students follow" in captions(lecturer)

    student.toggle(key="_follow.on.fd.").set_value(True).run()  # come back: the lead's settings at once
    assert student.select_slider(key=KAPPA).value == 1000
    assert_clean(student)


def test_a_wrong_key_leads_nothing_and_without_a_key_there_is_no_lecture_panel(lecture, monkeypatch):
    student = open_page("foundations", query={"lecturer": "guess"})
    assert not [t for t in student.toggle if t.key == "_follow.lead.fd."]
    assert [t for t in student.toggle if t.key == "_follow.on.fd."]
    monkeypatch.delenv("OPTLAB_LECTURER_KEY")
    plain = open_page("foundations")
    assert not [t for t in plain.toggle if str(t.key).startswith("_follow.")]
    assert not board().leads("fd.")

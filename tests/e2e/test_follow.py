"""Follow mode in real browsers: the lecturer's tab leads, a student's tab follows within seconds, breaks away
and comes back. Its own lecture server (app/serve.py settings) with a lecturer key in its environment."""
from __future__ import annotations

import pytest

from app.loadtest.server import LectureServer

from .test_browser import assert_no_exception, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
KEY = "e2e-lecturer-key"


@pytest.fixture(scope="module")
def lecture_url():
    with LectureServer(env={"OPTLAB_LECTURER_KEY": KEY}) as server:
        yield server.url


def step_slider(page):
    return page.get_by_test_id("stSlider").filter(has_text="step").locator("input[type='range']").first


def open_lecture_panel(page):
    page.get_by_test_id("stSidebar").get_by_text("Lecture", exact=True).click()


@pytest.mark.slow
def test_a_student_tab_follows_the_lecturer_and_can_break_away(browser, lecture_url):
    lecturer_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    student_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        lecturer, student = lecturer_ctx.new_page(), student_ctx.new_page()
        for p in (lecturer, student):
            p.set_default_timeout(90_000)
        lecturer.goto(f"{lecture_url}/foundations?lecturer={KEY}")
        wait_for_app(lecturer)
        assert KEY not in lecturer.url  # the key left the address
        open_lecture_panel(lecturer)
        lecturer.get_by_text("Lead the class from this page").click()
        wait_for_app(lecturer)

        student.goto(f"{lecture_url}/foundations")
        wait_for_app(student)
        open_lecture_panel(student)
        student.get_by_text("Follow the lecturer").click()
        wait_for_app(student)

        slider = step_slider(lecturer)
        slider.focus()
        lecturer.keyboard.press("ArrowRight")  # α·L 1.00 → 1.01
        lecturer.wait_for_function("() => location.search.includes('fd.step=1.01')")
        wait_for_app(lecturer)
        student.wait_for_function("(el) => el.getAttribute('aria-valuetext') === '1.01'",
                                  arg=step_slider(student).element_handle(), timeout=15_000)
        lecturer.get_by_text("1 student follow").wait_for(timeout=15_000)

        student.get_by_text("Follow the lecturer").click()  # break away
        wait_for_app(student)
        lecturer.keyboard.press("ArrowRight")  # 1.02, not followed
        lecturer.wait_for_function("() => location.search.includes('fd.step=1.02')")
        wait_for_app(lecturer)
        student.wait_for_timeout(3000)
        assert step_slider(student).get_attribute("aria-valuetext") == "1.01"

        student.get_by_text("Follow the lecturer").click()  # come back
        student.wait_for_function("(el) => el.getAttribute('aria-valuetext') === '1.02'",
                                  arg=step_slider(student).element_handle(), timeout=15_000)
        assert_no_exception(student)
        assert_no_exception(lecturer)
    finally:
        lecturer_ctx.close()
        student_ctx.close()

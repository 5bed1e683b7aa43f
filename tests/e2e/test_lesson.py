"""Lesson features in a real browser: Foundations' play/pause moves the iterate, a preset button and a
lesson link from Home apply their scenario."""
from __future__ import annotations

import re

import pytest

from .conftest import ARTIFACTS
from .test_browser import assert_no_exception, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def scrubber_label(page):
    """The scrubber's "iteration k = …" label (Plotly's slider current value)."""
    return page.locator(".slider-container text", has_text="iteration k =").first


def current_iteration(page) -> int:
    return int(re.search(r"k = (\d+)", scrubber_label(page).text_content()).group(1))


def test_play_advances_the_iterate_and_pause_holds_it(page, app_url):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    scrubber_label(page).wait_for(state="visible")
    assert current_iteration(page) == 0
    page.locator("g.updatemenu-button", has_text="Play").first.click()
    page.wait_for_timeout(1500)
    page.locator("g.updatemenu-button", has_text="Pause").first.click()
    paused = current_iteration(page)
    assert paused > 0, "Play moved the scrubber forward"
    page.wait_for_timeout(1000)
    assert current_iteration(page) == paused, "Pause holds the iterate"
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "foundations-paused.png"), full_page=False)


def test_preset_button_applies_its_scenario(page, app_url):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    page.get_by_role("button", name="Step above 2/L: gradient descent diverges").click()
    wait_for_app(page)
    page.get_by_test_id("stAlert").filter(has_text="diverged").first.wait_for(state="visible")
    assert_no_exception(page)


def test_home_lesson_link_opens_the_page_with_its_preset(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    page.get_by_role("link", name=re.compile(r"^1\. Foundations")).click()
    wait_for_app(page)
    page.get_by_test_id("stAlert").filter(has_text="Step above 2/L").first.wait_for(state="visible")
    assert "preset=" not in page.url  # applied once, then the widgets' own values take over the URL
    assert_no_exception(page)

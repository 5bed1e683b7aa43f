"""Every page in a real browser: open it, press Run, wait for a chart, no exception box, a screenshot."""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ARTIFACTS, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
PAGES = sorted(p.stem for p in (ROOT / "app" / "pages").glob("*.py") if not p.stem.startswith("_") and p.stem != "home")


def wait_for_app(page) -> None:
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=180_000)


def assert_no_exception(page) -> None:
    boxes = page.locator("[data-testid='stException']")
    assert boxes.count() == 0, boxes.first.inner_text()


def test_home(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    assert page.get_by_text("Optimization lab").first.is_visible()
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)


@pytest.mark.parametrize("name", PAGES)
def test_page_runs_in_the_browser(page, app_url, name):
    page.goto(f"{app_url}/{name}")
    wait_for_app(page)
    run = page.get_by_test_id("stSidebar").get_by_role("button", name="Run", exact=True)
    assert run.count() == 1, "every method page has one sidebar button labelled Run"
    run.click()
    wait_for_app(page)
    page.get_by_test_id("stPlotlyChart").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def test_bad_upload_shows_an_error_in_the_browser(page, app_url, tmp_path: Path):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="problem").first.click()
    page.get_by_role("option", name="logistic").click()
    wait_for_app(page)
    sidebar.get_by_text("Upload", exact=True).click()
    wait_for_app(page)
    bad = tmp_path / "three_features.csv"
    bad.write_text("a,b,c,y\n1,2,3,0\n4,5,6,1\n")
    sidebar.locator("input[type='file']").set_input_files(str(bad))
    wait_for_app(page)
    alert = page.get_by_test_id("stAlert").filter(has_text="exactly 2")
    alert.first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "foundations-bad-upload.png"))

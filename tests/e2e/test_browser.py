"""Every page in a real browser: open it, press Run, wait for a chart, no exception box, a screenshot;
and on every page that takes uploads, a bad file gives an error message, never a traceback."""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ARTIFACTS, ROOT

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]
PAGES = sorted(p.stem for p in (ROOT / "app" / "views").glob("*.py") if not p.stem.startswith("_") and p.stem != "home")

# page → (file name, content, text the error must contain)
BAD_UPLOADS = {
    "sparse": ("missing_value.csv", "a,b,c,y\n1,,3,0.5\n4,5,6,1.5\n7,8,9,2\n1,0,1,1\n", "missing value"),
    "smm": ("vectors.csv", "a,b,y\n1,2,0\n3,4,1\n5,6,0\n", "matrix samples"),
    "metric": ("one_sample_class.csv", "a,b,y\n0,1,0\n1,0,0\n2,2,1\n3,1,1\n5,5,2\n", "1 sample"),
    "npsvc": ("one_class.csv", "a,b,y\n1,2,0\n3,4,0\n5,6,0\n", "class"),
}


def wait_for_app(page) -> None:
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=180_000)


def assert_no_exception(page) -> None:
    boxes = page.locator("[data-testid='stException']")
    assert boxes.count() == 0, boxes.first.inner_text()


def upload(page, path: Path) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    # the sidebar also holds "Share or load this view" (drawn last) with its own file box labelled Upload
    source = sidebar.get_by_role("radiogroup", name="Data source").get_by_text("Upload", exact=True)
    source.wait_for(state="visible")
    source.click()
    wait_for_app(page)
    sidebar.locator("input[type='file']").first.set_input_files(str(path))
    wait_for_app(page)


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
    nav = page.get_by_test_id("stSidebarNav")
    assert not nav.get_by_text("main", exact=True).count(), "the legacy pages/ listing must not appear"
    run = page.get_by_test_id("stSidebar").get_by_role("button", name="Run", exact=True)
    run.first.wait_for(state="visible")  # the first script run may not have started when the socket connects
    assert run.count() == 1, "every method page has one sidebar button labelled Run"
    run.click()
    wait_for_app(page)
    page.get_by_test_id("stPlotlyChart").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


@pytest.mark.parametrize("name", sorted(BAD_UPLOADS))
def test_bad_upload_shows_an_error(page, app_url, name, tmp_path: Path):
    filename, content, message = BAD_UPLOADS[name]
    page.goto(f"{app_url}/{name}")
    wait_for_app(page)
    (tmp_path / filename).write_text(content)
    upload(page, tmp_path / filename)
    page.get_by_test_id("stAlert").filter(has_text=message).first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{name}-bad-upload.png"), full_page=False)


def test_foundations_bad_upload_shows_an_error(page, app_url, tmp_path: Path):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="problem").first.click()
    page.get_by_role("option", name="logistic").click()
    wait_for_app(page)
    (tmp_path / "three_features.csv").write_text("a,b,c,y\n1,2,3,0\n4,5,6,1\n")
    upload(page, tmp_path / "three_features.csv")
    page.get_by_test_id("stAlert").filter(has_text="exactly 2").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "foundations-bad-upload.png"))

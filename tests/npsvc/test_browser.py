"""The NPSVC++ page in a real browser (system Chromium): a run with screenshots, and a bad upload → st.error."""
from pathlib import Path

import pytest

from tests.e2e.conftest import ARTIFACTS, app_url, browser, page  # noqa: F401  (fixtures)
from tests.e2e.test_browser import assert_no_exception, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_npsvc_page_runs_and_refuses_a_bad_upload(page, app_url, tmp_path: Path):  # noqa: F811
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{app_url}/npsvc")
    wait_for_app(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("button", name="Run", exact=True).click()
    wait_for_app(page)
    page.get_by_test_id("stPlotlyChart").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "npsvc-run.png"), full_page=True)
    page.get_by_role("tab", name="Pareto weights").click()
    page.screenshot(path=str(ARTIFACTS / "npsvc-pareto.png"), full_page=True)
    sidebar.get_by_text("Upload", exact=True).click()
    wait_for_app(page)
    bad = tmp_path / "one_class.csv"
    bad.write_text("a,b,y\n1,2,0\n3,4,0\n5,6,0\n")
    sidebar.locator("input[type='file']").set_input_files(str(bad))
    wait_for_app(page)
    page.get_by_test_id("stAlert").filter(has_text="class").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "npsvc-bad-upload.png"), full_page=False)

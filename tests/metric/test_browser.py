"""The metric page in a real browser (system Chromium): a run with a screenshot, and a one-sample class → st.error."""
from pathlib import Path

import pytest

from tests.e2e.conftest import ARTIFACTS, app_url, browser, page  # noqa: F401  (fixtures)
from tests.e2e.test_browser import assert_no_exception, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_metric_page_runs_and_refuses_a_one_sample_class(page, app_url, tmp_path: Path):  # noqa: F811
    page.goto(f"{app_url}/metric")
    wait_for_app(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("button", name="Run", exact=True).click()
    wait_for_app(page)
    page.get_by_test_id("stPlotlyChart").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "metric-run.png"), full_page=False)
    sidebar.get_by_text("Upload", exact=True).click()
    wait_for_app(page)
    bad = tmp_path / "one_sample_class.csv"
    bad.write_text("a,b,y\n0,1,0\n1,0,0\n2,2,1\n3,1,1\n5,5,2\n")
    sidebar.locator("input[type='file']").set_input_files(str(bad))
    wait_for_app(page)
    page.get_by_test_id("stAlert").filter(has_text="1 sample").first.wait_for(state="visible")
    assert_no_exception(page)
    page.screenshot(path=str(ARTIFACTS / "metric-bad-upload.png"), full_page=False)

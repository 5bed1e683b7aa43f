"""Page state in a real browser: the open tab survives a rerun and a reload, a hand-written link
with readable values reproduces the configuration, the shared link and the exported JSON round-trip, and an
exported HTML figure renders with the network blocked.

Foundations is the page used: the cheapest one, and every page builds its state with the same module.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import ARTIFACTS
from .test_browser import assert_no_exception, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def selected_tab(page) -> str:
    return page.locator("[role='tab'][aria-selected='true']").first.inner_text().strip()


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query, keep_blank_values=True)


def methods_shown(page) -> list[str]:
    box = page.get_by_test_id("stSidebar").get_by_test_id("stMultiSelect").filter(has_text="Methods").first
    text = box.get_by_test_id("stMultiSelectTagsContainer").inner_text()
    return [line.strip() for line in text.splitlines() if line.strip()]


def open_share_panel(page):
    panel = page.get_by_test_id("stSidebar").get_by_test_id("stExpander").filter(has_text="Share or load this view")
    panel.get_by_text("Share or load this view").click()
    return panel


def test_the_open_tab_survives_a_rerun_and_a_reload(page, app_url):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    page.get_by_role("tab", name="Convergence").click()
    # the tab's own rerun has ended once it has written the URL ("notRunning" also holds before that rerun starts,
    # and a Run pressed then, under the full suite's load, came back with the URL before the tab's)
    page.wait_for_function("() => location.search.includes('fd.view=')")
    wait_for_app(page)
    assert query(page).get("fd.view") == ["convergence"]
    page.get_by_test_id("stSidebar").get_by_role("button", name="Run", exact=True).click()  # a new run
    wait_for_app(page)
    assert selected_tab(page) == "Convergence"
    assert query(page).get("fd.view") == ["convergence"]
    page.reload()
    wait_for_app(page)
    assert selected_tab(page) == "Convergence"
    assert_no_exception(page)


def test_a_hand_written_link_reproduces_the_configuration(page, app_url):
    page.goto(f"{app_url}/foundations?fd.methods=gd,nesterov&fd.stop.max_iter=2000&fd.view=convergence")
    wait_for_app(page)
    assert methods_shown(page) == ["Gradient descent", "Nesterov / FISTA"]
    slider = page.get_by_test_id("stSidebar").get_by_test_id("stSlider").filter(has_text="max_iter").first
    assert "2000" in slider.inner_text() and "e+" not in slider.inner_text()
    assert selected_tab(page) == "Convergence"
    assert page.get_by_test_id("stAlert").count() == 0 or not page.get_by_test_id("stAlert").filter(
        has_text="cannot be used").count()
    page.screenshot(path=str(ARTIFACTS / "foundations-hand-written-link.png"))
    page.goto(f"{app_url}/foundations?fd.methods=gd,newton")
    wait_for_app(page)
    page.get_by_test_id("stAlert").filter(has_text="fd.methods").filter(has_text="newton").first.wait_for()
    assert methods_shown(page) == ["Gradient descent"]
    assert_no_exception(page)


def test_the_copied_link_reproduces_the_view(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_url)
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        page.goto(f"{app_url}/foundations?fd.methods=heavy-ball&fd.problem.kappa=100")
        wait_for_app(page)
        page.get_by_role("tab", name="Convergence").click()
        wait_for_app(page)
        panel = open_share_panel(page)
        code = panel.get_by_test_id("stCode")
        link = code.inner_text().strip()
        code.hover()
        copy = code.locator("button").first
        if copy.count():
            assert copy_with_button(page, code, copy) == link
        assert {"fd.methods": ["heavy-ball"], "fd.problem.kappa": ["100"], "fd.view": ["convergence"]}.items() \
            <= query_of(link).items()
        other = context.new_page()
        other.set_default_timeout(90_000)
        other.goto(link)
        wait_for_app(other)
        assert methods_shown(other) == ["Heavy ball"] and selected_tab(other) == "Convergence"
        assert_no_exception(other)
    finally:
        context.close()


def copy_with_button(page, owner, button, tries: int = 5) -> str:
    """Click a copy button that Streamlit shows only while the pointer is over ``owner`` and return what
    reached the clipboard ('' if nothing ever did). Under load a rerun can redraw the sidebar between the hover
    and the click, hiding the button (a fresh-clone CI run waited 90 s on it) or leaving the click on a stale
    one (another read an empty clipboard), so each try hovers anew and the clipboard is polled for 5 s."""
    page.evaluate("navigator.clipboard.writeText('')")
    for _ in range(tries):
        owner.hover()
        try:
            button.click(timeout=10_000)
        except PlaywrightTimeout:
            wait_for_app(page)
            continue
        for _ in range(20):
            copied = page.evaluate("navigator.clipboard.readText()").strip()
            if copied:
                return copied
            page.wait_for_timeout(250)
    return ""


def query_of(link: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(link).query, keep_blank_values=True)


def export_tab_download(page, button_text: str, target: Path) -> Path:
    page.get_by_role("tab", name="Export").click()
    wait_for_app(page)
    with page.expect_download() as info:
        page.get_by_role("button", name=button_text).first.click()
    info.value.save_as(str(target))
    return target


def test_the_exported_json_loads_back(page, app_url, tmp_path: Path):
    page.goto(f"{app_url}/foundations?fd.methods=nesterov&fd.stop.max_iter=500")
    wait_for_app(page)
    saved = export_tab_download(page, "Histories + configuration (JSON)", tmp_path / "foundations-run.json")
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    assert len(methods_shown(page)) == 3
    panel = open_share_panel(page)
    panel.locator("input[type='file']").set_input_files(str(saved))
    wait_for_app(page)
    page.get_by_text("Loaded").first.wait_for()
    assert methods_shown(page) == ["Nesterov / FISTA"]
    assert query(page).get("fd.stop.max_iter") == ["500"] and query(page).get("fd.view") == ["export"]
    assert_no_exception(page)


def test_an_exported_figure_renders_with_the_network_blocked(page, browser, app_url, tmp_path: Path):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    saved = export_tab_download(page, "Figure “gap” (HTML, works offline)", tmp_path / "gap.html")
    offline = browser.new_context(offline=True, viewport={"width": 1000, "height": 700})
    blocked: list[str] = []
    offline.route("**/*", lambda route: (blocked.append(route.request.url), route.abort())
                  if route.request.url.startswith("http") else route.continue_())
    try:
        view = offline.new_page()
        view.goto(saved.as_uri())
        view.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=30_000)
        assert view.evaluate("typeof window.Plotly") == "object"
        assert view.locator(".js-plotly-plot .scatterlayer .trace").count() >= 3  # the three methods' curves
        view.screenshot(path=str(ARTIFACTS / "foundations-gap-offline.png"))
        assert not [u for u in blocked if "plotly" in u], blocked
    finally:
        offline.close()


def plotted(page, title_start: str) -> dict[str, list[float]]:
    """The y values of each trace of the drawn Plotly figure whose title starts with ``title_start``."""
    return page.evaluate("""(start) => {
        for (const div of document.querySelectorAll('.js-plotly-plot')) {
            const title = div.layout && div.layout.title && div.layout.title.text;
            if (title && title.replace(/<[^>]*>/g, '').startsWith(start)) {  // Streamlit wraps it in <b>
                // _fullData: the traces as drawn, their base64 arrays decoded
                return Object.fromEntries(div._fullData.map(t => [t.name, Array.from(t.y)]));
            }
        }
        return null;
    }""", title_start)


def test_a_hand_written_link_reproduces_the_figure(page, app_url):
    """Readable values typed by hand draw the same curves as the solver run with those values in this process."""
    import numpy as np

    from solvers import foundations as fd

    page.goto(f"{app_url}/foundations?fd.methods=gd,heavy-ball&fd.problem.kappa=100&fd.step=0.5&fd.beta=0.8"
              "&fd.stop.max_iter=50&fd.view=convergence")
    wait_for_app(page)
    assert_no_exception(page)
    page.wait_for_function("(start) => document.querySelectorAll('.js-plotly-plot').length >= 2", arg="Objective gap")
    drawn = plotted(page, "Objective gap")
    assert drawn is not None, "no gap figure on the Convergence tab"
    problem = fd.make_problem(None, problem="quadratic", kappa=100.0)
    for key, params in (("gd", {"step": 0.5}), ("heavy-ball", {"step": 0.5, "beta": 0.8})):
        expected = fd.solve(problem, key, tol=1e-8, max_iter=50, **params).history["gap"].to_numpy()
        got = np.array(drawn[fd.METHODS[key].label], dtype=float)
        # the chart raises exact zeros to 1e-16 for its log axis; elsewhere the same floats, as JSON round-trips them
        np.testing.assert_allclose(got, np.maximum(expected, 1e-16), rtol=1e-12)
    page.screenshot(path=str(ARTIFACTS / "foundations-hand-written-figure.png"))


def test_browser_back_restores_the_previous_configuration(page, app_url):
    page.goto(f"{app_url}/foundations")
    wait_for_app(page)
    step = page.get_by_test_id("stSlider").filter(has_text="step").locator("input[type='range']").first
    step.focus()
    page.keyboard.press("ArrowRight")  # one notch: α·L = 1.00 → 1.01
    page.wait_for_function("() => location.search.includes('fd.step=1.01')")
    wait_for_app(page)
    page.get_by_role("tab", name="Convergence").click()
    page.wait_for_function("() => location.search.includes('fd.view=convergence')")
    wait_for_app(page)
    page.go_back()  # to the first tab, the step still 1.01
    page.wait_for_function("() => !location.search.includes('fd.view')")
    wait_for_app(page)
    # the tab follows the URL on the rerun that the history step starts; under load it lands after the app settles
    try:
        page.wait_for_function("""() => document.querySelector("[role='tab'][aria-selected='true']")
                                         ?.innerText.trim() === 'Iterates'""")
    except PlaywrightTimeout:
        pass  # the assertion below says what was shown instead
    assert selected_tab(page) == "Iterates" and step.get_attribute("aria-valuetext") == "1.01"
    page.go_back()  # and the step back to 1.00
    page.wait_for_function("() => !location.search.includes('fd.step')")
    wait_for_app(page)
    page.wait_for_function("(el) => el.getAttribute('aria-valuetext') === '1.00'", arg=step.element_handle())
    page.go_forward()
    page.wait_for_function("() => location.search.includes('fd.step=1.01')")
    wait_for_app(page)
    page.wait_for_function("(el) => el.getAttribute('aria-valuetext') === '1.01'", arg=step.element_handle())
    assert_no_exception(page)


@pytest.mark.parametrize("name", ["foundations", "sparse", "multitask"])
def test_the_chart_starts_above_the_fold_at_1024_by_768(browser, app_url, name):
    """A projector's 1024×768: the compact head (one-line title, folded "About this page", one row of presets)
    leaves at least 250 px of the first chart on screen without scrolling."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        page.goto(f"{app_url}/{name}")
        wait_for_app(page)
        chart = page.get_by_test_id("stPlotlyChart").first
        chart.wait_for()
        page.wait_for_function("(el) => el.getBoundingClientRect().height > 100", arg=chart.element_handle())
        # the first chart can be drawn while its run is still going, with elements above it not yet in their final
        # place (a fresh-clone CI run under load measured 1217 px, and its screenshot then showed 360 px): measure
        # once the run is over and the head has settled, within a bound that a layout that stays low still fails
        wait_for_app(page)
        try:
            page.wait_for_function(f"(el) => el.getBoundingClientRect().top <= {768 - 250}",
                                   arg=chart.element_handle(), timeout=15_000)
        except PlaywrightTimeout:
            pass  # the assertion below says where it is
        top = chart.bounding_box()["y"]
        page.screenshot(path=str(ARTIFACTS / f"{name}-1024x768.png"))
        assert top <= 768 - 250, f"the first chart starts at {top:.0f} px"
        assert_no_exception(page)
    finally:
        context.close()

"""Real browsers beside the protocol students: K Chromium pages (Playwright, the system Chromium) stepping through
the same links, timed in the page: from the history step to the app's "not running" state again.

A step is a history step to the next link (``history.pushState`` and a ``popstate`` event, what Back and Forward
do), so the page reruns in the same session as a protocol student's step does; a ``goto`` would open a new session.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import time
from typing import Any, Sequence

from .lessons import query_string

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
APP = "[data-testid='stApp']"
# resolves with the milliseconds from the history step until the script has run and stopped again
STEP_JS = """(query) => new Promise((resolve) => {
  const app = document.querySelector("[data-testid='stApp']");
  const t0 = performance.now();
  let ran = false;
  const observer = new MutationObserver(() => {
    const state = app.getAttribute('data-test-script-state');
    if (state === 'running') ran = true;
    else if (ran && state === 'notRunning') { observer.disconnect(); resolve(performance.now() - t0); }
  });
  observer.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  history.pushState({}, '', location.pathname + (query ? '?' + query : ''));
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
})"""


def chromium() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser") or (
        "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


async def _wait_idle(page, timeout_ms: float) -> None:
    await page.wait_for_selector(f"{APP}[data-test-connection-state='CONNECTED']", timeout=timeout_ms)
    await page.wait_for_selector(f"{APP}[data-test-script-state='notRunning']", timeout=timeout_ms)


async def one_browser(browser, url: str, page_name: str, links: Sequence[dict], timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"first_load": None, "steps": [], "failure": None, "exceptions": 0}
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        start = time.perf_counter()
        await page.goto(f"{url}/{page_name}")
        await _wait_idle(page, timeout * 1000)
        out["first_load"] = time.perf_counter() - start
        for link in links:
            ms = await asyncio.wait_for(page.evaluate(STEP_JS, query_string(link)), timeout)
            out["steps"].append(ms / 1000)
        out["exceptions"] = await page.locator("[data-testid='stException']").count()
    except Exception as exc:  # a browser that fails is reported, not raised: the protocol students go on
        first_line = next(iter(str(exc).splitlines()), "")  # a timeout has no message at all
        out["failure"] = f"{type(exc).__name__}: {first_line}".rstrip(": ")
    finally:
        await context.close()
    return out


async def run_browsers(url: str, page_name: str, links_per_browser: Sequence[Sequence[dict]],
                       timeout: float = 300.0) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    path = chromium()
    if path is None:
        raise RuntimeError("no Chromium found for --browsers: install it (apt-get install chromium) or set CHROMIUM")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=FLAGS)
        try:
            return await asyncio.gather(*(one_browser(browser, url, page_name, links, timeout)
                                          for links in links_per_browser))
        finally:
            await browser.close()

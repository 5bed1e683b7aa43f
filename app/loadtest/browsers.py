"""Real browsers beside the protocol students: K Chromium pages (Playwright, the system Chromium) stepping through
the same links, timed in the page: from the history step to the app's "not running" state again.

A step is a history step to the next link (``history.pushState`` and a ``popstate`` event, what Back and Forward
do), so the page reruns in the same session as a protocol student's step does; a ``goto`` would open a new session.
A browser waits ``think`` seconds between steps, as the protocol students do. The page is loaded once its first
script run has ended: the app says "notRunning" before that run starts as well, and a step sent then was lost.
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
# installed before the page loads: counts the changes of the script state and the script runs that ended, with
# when the last one ended (from the mutation records' old values, so that a run shorter than one observer call counts)
COUNT_RUNS_JS = """(() => {
  window.__optlabStateChanges = 0;
  window.__optlabRunsEnded = 0;
  new MutationObserver((records) => {
    const app = document.querySelector("[data-testid='stApp']");
    window.__optlabStateChanges += records.length;
    if (records.some((r) => r.oldValue === 'running') && app.getAttribute('data-test-script-state') === 'notRunning') {
      window.__optlabRunsEnded += 1;
      window.__optlabLastRunEnd = performance.now();
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state'],
                        attributeOldValue: true});
})();"""
# a history step (to ``query``; null sends the popstate again): [when, state changes so far, runs ended so far]
HISTORY_STEP_JS = """(query) => {
  if (query !== null) history.pushState({}, '', location.pathname + (query ? '?' + query : ''));
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
  return [performance.now(), window.__optlabStateChanges, window.__optlabRunsEnded];
}"""
RUN_ENDED_JS = "(ended) => window.__optlabRunsEnded > ended"
# the page sometimes takes no notice of a synthetic popstate (no rerun request leaves it): a step that has changed
# nothing within RESEND_SECONDS is sent again, and its time counts from the event the page took
RESEND_SECONDS = 5.0


async def history_step(page, query: str, timeout: float) -> tuple[float, int]:
    """Seconds from a history step to the end of the script run it caused, and the popstate events it took."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    t0, changes, ended = await page.evaluate(HISTORY_STEP_JS, query)
    sent, waited = 1, 0.0
    while True:
        try:
            await page.wait_for_function(RUN_ENDED_JS, arg=ended, timeout=RESEND_SECONDS * 1000)
            return (await page.evaluate("() => window.__optlabLastRunEnd") - t0) / 1000, sent
        except PlaywrightTimeout:
            waited += RESEND_SECONDS
            if waited >= timeout:
                raise
            if sent < 3 and await page.evaluate("() => window.__optlabStateChanges") == changes:
                t0, changes, ended = await page.evaluate(HISTORY_STEP_JS, None)
                sent += 1


def chromium() -> str | None:
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser") or (
        "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


async def _wait_first_run(page, timeout_ms: float) -> None:
    """Until the page's first script run has ended (its "notRunning" before that run is no answer)."""
    await page.wait_for_function(RUN_ENDED_JS, arg=0, timeout=timeout_ms)


async def one_browser(browser, url: str, page_name: str, links: Sequence[dict], think: float,
                      timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"first_load": None, "steps": [], "failure": None, "exceptions": 0, "resent": 0}
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    await page.add_init_script(COUNT_RUNS_JS)
    try:
        start = time.perf_counter()
        await page.goto(f"{url}/{page_name}")
        await _wait_first_run(page, timeout * 1000)
        out["first_load"] = time.perf_counter() - start
        for link in links:
            await asyncio.sleep(think)
            seconds, sent = await history_step(page, query_string(link), timeout)
            out["steps"].append(seconds)
            out["resent"] += sent - 1
        out["exceptions"] = await page.locator("[data-testid='stException']").count()
    except Exception as exc:  # a browser that fails is reported, not raised: the protocol students go on
        first_line = next(iter(str(exc).splitlines()), "")  # a timeout has no message at all
        where = f"step {len(out['steps']) + 1}" if out["first_load"] is not None else "first load"
        try:
            state = await page.evaluate(f"() => document.querySelector(\"{APP}\")?.getAttribute('data-test-script-state')")
        except Exception:  # noqa: BLE001 (a crashed or closed page: the failure is reported without its state)
            state = "unknown"
        out["failure"] = f"{type(exc).__name__} at {where} (script {state}): {first_line}".rstrip(": ")
    finally:
        await context.close()
    return out


async def run_browsers(url: str, page_name: str, links_per_browser: Sequence[Sequence[dict]], think: float = 0.5,
                       timeout: float = 300.0) -> list[dict[str, Any]]:
    from playwright.async_api import async_playwright

    path = chromium()
    if path is None:
        raise RuntimeError("no Chromium found for --browsers: install it (apt-get install chromium) or set CHROMIUM")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=FLAGS)
        try:
            return await asyncio.gather(*(one_browser(browser, url, page_name, links, think, timeout)
                                          for links in links_per_browser))
        finally:
            await browser.close()

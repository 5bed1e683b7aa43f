"""A real Streamlit server and the system Chromium, driven by Playwright.

Skipped, with the reason, where Chromium or Playwright is missing (`.ci/run` installs Chromium).
The server and the browser are process-wide singletons: a test module that imports these fixtures
gets the same instances (two sync Playwright instances cannot run in one thread).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.loadtest.server import free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_SHARED: dict[str, object] = {}


def _start_server() -> str:
    port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = open(ARTIFACTS.parent / f"streamlit-{port}.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, timeout=90)
    except RuntimeError as exc:
        proc.terminate()
        pytest.fail(str(exc))
    _SHARED["server"] = (proc, log)
    return url


@pytest.fixture(scope="session")
def app_url():
    owner = "url" not in _SHARED
    if owner:
        _SHARED["url"] = _start_server()
    yield _SHARED["url"]
    if owner:
        proc, log = _SHARED.pop("server")
        _SHARED.pop("url")
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.skip("no system Chromium found (apt-get install chromium); browser tests need it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    owner = "browser" not in _SHARED
    if owner:
        pw = sync_api.sync_playwright().start()
        _SHARED["playwright"] = pw
        _SHARED["browser"] = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
    yield _SHARED["browser"]
    if owner:
        _SHARED.pop("browser").close()
        _SHARED.pop("playwright").stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    p.set_default_timeout(90_000)
    yield p
    context.close()

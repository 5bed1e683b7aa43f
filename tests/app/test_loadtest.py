"""The load harness works end to end: a real lecture server, three protocol students, two lesson steps each.

Timings are the benchmark's business (python -m app.loadtest); here only that every step finishes, nothing
fails, no page shows an exception, and each student's last step shows the values its link asked for.
"""
from __future__ import annotations

import asyncio

import pytest

from app.loadtest.classroom import mismatches, run_class
from app.loadtest.lessons import lesson_links
from app.loadtest.protocol import PageRun
from app.loadtest.report import build
from app.loadtest.server import LectureServer, Monitor


@pytest.mark.slow
def test_three_students_step_through_the_foundations_lesson():
    with LectureServer() as server:
        monitor = Monitor(server.pid).start()
        logs = asyncio.run(run_class(server.url, "foundations", "lecture", students=3, steps=2, spread=1.0))
        monitor.stop()
    report = build({"page": "foundations", "scenario": "lecture", "students": 3, "steps": 2}, logs, monitor.samples)
    assert report["failures"] == []
    assert report["steps_finished"] == report["steps_expected"] == 6
    assert report["exception_elements"] == 0, report["exceptions"]
    assert report["wrong_last_state"] == []
    assert all(log.first_load is not None and log.first_load.ok for log in logs)
    # the check of the last step saw the asked values (a plain slider's value or the page's share link), not nothing
    asked = lesson_links("foundations", 2)[-1]
    for log in logs:
        seen = set(log.steps[-1].sliders) | {k for k in asked if f"{k}=" in (log.steps[-1].share_link or "")}
        assert seen & set(asked), (asked, log.steps[-1].share_link)
    assert report["server"]["rss_peak_mb"] > 0 and report["server"]["cpu_seconds"] > 0


def test_a_slider_that_shows_another_value_is_reported():
    shown = PageRun(0.1, "finished", sliders={"fd.problem.x0": [0.5]},
                    share_link="http://h/foundations?fd.problem.kappa=100")
    assert mismatches({"fd.problem.x0": 0.5, "fd.problem.kappa": 100.0}, shown) == []
    wrong = mismatches({"fd.problem.x0": 0.52, "fd.problem.kappa": 1000.0}, shown)
    assert len(wrong) == 2 and "x0" in wrong[0] and "kappa" in wrong[1]


def test_the_commands_in_the_serving_guide_parse():
    """docs/serving.md's harness and warm command lines are accepted by their parsers (flags, pages, scenarios)."""
    import re
    import shlex
    from pathlib import Path

    from app import warm
    from app.loadtest.__main__ import parse

    guide = (Path(__file__).resolve().parents[2] / "docs" / "serving.md").read_text()
    lines = re.findall(r"python -m app\.(loadtest|warm) ([^`#\n]*)", guide)
    assert {kind for kind, _ in lines} == {"loadtest", "warm"}
    for kind, rest in lines:
        argv = shlex.split(rest)
        if kind == "loadtest":
            parse(argv)
        else:
            warm.parse(argv)


@pytest.mark.slow
def test_a_real_browser_steps_through_the_lesson_beside_a_student(tmp_path):
    """The harness's browser mode, in its own process (as a lecturer runs it): each history step reruns the page
    and is timed; none is lost (a lost one timed out) and none shows an exception."""
    import json
    import subprocess
    import sys

    from app.loadtest.browsers import chromium

    if chromium() is None:
        pytest.skip("no Chromium for the browser mode (.ci/run installs it: apt-get install chromium)")
    out = tmp_path / "report.json"
    subprocess.run([sys.executable, "-m", "app.loadtest", "--students", "1", "--browsers", "1", "--steps", "3",
                    "--page", "foundations", "--timeout", "120", "--json", str(out)], check=True, timeout=600)
    browsers = json.loads(out.read_text())["browsers"]
    assert browsers["failures"] == []
    assert browsers["steps"]["n"] == 3 and browsers["exception_boxes"] == 0

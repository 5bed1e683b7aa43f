"""A simulated class: N students on one page, each a websocket client (protocol.py), started a random 0–``spread``
seconds after the test begins, opening the page and stepping through their links (lessons.py).

Scenarios:
- lecture: everyone steps through the same lesson links;
- drag: everyone drags sliders of their own (their own values, seeded by their number);
- heavy-neighbour: student 0 runs the page's heaviest allowed configuration (a fresh one every step) while
  the others follow the lecture.

A step that lands on a page waiting for its Run button (a run estimated over a few seconds) presses Run, as a
student would; the step's time is then the link's run plus the Run's.
"""
from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field, replace
from typing import Any, Mapping
from urllib.parse import parse_qs, urlsplit

from .lessons import drag_links, heavy_link, lesson_links, notch_links, query_string, url_text
from .protocol import PageRun, Student

SCENARIOS = ("lecture", "drag", "heavy-neighbour", "notch")
PREFIX = {"foundations": "fd", "sparse": "sp", "multitask": "mt", "smm": "smm", "metric": "ml", "npsvc": "np"}


@dataclass
class StudentLog:
    number: int
    role: str  # lecture | drag | heavy | notch
    first_load: PageRun | None = None
    steps: list[PageRun] = field(default_factory=list)
    pressed_run: int = 0
    wrong_state: list[str] = field(default_factory=list)  # the last step shows other values than the student asked
    failure: str | None = None  # could not connect at all


def links_for(scenario: str, page: str, student: int, steps: int) -> tuple[str, list[dict[str, Any]]]:
    if scenario == "drag":
        return "drag", drag_links(page, steps, student)
    if scenario == "heavy-neighbour" and student == 0:
        # a configuration not run before on every step: the heavy one with the student's own drag values
        return "heavy", [heavy_link(page) | link for link in drag_links(page, steps, 10_000 + student)]
    if scenario == "notch":
        return "notch", notch_links(page, steps)
    return "lecture", lesson_links(page, steps)


def mismatches(asked: Mapping[str, Any], shown: PageRun) -> list[str]:
    """Values the page does not show as asked: a plain slider's own value, else the page's share link; a key
    the page leaves out of its link (its default) and draws on no plain slider cannot be checked here."""
    link = parse_qs(urlsplit(shown.share_link or "").query, keep_blank_values=True)
    wrong = []
    for key, value in asked.items():
        if key in shown.sliders and isinstance(value, (int, float)):
            if not math.isclose(shown.sliders[key][0], float(value), rel_tol=1e-9, abs_tol=1e-12):
                wrong.append(f"{key}: asked {value}, the slider shows {shown.sliders[key][0]}")
        elif key in link and link[key] != url_text(value):
            wrong.append(f"{key}: asked {url_text(value)}, the page's link has {link[key]}")
    return wrong


async def visit(student: Student, query: str, page: str) -> tuple[PageRun, bool]:
    """Open ``query`` on the page and, when the page then waits for its Run button, press it (as a student would);
    the run's time is then both runs'. Returns the run and whether Run was pressed."""
    run = await student.step(query)
    run_key = f"{PREFIX[page]}.run"
    if not (run.ok and run.needs_run and run_key in run.buttons):
        return run, False
    second = await student.press(run.buttons[run_key])
    return replace(second, seconds=run.seconds + second.seconds, exceptions=run.exceptions + second.exceptions,
                   errors=run.errors + second.errors, query=run.query), True


async def one_student(url: str, page: str, scenario: str, number: int, steps: int, *, delay: float,
                      think: float, timeout: float) -> StudentLog:
    role, links = links_for(scenario, page, number, steps)
    log = StudentLog(number, role)
    await asyncio.sleep(delay)
    student = Student(url, page, timeout=timeout)
    try:
        await student.connect()
    except Exception as exc:  # refused, reset, timed out: the student could not come in
        log.failure = f"connect: {type(exc).__name__}: {exc}"
        return log
    try:
        log.first_load, pressed = await visit(student, "", page)
        log.pressed_run += pressed
        for link in links:
            if not log.first_load.ok or (log.steps and not log.steps[-1].ok):
                break  # the connection is gone: the failure is recorded, the remaining steps are not tried
            await asyncio.sleep(think)
            run, pressed = await visit(student, query_string(link), page)
            log.steps.append(run)
            log.pressed_run += pressed
        if log.steps and log.steps[-1].ok:
            log.wrong_state = mismatches(links[len(log.steps) - 1], log.steps[-1])
    finally:
        student.close()
    return log


async def run_class(url: str, page: str, scenario: str, students: int, steps: int, *, spread: float = 2.0,
                    think: float = 0.5, timeout: float = 300.0, seed: int = 0) -> list[StudentLog]:
    """Every student's log; starts are a random 0–``spread`` s after the call (seeded), the heavy student first."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    rng = random.Random(seed)
    delays = [0.0 if scenario == "heavy-neighbour" and i == 0 else rng.uniform(0, spread) for i in range(students)]
    return await asyncio.gather(*(one_student(url, page, scenario, i, steps, delay=delays[i], think=think,
                                              timeout=timeout) for i in range(students)))

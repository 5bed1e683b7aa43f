"""``python -m app.loadtest --students 40 --page foundations --scenario lecture [--url URL] [--json FILE]``

Simulates a class on one lecture server and prints a Markdown table (and writes JSON with ``--json``): per-step
and first-load p50/p95/p99/max, failures, exception elements, and the server's RSS and CPU (the server process
and its children). Without ``--url`` it starts ``streamlit run app/main.py`` itself on a free port with the
lecture settings (app/serve.py) and stops it afterwards.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import time
from pathlib import Path

from .classroom import SCENARIOS, run_class
from .following import run_follow
from .lessons import PAGES, drag_links, lesson_links, notch_links
from .protocol import Student
from .report import build, follow_report, markdown
from .server import LectureServer, Monitor, server_pid, wait_idle
from app.ui.follow import KEY_ENV


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m app.loadtest", description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, default=10, help="simulated students (websocket clients)")
    p.add_argument("--page", default="foundations", choices=[*PAGES, "all"], help="the page, or every page in turn")
    p.add_argument("--scenario", default="lecture", choices=[*SCENARIOS, "follow"],
                   help="follow: a lecturer leads the page and every student follows it (follow mode)")
    p.add_argument("--lecturer-key", default=secrets.token_hex(8),
                   help="follow: the server's OPTLAB_LECTURER_KEY (default: a new one, for the server started here)")
    p.add_argument("--steps", type=int, default=5, help="links each student steps through after opening the page")
    p.add_argument("--url", help="a running server (default: start one here)")
    p.add_argument("--pid", type=int, help="the running server's process id, for its RSS and CPU (default: the "
                                          "process listening on the URL's port, when this machine shows it)")
    p.add_argument("--json", type=Path, help="write the report as JSON to this file")
    p.add_argument("--browsers", type=int, default=0, help="real Chromium pages (Playwright) beside the students")
    p.add_argument("--spread", type=float, default=2.0, help="students start a random 0–SPREAD seconds after the "
                                                            "test begins")
    p.add_argument("--think", type=float, default=0.5, help="seconds a student waits between steps")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds one page run may take before it counts "
                                                               "as a failure")
    p.add_argument("--settle", type=float, default=5.0, help="seconds to wait after the sessions close before "
                                                            "reading the server's RSS again")
    p.add_argument("--server-log", type=Path, help="where the started server writes its log")
    args = p.parse_args(argv)
    if args.students < 0 or args.steps < 1 or args.browsers < 0 or args.students + args.browsers < 1:
        p.error("--steps must be at least 1, and --students and --browsers at least 0 with one of them at least 1")
    return args


async def follow_page(url: str, pid: int | None, page: str, args: argparse.Namespace) -> dict:
    monitor = Monitor(pid).start() if pid else None
    result = await run_follow(url, page, args.students, args.steps, args.lecturer_key, spread=args.spread,
                              timeout=args.timeout, cpu=(lambda: monitor.sample().cpu) if monitor else None)
    if monitor:
        monitor.stop()
    config = {"page": page, "scenario": "follow", "students": args.students, "steps": args.steps, "url": url,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    return follow_report(config, result, monitor.samples if monitor else [])


async def one_page(url: str, pid: int | None, page: str, args: argparse.Namespace) -> dict:
    if args.scenario == "follow":
        return await follow_page(url, pid, page, args)
    # the lecturer opens the page before the class does: the server has imported it and the RSS the report starts
    # from is that of a server showing the page, once what the opening set off has finished (NPSVC++ prepares
    # torch in the workers), not of one that has run nothing yet
    async with Student(url, page, timeout=args.timeout) as lecturer:
        await lecturer.open("")
    if pid:
        await asyncio.to_thread(wait_idle, pid)
    monitor = Monitor(pid).start() if pid else None
    browsers = []
    if args.browsers:
        from .browsers import run_browsers

        links = [drag_links(page, args.steps, 1000 + k) if args.scenario == "drag" else
                 notch_links(page, args.steps) if args.scenario == "notch" else lesson_links(page, args.steps)
                 for k in range(args.browsers)]
        browsers_task = asyncio.ensure_future(run_browsers(url, page, links, think=args.think, timeout=args.timeout))
    logs = await run_class(url, page, args.scenario, args.students, args.steps, spread=args.spread,
                           think=args.think, timeout=args.timeout)
    if args.browsers:
        browsers = await browsers_task
    after_close = None
    if monitor:
        monitor.stop()
        await asyncio.sleep(args.settle)
        after_close = monitor.sample()
    config = {"page": page, "scenario": args.scenario, "students": args.students, "steps": args.steps,
              "browsers": args.browsers, "spread": args.spread, "think": args.think, "url": url,
              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    return build(config, logs, monitor.samples if monitor else [], after_close, browsers)


async def main_async(args: argparse.Namespace) -> list[dict]:
    pages = PAGES if args.page == "all" else (args.page,)
    async def each_page(url: str, pid: int | None) -> list[dict]:
        reports = []
        for page in pages:  # printed as each page ends: a run over every page takes a while
            reports.append(await one_page(url, pid, page, args))
            print(markdown(reports[-1]), end="\n\n", flush=True)
        return reports

    if args.url:
        return await each_page(args.url.rstrip("/"), args.pid or server_pid(args.url))
    with LectureServer(log=args.server_log, env={KEY_ENV: args.lecturer_key}) as server:
        return await each_page(server.url, server.pid)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    reports = asyncio.run(main_async(args))
    if args.json:
        args.json.write_text(json.dumps(reports if len(reports) > 1 else reports[0], indent=2))
    clean = all(not r["failures"] and r["steps_finished"] == r["steps_expected"] for r in reports)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())

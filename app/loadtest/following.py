"""The follow scenario: a lecturer leads a page, N students follow it (app/ui/follow.py).

The lecturer opens the page with the lecturer key, turns on the lead and steps through the lesson's links,
waiting ``pause`` seconds after each. Each student opens the page, turns on "Follow the lecturer" and then does
what the browser does for a ``st.fragment(run_every=...)``: asks for the fragment's rerun at its interval. A
check whose version moved turns into a full page run; the student records when it finished and which
configuration it showed. The report gives the follow latency (from the end of the lecturer's run to the end of
the student's), the students whose last page shows the lecturer's last configuration, and the server's CPU in a
quiet phase (followers checking, nobody changing anything): the cost of following itself.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from .classroom import PREFIX
from .lessons import lesson_links, query_string
from .protocol import PageRun, Student


@dataclass
class Follower:
    number: int
    finished: list[tuple[float, str | None]] = field(default_factory=list)  # (when, share link) of each full run
    checks: int = 0
    failure: str | None = None


def _state(link: str | None, prefix: str) -> dict[str, list[str]]:
    query = parse_qs(urlsplit(link or "").query, keep_blank_values=True)
    return {k: v for k, v in query.items() if k.startswith(prefix)}


async def follower(url: str, page: str, number: int, stop: asyncio.Event, *, delay: float,
                   timeout: float) -> Follower:
    out = Follower(number)
    await asyncio.sleep(delay)
    try:
        async with Student(url, page, timeout=timeout) as student:
            first = await student.open("")
            switch = first.toggles.get(f"_follow.on.{PREFIX[page]}.")
            if switch is None:
                out.failure = "no “Follow the lecturer” toggle: is OPTLAB_LECTURER_KEY set on the server?"
                return out
            run = await student.toggle(switch, True)
            out.finished.append((time.monotonic(), run.share_link))
            while not stop.is_set() and student.fragments:
                fragment_id, interval = next(iter(student.fragments.items()))
                try:
                    await asyncio.wait_for(stop.wait(), interval)
                except asyncio.TimeoutError:
                    pass
                if stop.is_set():
                    break
                run = await student.fragment(fragment_id)
                out.checks += 1
                if not run.ok:
                    out.failure = f"{run.status}: {run.detail}"
                    return out
                if run.full:
                    out.finished.append((time.monotonic(), run.share_link))
    except Exception as exc:  # could not connect: recorded, the class goes on
        out.failure = f"{type(exc).__name__}: {exc}"
    return out


async def run_follow(url: str, page: str, students: int, steps: int, key: str, *, pause: float = 3.0,
                     quiet: float = 10.0, spread: float = 2.0, timeout: float = 300.0,
                     cpu=None) -> dict:
    """Run the scenario; ``cpu()`` (optional) returns the server's CPU seconds so far, for the quiet phase."""
    stop = asyncio.Event()
    prefix = PREFIX[page] + "."
    async with Student(url, page, timeout=timeout) as lecturer:
        lead = (await lecturer.open(query_string({"lecturer": key}))).toggles.get(f"_follow.lead.{prefix}")
        if lead is None:
            raise RuntimeError("the lecturer key was not accepted: start the server with OPTLAB_LECTURER_KEY set "
                               "to the key given to --lecturer-key")
        await lecturer.toggle(lead, True)
        tasks = [asyncio.ensure_future(follower(url, page, i, stop, delay=spread * i / max(students, 1),
                                                timeout=timeout)) for i in range(students)]
        await asyncio.sleep(spread + 3.0)  # everyone in and following
        quiet_cpu = None
        if cpu is not None:  # the cost of following itself: checks only, nothing changes
            before, start = cpu(), time.monotonic()
            await asyncio.sleep(quiet)
            quiet_cpu = (cpu() - before) / (time.monotonic() - start)
        changes: list[tuple[float, float, dict]] = []  # (request sent, run ended, the state it published)
        lecturer_runs: list[PageRun] = []
        for link in lesson_links(page, steps):
            sent = time.monotonic()
            run = await lecturer.step(query_string(link))
            lecturer_runs.append(run)
            changes.append((sent, time.monotonic(), _state(run.share_link, prefix)))
            await asyncio.sleep(pause)
        stop.set()
        followers = await asyncio.gather(*tasks)
    latencies, missed = [], 0
    for f in followers:
        for sent, ended, state in changes:
            # the first of the student's page runs that shows the lecturer's new state; a student may finish it
            # before the lecturer's own client has read the end of the lecturer's run (then 0)
            shown = [t for t, link in f.finished if t > sent and _state(link, prefix) == state]
            if shown:
                latencies.append(max(min(shown) - ended, 0.0))
            else:
                missed += 1
    last = changes[-1][2] if changes else {}
    in_sync = sum(bool(f.finished) and _state(f.finished[-1][1], prefix) == last for f in followers)
    return {"followers": students, "lecturer_steps": len(changes), "latencies": latencies, "missed_changes": missed,
            "in_sync_at_end": in_sync, "checks": sum(f.checks for f in followers),
            "failures": [f"student {f.number}: {f.failure}" for f in followers if f.failure],
            "lecturer_failures": [r.detail for r in lecturer_runs if not r.ok],
            "quiet_cores_busy": None if quiet_cpu is None else round(quiet_cpu, 3)}

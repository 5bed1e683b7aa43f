"""The load test's report: per-step and first-load percentiles, failures, exception elements, the server's memory
and CPU, as a JSON-able dict and as a Markdown table."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .classroom import StudentLog
from .server import Sample

MB = 2**20


def percentiles(seconds: Sequence[float]) -> dict[str, Any]:
    if not seconds:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "max": None}
    x = np.asarray(seconds, dtype=float)
    p50, p95, p99 = np.percentile(x, [50, 95, 99])
    return {"n": int(x.size), "p50": round(float(p50), 3), "p95": round(float(p95), 3),
            "p99": round(float(p99), 3), "max": round(float(x.max()), 3)}


def _runs(logs: Sequence[StudentLog], role: str | None) -> tuple[list, list]:
    chosen = [log for log in logs if role is None or log.role == role]
    firsts = [log.first_load for log in chosen if log.first_load is not None]
    steps = [run for log in chosen for run in log.steps]
    return firsts, steps


def server_summary(samples: Sequence[Sample], after_close: Sample | None) -> dict[str, Any] | None:
    """RSS at the start, its peak and after the sessions closed; CPU seconds and mean busy cores over the test."""
    if not samples:
        return None
    start, end = samples[0], samples[-1]
    wall = max(end.t - start.t, 1e-9)
    out = {"rss_start_mb": round(start.rss / MB), "rss_peak_mb": round(max(s.rss for s in samples) / MB),
           "rss_end_mb": round(end.rss / MB), "cpu_seconds": round(end.cpu - start.cpu, 1),
           "busy_cores": round((end.cpu - start.cpu) / wall, 2), "wall_seconds": round(wall, 1)}
    if after_close is not None:
        out["rss_after_close_mb"] = round(after_close.rss / MB)
    return out


def build(config: dict[str, Any], logs: Sequence[StudentLog], samples: Sequence[Sample],
          after_close: Sample | None = None, browsers: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    firsts, steps = _runs(logs, None)
    every = [*firsts, *steps]
    failures = [f"student {log.number}: {log.failure}" for log in logs if log.failure]
    failures += [f"student {log.number}: {run.status}: {run.detail}" for log in logs
                 for run in ([log.first_load] if log.first_load else []) + log.steps if not run.ok]
    expected = config["students"] * config["steps"]
    report: dict[str, Any] = {
        "config": config,
        "steps": percentiles([r.seconds for r in steps if r.ok]),
        "first_load": percentiles([r.seconds for r in firsts if r.ok]),
        "steps_finished": sum(r.ok for r in steps),
        "steps_expected": expected,
        "failures": failures,
        "exception_elements": sum(len(r.exceptions) for r in every),
        "exceptions": sorted({f"{e} (at ?{r.query})" for r in every for e in r.exceptions})[:10],
        "error_boxes": sum(len(r.errors) for r in every),
        "errors": sorted({f"{e} (at ?{r.query})" for r in every for e in r.errors})[:10],
        "run_presses": sum(log.pressed_run for log in logs),
        "wrong_last_state": [f"student {log.number}: {w}" for log in logs for w in log.wrong_state],
        "server": server_summary(samples, after_close),
    }
    roles = sorted({log.role for log in logs})
    if len(roles) > 1:
        report["by_role"] = {role: {"steps": percentiles([r.seconds for r in _runs(logs, role)[1] if r.ok]),
                                    "first_load": percentiles([r.seconds for r in _runs(logs, role)[0] if r.ok])}
                             for role in roles}
    if browsers:
        report["browsers"] = {"steps": percentiles([s for b in browsers for s in b["steps"]]),
                              "first_load": percentiles([b["first_load"] for b in browsers if b["first_load"]]),
                              "failures": [b["failure"] for b in browsers if b["failure"]],
                              "history_steps_resent": sum(b["resent"] for b in browsers),
                              "exception_boxes": sum(b["exceptions"] for b in browsers),
                              "each": [[round(s, 3) for s in b["steps"]] for b in browsers]}  # in step order
    return report


def _cell(stats: dict[str, Any], name: str) -> str:
    return "—" if stats.get(name) is None else f"{stats[name]:.2f} s"


def markdown(report: dict[str, Any]) -> str:
    """One row per group of students (all, or per role, and the browsers), then the server's line."""
    if report["config"]["scenario"] == "follow":
        return follow_markdown(report)
    c = report["config"]
    rows = [("all students", report["steps"], report["first_load"])]
    rows += [(f"{role} students", v["steps"], v["first_load"]) for role, v in report.get("by_role", {}).items()]
    if "browsers" in report:
        rows.append(("browsers", report["browsers"]["steps"], report["browsers"]["first_load"]))
    lines = [f"**{c['scenario']}**, {c['students']} students × {c['steps']} steps on {c['page']}"
             + (f" (+ {c['browsers']} browsers)" if c.get("browsers") else ""),
             "",
             "| who | steps | p50 | p95 | p99 | max | first load p50 | first load p95 |",
             "|---|---|---|---|---|---|---|---|"]
    for who, s, f in rows:
        lines.append(f"| {who} | {s['n']} | {_cell(s, 'p50')} | {_cell(s, 'p95')} | {_cell(s, 'p99')} | "
                     f"{_cell(s, 'max')} | {_cell(f, 'p50')} | {_cell(f, 'p95')} |")
    lines.append("")
    lines.append(f"Steps finished {report['steps_finished']}/{report['steps_expected']}, failures "
                 f"{len(report['failures'])}, exception elements {report['exception_elements']}, st.error boxes "
                 f"{report['error_boxes']}, Run presses {report['run_presses']}, students whose last step shows "
                 f"other values {len({w.split(':')[0] for w in report['wrong_last_state']})}.")
    if "browsers" in report:
        b = report["browsers"]
        lines.append(f"Browsers: failures {b['failures'] or 0}, exception elements {b['exception_boxes']}, history "
                     f"steps the page missed and the harness sent again {b['history_steps_resent']}.")
    srv = report.get("server")
    if srv:
        lines.append(f"Server: RSS {srv['rss_start_mb']} → peak {srv['rss_peak_mb']} MB"
                     + (f", {srv['rss_after_close_mb']} MB after the sessions closed" if "rss_after_close_mb" in srv
                        else "")
                     + f"; {srv['cpu_seconds']} CPU s in {srv['wall_seconds']} s ({srv['busy_cores']} cores busy).")
    return "\n".join(lines)


def follow_report(config: dict[str, Any], result: dict[str, Any], samples: Sequence[Sample]) -> dict[str, Any]:
    """The follow scenario's report, with the keys ``main`` reads (steps finished = followers in sync at the end)."""
    report = {"config": config, **{k: v for k, v in result.items() if k != "latencies"},
              "follow_latency": percentiles(result["latencies"]),
              "steps_finished": result["in_sync_at_end"], "steps_expected": result["followers"],
              "failures": result["failures"] + result["lecturer_failures"],
              "server": server_summary(samples, None)}
    return report


def follow_markdown(report: dict[str, Any]) -> str:
    lat, srv = report["follow_latency"], report.get("server")
    lines = [f"**follow**, {report['followers']} students follow the lecturer through {report['lecturer_steps']} "
             f"steps on {report['config']['page']}", "",
             "| follow latency | n | p50 | p95 | p99 | max |", "|---|---|---|---|---|---|",
             f"| lecturer's run end → student's run end | {lat['n']} | {_cell(lat, 'p50')} | {_cell(lat, 'p95')} | "
             f"{_cell(lat, 'p99')} | {_cell(lat, 'max')} |", "",
             f"Students showing the lecturer's last configuration at the end: {report['in_sync_at_end']}/"
             f"{report['followers']}; changes a student never showed {report['missed_changes']}; checks "
             f"{report['checks']}; failures {len(report['failures'])}."]
    if report.get("quiet_cores_busy") is not None:
        lines.append(f"Following with nothing changing keeps {report['quiet_cores_busy']} cores busy.")
    if srv:
        lines.append(f"Server: RSS {srv['rss_start_mb']} → peak {srv['rss_peak_mb']} MB; {srv['cpu_seconds']} CPU s "
                     f"in {srv['wall_seconds']} s ({srv['busy_cores']} cores busy).")
    return "\n".join(lines)

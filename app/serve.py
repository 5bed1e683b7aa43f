"""A lecturer's server: ``python -m app.serve [--host 0.0.0.0] [--port 8501]`` (what ``make serve`` runs).

The settings a shared server wants, on top of the repository's .streamlit/config.toml: headless (no browser
opened on the server), no file watcher and no run-on-save (a class must not rerun when someone edits a file),
and the "viewer" toolbar (students see no Deploy button and no developer menu). The load test
(``python -m app.loadtest``) starts its server with the same settings.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LECTURE_SETTINGS = {
    "server.headless": "true",
    "server.fileWatcherType": "none",
    "server.runOnSave": "false",
    "client.toolbarMode": "viewer",
    "browser.gatherUsageStats": "false",
}


#: the server process draws pages and runs small solves between the worker processes (app/workers.py, one per core,
#: one BLAS thread each): idle BLAS threads in it spin after every small product, 30–60 ms of CPU a page rerun
ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
#: glibc gives every thread that allocates an arena of its own (up to 8 per core), and Streamlit runs each session's
#: script in a thread: what forty sessions freed stayed in their arenas. Two arenas: after a cold 40-student SMM
#: lecture the server kept 1086 MB of its 840 at the start, against 1321 of 844 with glibc's default (same p95)
FEW_ARENAS = {"MALLOC_ARENA_MAX": "2"}


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment: this one, one BLAS thread and two malloc arenas unless the lecturer set them,
    then ``extra``."""
    return {**ONE_THREAD, **FEW_ARENAS, **os.environ, **(extra or {})}


def command(host: str, port: int) -> list[str]:
    """The ``streamlit run`` command line of a lecture server on ``host:port``."""
    flags = [part for name, value in LECTURE_SETTINGS.items() for part in (f"--{name}", value)]
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.address", host,
            "--server.port", str(port), *flags]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m app.serve", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (0.0.0.0: every network interface)")
    parser.add_argument("--port", type=int, default=8501)
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # .streamlit/config.toml is read from the working directory
    cmd = command(args.host, args.port)
    os.execve(cmd[0], cmd, environment())


if __name__ == "__main__":
    main()

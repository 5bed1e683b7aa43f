"""The server under test: started here with the lecture settings (app/serve.py), or found by its port; and a
monitor that samples its memory and CPU (the Streamlit process and every process it started)."""
from __future__ import annotations

import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from app.serve import ROOT, command, environment


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the server at {url} did not answer /_stcore/health within {timeout:g} s")


class LectureServer:
    """``with LectureServer(log=path) as server: server.url, server.pid`` (stopped on leaving)."""

    def __init__(self, log: Path | None = None, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self._env = environment(env)
        self.url = f"http://127.0.0.1:{self.port}"
        self._log_path = log
        self._proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def __enter__(self) -> "LectureServer":
        out = open(self._log_path, "w") if self._log_path else subprocess.DEVNULL
        self._proc = subprocess.Popen(command("127.0.0.1", self.port), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                      env=self._env)
        try:
            wait_healthy(self.url)
        except RuntimeError:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def server_pid(url: str) -> int | None:
    """The process listening on the URL's port on this machine, or None (another machine, or not permitted)."""
    port = urlsplit(url).port or (443 if url.startswith("https") else 80)
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return conn.pid
    except (psutil.AccessDenied, PermissionError):
        return None
    return None


@dataclass
class Sample:
    t: float  # seconds since the monitor started
    rss: int  # bytes, the server and its children
    cpu: float  # CPU seconds (user + system) used so far, the server and its children


def wait_idle(pid: int, timeout: float = 60.0, busy: float = 0.1, every: float = 1.0) -> bool:
    """Until the server and its children together use under ``busy`` cores over ``every`` seconds (what opening a
    page set off has finished: NPSVC++ prepares torch in the workers), or ``timeout`` seconds. True when idle."""
    monitor = Monitor(pid)
    deadline = time.monotonic() + timeout
    before = monitor.sample()
    while time.monotonic() < deadline:
        time.sleep(every)
        now = monitor.sample()
        if now.cpu - before.cpu < busy * (now.t - before.t):
            return True
        before = now
    return False


@dataclass
class Monitor:
    """Samples the server's RSS and CPU every ``every`` seconds in a thread while it is started."""

    pid: int
    every: float = 0.5
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._root = psutil.Process(self.pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._t0 = time.monotonic()

    def sample(self) -> Sample:
        procs = [self._root]
        try:
            procs += self._root.children(recursive=True)
        except psutil.Error:
            pass
        rss, cpu = 0, 0.0
        for p in procs:  # a child that has exited takes its CPU seconds with it: worker pools live as long as the server
            try:
                with p.oneshot():
                    times = p.cpu_times()
                    rss += p.memory_info().rss
                    cpu += times.user + times.system
            except psutil.Error:
                continue
        return Sample(time.monotonic() - self._t0, rss, cpu)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.sample())
            self._stop.wait(self.every)

    def start(self) -> "Monitor":
        self.samples.append(self.sample())
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.samples.append(self.sample())

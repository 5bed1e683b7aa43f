"""Solver runs in worker processes, so that a server uses every core and its own interpreter stays free for
page reruns.

Configuration: ``OPTLAB_WORKERS`` is the number of worker processes. Unset, a Streamlit server on Linux or
macOS starts one per core; a script with no Streamlit server behind it (AppTest, bare mode) and a server on
Windows run solvers in their own process. ``OPTLAB_WORKERS=0`` runs them in the server process (as before
this module existed).

The pool is started once per server (the first run starts it) and shared by every session:

- **Single flight.** Runs are identified by their run key (``app.ui.runs.config_key``): a key already queued
  or running is not started again; every session that asks for it subscribes and gets the same rows and result.
- **Latest wins.** A session subscribes to one set of keys at a time; subscribing to another set drops the
  old one, and a run nobody waits for any more is cancelled (taken off the queue, or stopped in its worker).
- **Fair share.** A running run is charged to one of its subscribers, and no session is charged for two at
  once: one student's three methods queue behind each other while another student's run starts, and a run
  many students share is charged to one not charged yet. Otherwise the queue is first come, first served (a
  burst of new sessions starts in the order it arrived).
- **Idle cores are lent.** A worker that no uncharged session's run waits for takes a queued run anyway (a
  lone student's second method, side by side with the first). The loan ends as soon as another session's run
  waits: the lent run is stopped and queued again, first in line, and that worker goes to the waiting run.
- **Long runs yield.** A run that has used ``DEMOTE_AFTER_CPU_SECONDS`` of CPU drops to nice
  ``LONG_RUN_NICE`` (Linux, where the nice value is a thread's: each run has a thread of its own, and the next
  run starts at the normal priority again). It still takes every idle cycle, but the page reruns and the short
  runs of a class go first, so one student's long run costs the others little more than its core.
- **Faults.** A worker that dies is replaced; the run it held fails with a message saying so. A cancelled run
  whose solver does not reach its callback within ``KILL_AFTER_SECONDS`` has its worker killed and replaced.

A run is shipped as a cloudpickled ``run(callback) -> Result`` (the page's closure over its problem object),
pickled when a worker takes it; its large arrays go to each worker once (app/payloads.py).
Its callback rows come back in batches every ``FLUSH_SECONDS`` for the live charts; between batches the
worker checks for a stop, and the callback then returns False, which ends the solver with status ``stopped``.

Workers are plain ``python -m app.workers FD`` processes joined to the server by a socket pair, rather than
multiprocessing's spawn or forkserver children: those re-import the parent's ``__main__``, which under
Streamlit is whichever page script is running at that moment (a socket pair handed to a child process is
POSIX only). Each worker's BLAS and OpenMP use one thread (one worker per core) unless the environment sets
their thread counts.
"""
from __future__ import annotations

import atexit
import logging
import os
import pickle
import queue
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, Sequence

from app import payloads
from app.memory import release_free_memory

log = logging.getLogger(__name__)

WORKERS_ENV = "OPTLAB_WORKERS"
FLUSH_SECONDS = 0.1  # how often a worker sends its new rows and looks for a stop
KILL_AFTER_SECONDS = 5.0  # a cancelled run still busy after this long has its worker killed
DEMOTE_AFTER_CPU_SECONDS = 1.0  # a run's CPU at full priority: a lecture's fresh runs take well under a second
LONG_RUN_NICE = 10  # the scheduler then gives a long run ≈ 1/10 of a core that others want (weights 110 : 1024)
DETACH_GRACE_SECONDS = 10.0  # how long a run interrupted by a rerun waits for its session to come back
WORKER_ARRAY_BYTES = 512 << 20  # the shared arrays a worker keeps (app/payloads.py), least recently used dropped
TRIM_EVERY_SECONDS = 5.0  # how often the server gives freed memory back while no run is in flight (app/memory.py)
# imported by each worker as it starts, so a first run does not wait for numpy, scipy, pandas and scikit-learn;
# torch is not among them: only a deep NPSVC++ run imports it (≈1–5 s and a few hundred MB in every worker)
PRELOAD = ("solvers.foundations", "solvers.sparse", "solvers.multitask", "solvers.smm", "solvers.metric",
           "solvers.npsvc")
START_ATTEMPTS = 3  # workers in a row dying before they are ready: the pool gives up and says so
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
ROOT = Path(__file__).resolve().parents[1]

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"


def configured_workers(server: bool) -> int:
    """Worker processes to use: ``$OPTLAB_WORKERS``, else one per core under a server and 0 without one."""
    text = os.environ.get(WORKERS_ENV, "").strip()
    if not text:
        return (os.cpu_count() or 1) if server and os.name == "posix" else 0
    if not text.isdigit():
        raise ValueError(f"{WORKERS_ENV}={text!r}: give a whole number of worker processes "
                         "(0 runs solvers in the server process)")
    return int(text)


@dataclass(eq=False)
class Flight:
    """One run in the pool, shared by every session subscribed to its key."""

    key: str
    label: str
    seq: int  # submission order: the queue is first come, first served
    run: Callable | None  # pickled when a worker takes it (not while it queues); kept while it runs, in case a lent
    # worker is taken back and the run starts again
    subscribers: "OrderedDict[str, None]" = field(default_factory=OrderedDict)  # in order of subscription
    state: str = QUEUED
    rows: list = field(default_factory=list)
    result: Any = None
    error: tuple[str, str] | None = None  # (kind, message); kind: input | memory | failed | died
    started: int | None = None  # start order, for the fairness checks
    cancelled_at: float | None = None

    @property
    def finished(self) -> bool:
        return self.state in (DONE, FAILED, CANCELLED)


@dataclass
class Status:
    """What a subscriber sees of one run."""

    key: str
    label: str
    seq: int  # the run's number in this pool: a key started again after a cancel is another run
    state: str
    rows: list  # every row so far
    result: Any
    error: tuple[str, str] | None
    place: int | None  # 1-based place in the queue while queued


class _Worker:
    def __init__(self, index: int, unsendable: Callable[["_Worker", int, str], None]) -> None:
        parent, child = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        env.update({name: "1" for name in THREAD_ENV if name not in os.environ})
        # a session of its own: Ctrl-C on the server's terminal does not reach it; it exits when the server does
        self.proc = subprocess.Popen([sys.executable, "-m", "app.workers", str(child.fileno())], env=env,
                                     pass_fds=(child.fileno(),), start_new_session=True)
        child.close()
        self.conn = Connection(parent.detach())
        self.index = index
        self.flight: Flight | None = None
        self.ready = False
        self._unsendable = unsendable  # the pool's hook for a run that cannot be pickled
        self._held: OrderedDict[str, int] = OrderedDict()  # the shared arrays this worker holds: token -> bytes
        self._outbox: queue.Queue = queue.Queue()
        threading.Thread(target=self._send_loop, name=f"optlab-worker-{index}-send", daemon=True).start()

    def send(self, message: tuple) -> None:
        """Queued for the sender thread: a large job must not hold the pool's lock while the socket drains."""
        self._outbox.put(message)

    def _send_loop(self) -> None:
        while True:
            message = self._outbox.get()
            if message is None:
                return
            try:
                if message[0] == "run":
                    try:
                        payload, arrays = payloads.dumps(message[2])
                    except Exception as exc:  # noqa: BLE001 (the run's failure, shown on the page)
                        log.exception("run %s could not be pickled", message[1])
                        self._unsendable(self, message[1], f"it could not be sent to a worker process "
                                                           f"({type(exc).__name__}: {exc})")
                        continue
                    self._share(arrays)
                    message = ("run", message[1], payload)
                self._post(message)
            except OSError:  # the worker died; the reader thread notices and replaces it
                return

    def _post(self, message: tuple) -> None:
        self.conn.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _share(self, arrays: dict) -> None:
        """Send the worker the arrays of the next run it lacks, and have it drop the least recently used others
        beyond WORKER_ARRAY_BYTES."""
        for token, array in arrays.items():
            if token not in self._held:
                self._post(("array", token, array))
                self._held[token] = array.nbytes
            self._held.move_to_end(token)
        while sum(self._held.values()) > WORKER_ARRAY_BYTES and next(iter(self._held)) not in arrays:
            self._post(("forget", self._held.popitem(last=False)[0]))

    def retire(self) -> None:
        self._outbox.put(None)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.conn.close()


class Lease:
    """A session's subscription to its runs (in the page's order)."""

    def __init__(self, pool: "WorkerPool", session: str, flights: list[Flight]) -> None:
        self._pool, self.session, self.flights = pool, session, flights

    def poll(self) -> list[Status]:
        return self._pool._statuses(self.flights)

    def wait(self, timeout: float) -> None:
        """Until something changes in the pool, or ``timeout`` seconds."""
        with self._pool._changed:
            self._pool._changed.wait(timeout)

    def release(self) -> None:
        """The session is done with these runs (finished, stopped, or its tab closed)."""
        self._pool.release(self.session)

    def detach(self) -> None:
        """The session's script was interrupted by a rerun: keep the runs for it a while, in case it comes back."""
        self._pool.detach(self.session)


class WorkerPool:
    """``workers`` worker processes and the queue of runs they take, shared by every session of a server."""

    def __init__(self, workers: int, on_result: Callable[[str, Any], None] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"a worker pool needs at least one worker, got {workers}")
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._on_result = on_result
        self._flights: dict[str, Flight] = {}  # queued or running, by key
        self._queue: list[Flight] = []  # queued, in submission order
        self._sessions: dict[str, list[str]] = {}  # session -> the keys it waits for
        self._detached: dict[str, float] = {}  # session -> when a rerun interrupted it
        self._seq = 0
        self.started = 0  # runs started in a worker so far
        self.replaced = 0  # workers that died (or were killed) and were replaced
        self._closed = False
        self._broken: str | None = None  # why no worker can start, once that is clear
        self._failed_starts = 0  # workers in a row that died before they were ready
        self._prepared: list[str] = []  # what every worker has been asked to prepare (see ``prepare``)
        self._trimmed_at = time.monotonic()
        self._workers = [_Worker(i, self._unsendable) for i in range(workers)]
        self._reader = threading.Thread(target=self._read_loop, name="optlab-workers", daemon=True)
        self._reader.start()
        atexit.register(self.close)

    @property
    def size(self) -> int:
        return len(self._workers)

    def pids(self) -> list[int]:
        with self._lock:
            return [w.proc.pid for w in self._workers]

    def wait_ready(self, timeout: float) -> bool:
        """True once every worker process is up and listening (its preloading may go on)."""
        end = time.monotonic() + timeout
        with self._changed:
            while not all(w.ready for w in self._workers):
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def prepare(self, target: str) -> bool:
        """Every worker, and every worker that later replaces one, calls ``module:function`` once in the background
        (torch's imports and first-use costs, say, before a page's first deep run). True the first time a target is
        asked for, False after."""
        with self._lock:
            if target in self._prepared:
                return False
            self._prepared.append(target)
            for worker in self._workers:
                worker.send(("prepare", target))
        return True

    # ---- sessions -------------------------------------------------------------------------------------------
    def subscribe(self, session: str, jobs: Sequence[tuple[str, str, Callable]]) -> Lease:
        """Wait for ``jobs`` (key, label, run) on behalf of ``session``, queueing those not in flight.

        Latest wins: the session's previous runs that are not among ``jobs`` are dropped (and cancelled when
        nobody else waits for them). A run is pickled when a worker takes it, by that worker's sender thread: a queue
        of forty sessions' runs holds no pickled copies of their data, and a run that cannot be pickled fails with
        the reason.
        """
        keys = [key for key, _, _ in jobs]
        with self._lock:
            for old in self._sessions.get(session, []):
                if old not in keys:
                    self._unsubscribe(session, old)
            self._sessions[session] = keys
            self._detached.pop(session, None)
            flights = []
            for key, label, run in jobs:
                flight = self._flights.get(key)
                if flight is None:
                    flight = self._new_flight(key, label, run)
                flight.subscribers[session] = None
                flights.append(flight)
            self._schedule()
            self._changed.notify_all()
        return Lease(self, session, flights)

    def holds(self, session: str, keys: Sequence[str]) -> bool:
        """Whether ``session`` still waits for every one of ``keys`` (it may take them up again after a rerun)."""
        with self._lock:
            mine = self._sessions.get(session, [])
            return bool(keys) and all(k in mine and k in self._flights for k in keys)

    def release(self, session: str) -> None:
        with self._lock:
            for key in self._sessions.pop(session, []):
                self._unsubscribe(session, key)
            self._detached.pop(session, None)
            self._schedule()
            self._changed.notify_all()

    def detach(self, session: str) -> None:
        with self._lock:
            if session in self._sessions:
                self._detached[session] = time.monotonic()

    def _new_flight(self, key: str, label: str, run: Callable) -> Flight:
        self._seq += 1
        if self._broken:
            return Flight(key, label, self._seq, None, state=FAILED, error=("failed", self._broken))
        flight = Flight(key, label, self._seq, run)
        self._flights[key] = flight
        self._queue.append(flight)
        return flight

    def _unsubscribe(self, session: str, key: str) -> None:
        flight = self._flights.get(key)
        if flight is None:
            return
        flight.subscribers.pop(session, None)
        if flight.subscribers:
            return
        del self._flights[key]  # a later request for this key starts afresh
        if flight.state == QUEUED:
            self._queue.remove(flight)
        else:
            worker = self._worker_of(flight)
            if worker is not None:
                worker.send(("stop", flight.seq))
        flight.state, flight.cancelled_at, flight.run = CANCELLED, time.monotonic(), None

    # ---- scheduling -----------------------------------------------------------------------------------------
    def _worker_of(self, flight: Flight) -> _Worker | None:
        return next((w for w in self._workers if w.flight is flight), None)

    def _schedule(self) -> None:
        """Start queued runs on idle workers, first come, first served, each charged to a subscriber not charged
        for another running run; a run whose subscribers are all charged waits, unless a worker would otherwise
        stay idle: then it is lent that worker, until a run with an uncharged subscriber needs it back."""
        if not self._queue:
            return
        charged: set[str] = set()
        lent: list[_Worker] = []  # running runs charged to nobody, the latest started last
        for worker in sorted((w for w in self._workers if w.flight is not None and w.flight.state == RUNNING),
                             key=lambda w: w.flight.started):
            payer = _uncharged(worker.flight, charged)
            charged.update(payer)
            if not payer:
                lent.append(worker)
        idle = [w for w in self._workers if w.flight is None]
        for flight in list(self._queue):
            payer = _uncharged(flight, charged)
            if not payer:
                continue
            if idle:
                self._start(flight, idle.pop(0))
            elif lent:
                self._take_back(lent.pop())  # its worker takes this run once the lent one has stopped
            else:
                break
            charged.update(payer)
        for flight in list(self._queue)[:len(idle)]:
            self._start(flight, idle.pop(0))

    def _start(self, flight: Flight, worker: _Worker) -> None:
        self._queue.remove(flight)
        flight.state, flight.started = RUNNING, self.started
        self.started += 1
        worker.flight = flight
        worker.send(("run", flight.seq, flight.run))

    def _take_back(self, worker: _Worker) -> None:
        """Stop the lent run on ``worker`` and queue it again, first in line, as a new run of the same key (its
        subscribers keep waiting for it); the worker stays busy until the stopped run has reported."""
        flight = worker.flight
        worker.send(("stop", flight.seq))
        worker.flight = Flight(flight.key, flight.label, flight.seq, None, state=CANCELLED,
                               cancelled_at=time.monotonic())
        self._seq += 1
        flight.seq, flight.state, flight.rows, flight.started = self._seq, QUEUED, [], None
        self._queue.insert(0, flight)

    def _statuses(self, flights: list[Flight]) -> list[Status]:
        with self._lock:
            places = {id(f): i + 1 for i, f in enumerate(self._queue)}
            return [Status(f.key, f.label, f.seq, f.state, list(f.rows), f.result, f.error, places.get(id(f)))
                    for f in flights]

    def queue_length(self) -> int:
        with self._lock:
            return len(self._queue)

    # ---- the reader thread ------------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        while not self._closed:
            with self._lock:
                by_conn = {w.conn: w for w in self._workers}
            try:
                ready = wait(list(by_conn), timeout=0.25)
            except OSError:  # a connection closed under us by close()
                continue
            for conn in ready:
                worker = by_conn[conn]
                try:
                    message = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    self._replace(worker)
                    continue
                except Exception as exc:  # noqa: BLE001 (a result this process cannot unpickle)
                    message = ("error", worker.flight.seq if worker.flight else None, "failed",
                               f"its result could not be read back ({type(exc).__name__}: {exc})")
                self._handle(worker, message)
            self._housekeeping()

    def _unsendable(self, worker: _Worker, seq: int, reason: str) -> None:
        self._handle(worker, ("error", seq, "failed", reason))  # as if the worker had reported it

    def _handle(self, worker: _Worker, message: tuple) -> None:
        kind = message[0]
        with self._lock:
            if kind == "ready":
                worker.ready, self._failed_starts = True, 0
                self._changed.notify_all()
                return
            flight = worker.flight
            if flight is None or flight.seq != message[1]:
                return
            if kind == "rows":  # no notify: followers pick rows up at their own pace
                flight.rows.extend(message[2])
                return
            worker.flight, flight.run = None, None
            if flight.state != CANCELLED:
                self._flights.pop(flight.key, None)
                if kind == "done":
                    flight.rows.extend(message[3])
                    flight.state, flight.result = DONE, message[2]
                else:
                    flight.state, flight.error = FAILED, (message[2], message[3])
            self._schedule()
            self._changed.notify_all()
        if kind == "done" and flight.state == DONE and self._on_result is not None:
            self._on_result(flight.key, flight.result)

    def _replace(self, worker: _Worker) -> None:
        code = worker.proc.poll()
        if code is None:
            try:
                code = worker.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                code = worker.proc.wait()
        worker.retire()
        self._failed_starts = 0 if worker.ready else self._failed_starts + 1
        giving_up = self._failed_starts >= START_ATTEMPTS  # no worker can start here: say so instead of looping
        fresh = None if giving_up else _Worker(worker.index, self._unsendable)
        with self._lock:
            if fresh is None:
                self._workers.remove(worker)
            else:
                self._workers[self._workers.index(worker)] = fresh
                self.replaced += 1
                for target in self._prepared:
                    fresh.send(("prepare", target))
            flight = worker.flight
            if flight is not None and flight.state == RUNNING:
                self._flights.pop(flight.key, None)
                flight.run = None
                how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
                flight.state, flight.error = FAILED, ("died", f"the worker process running it stopped ({how}), most "
                                                      "likely out of memory. A fresh worker has taken its place: "
                                                      "choose a smaller problem, or press Run to try again")
                log.error("worker %d running %s died (%s); replaced", worker.index, flight.key, how)
            if giving_up and not self._broken:
                self._broken = (f"the solver processes cannot start on this server (exit code {code}; the server's "
                                f"log says why). Ask the lecturer to restart it with {WORKERS_ENV}=0, which runs "
                                "solvers in the server process")
                log.error("worker pool stopped: %s", self._broken)
            if self._broken:  # what waits would wait for ever
                for queued in self._queue:
                    queued.state, queued.error = FAILED, ("failed", self._broken)
                    self._flights.pop(queued.key, None)
                self._queue.clear()
            self._schedule()
            self._changed.notify_all()

    def _housekeeping(self) -> None:
        now = time.monotonic()
        with self._lock:
            for session, since in list(self._detached.items()):
                if now - since > DETACH_GRACE_SECONDS:
                    self.release(session)
            stuck = [w for w in self._workers if w.flight is not None and w.flight.state == CANCELLED
                     and now - w.flight.cancelled_at > KILL_AFTER_SECONDS]
        for worker in stuck:  # its solver has not reached a callback since the stop: free the core
            worker.proc.kill()
        if not self._flights and now - self._trimmed_at > TRIM_EVERY_SECONDS:  # closed sessions' pages, figures
            self._trimmed_at = now
            release_free_memory()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._reader.join(timeout=2)
        for worker in self._workers:
            worker.retire()
        atexit.unregister(self.close)


def _uncharged(flight: Flight, charged: set[str]) -> list[str]:
    """The first subscriber of ``flight`` not in ``charged`` (as a list of at most one)."""
    return next(([session] for session in flight.subscribers if session not in charged), [])


# ---- the worker process -----------------------------------------------------------------------------------------
def _serve(fd: int) -> None:
    import cloudpickle

    conn = Connection(fd)

    def send(message: tuple) -> None:
        try:
            conn.send_bytes(cloudpickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:  # the server has gone: nothing is waiting for this run
            os._exit(0)

    send(("ready", os.getpid()))
    held: dict[str, Any] = {}  # the shared arrays the server sent (app/payloads.py), by token
    threading.Thread(target=_preload, name="preload", daemon=True).start()  # a run arriving meanwhile waits for
    # the module it needs (the import lock), not for all of them
    while True:
        try:
            message = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if message[0] == "run":
            _run_one(conn, send, message[1], message[2], held)
            del message  # the pickled run: with it freed, the run's data and arrays go back to the system
            release_free_memory()
        elif message[0] == "array":
            held[message[1]] = payloads.hold(message[2])
        elif message[0] == "forget":
            held.pop(message[1], None)
            release_free_memory()
        elif message[0] == "prepare":
            threading.Thread(target=_prepare, args=(message[1],), name="prepare", daemon=True).start()
        # anything else is a stop for a run that has already ended


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)


def _prepare(target: str) -> None:
    """``module:function``, called once: a page's heavy imports and first-use costs, before its first run."""
    import importlib

    module, _, function = target.partition(":")
    try:
        getattr(importlib.import_module(module), function)()
    except Exception:  # noqa: BLE001 (only a head start: the run itself meets and reports the same problem)
        log.exception("preparing %s failed", target)


def _run_one(conn: Connection, send: Callable[[tuple], None], seq: int, payload: bytes, held: dict) -> None:
    """Run one payload in a thread of its own (its priority is the thread's: see ``_demote``), streaming rows."""
    from solvers.core import InputError

    rows: list[dict] = []
    stopped = demoted = False
    last = -FLUSH_SECONDS  # the first row goes at once: the page sees the run has started
    cpu_start = 0.0

    def callback(row: dict) -> bool | None:
        nonlocal last, stopped, demoted
        rows.append(row)
        now = time.monotonic()
        if now - last >= FLUSH_SECONDS:
            last = now
            send(("rows", seq, rows[:]))
            rows.clear()
            while conn.poll():
                message = pickle.loads(conn.recv_bytes())
                stopped = stopped or (message[0] == "stop" and message[1] == seq)
            if not demoted and time.thread_time() - cpu_start > DEMOTE_AFTER_CPU_SECONDS:
                demoted = True
                _demote()
        return False if stopped else None

    def run() -> None:
        nonlocal cpu_start
        cpu_start = time.thread_time()
        try:
            result = payloads.loads(payload, held)(callback)
        except InputError as exc:
            send(("error", seq, "input", str(exc)))
        except MemoryError as exc:
            send(("error", seq, "memory", str(exc)))
        except Exception as exc:  # noqa: BLE001 (the page shows a short message; this process's stderr the traceback)
            import traceback

            traceback.print_exc()
            send(("error", seq, "failed", f"{type(exc).__name__}: {exc}"))
        else:
            send(("done", seq, result, rows))

    thread = threading.Thread(target=run, name=f"run-{seq}")
    thread.start()
    thread.join()


def _demote() -> None:
    """Lower the calling thread's CPU priority to ``LONG_RUN_NICE``.

    Only on Linux, where the nice value belongs to a thread (setpriority(2), NPTL): elsewhere it is the whole
    worker's, and an unprivileged process can never raise it again for the runs after this one."""
    if not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), LONG_RUN_NICE))
    except OSError:  # not allowed here: the run goes on at its priority
        pass


if __name__ == "__main__":
    _serve(int(sys.argv[1]))

"""The server's worker pool (app/workers.py): single flight, latest wins, fair share, Stop, faults, and results
equal to in-process runs. Jobs are tiny; where a run must still be in flight, a gate file holds it, so every
check counts or orders events and never times them."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import cloudpickle
import numpy as np
import pandas as pd
import pytest

import app.workers as workers
from app import payloads
from app.workers import CANCELLED, DONE, FAILED, QUEUED, RUNNING, WorkerPool
from solvers import foundations as fd
from solvers.core import Result

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
WAIT = 60.0  # generous bound on waiting for an event on the loaded machine; nothing is timed against it


@pytest.fixture(scope="module")
def pool():
    pool = WorkerPool(2)
    assert pool.wait_ready(120), "the worker processes did not start"
    yield pool
    pool.close()


def held(gate: str, marker: str | None = None):
    """A run that reports rows (with its worker's pid) until ``gate`` exists, or until its callback says stop."""
    def run(callback):
        i = 0
        while not os.path.exists(gate):
            i += 1
            if callback({"iter": i, "gap": 1.0 / i, "pid": os.getpid()}) is False:
                if marker:
                    Path(marker).write_text(f"stopped at {i}")
                return Result({}, pd.DataFrame({"iter": [i]}), "stopped")
            time.sleep(0.002)
        return Result({"iterations": i}, pd.DataFrame({"iter": [i]}), "converged")
    return run


def quick(value):
    return lambda callback: Result({"value": value}, pd.DataFrame({"iter": [0], "gap": [0.0]}), "converged")


class Counted:
    """A run that notes its key in ``counter`` each time it is pickled (in this process, on its way to a worker)."""

    def __init__(self, key, run, counter):
        self.key, self.run, self.counter = key, run, counter

    def __reduce__(self):
        self.counter.append(self.key)
        return _same, (self.run,)


def _same(run):
    return run


def job(key, run, label=None, counter=None):
    return key, label or key, run if counter is None else Counted(key, run, counter)


def finish(lease):
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        statuses = lease.poll()
        if all(s.state in (DONE, FAILED, CANCELLED) for s in statuses):
            return statuses
        lease.wait(0.1)
    raise AssertionError(f"runs still unfinished: {[(s.label, s.state) for s in lease.poll()]}")


def until(condition, what):
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"never happened: {what}")


def written(path: Path) -> bool:
    """The worker has written ``path`` (it exists before its text does)."""
    return path.exists() and bool(path.read_text())


def first_rows(lease):
    until(lambda: lease.poll()[0].rows, "the run sent its first rows")
    return lease.poll()[0].rows


def test_one_configuration_asked_twice_while_in_flight_is_computed_once(pool, tmp_path):
    gate, pickled, started = tmp_path / "go", [], pool.started
    a = pool.subscribe("sf-1", [job("sf", held(str(gate)), counter=pickled)])
    b = pool.subscribe("sf-2", [job("sf", held(str(gate)), counter=pickled)])
    gate.touch()
    done_a, done_b = finish(a), finish(b)
    assert pool.started == started + 1 and pickled == ["sf"]  # started once, shipped once
    assert done_a[0].state == done_b[0].state == DONE
    assert done_b[0].result is done_a[0].result


def test_a_session_that_moves_on_stops_its_stale_run(pool, tmp_path):
    marker = tmp_path / "stopped"
    old = pool.subscribe("lw", [job("lw-old", held(str(tmp_path / "never"), str(marker)))])
    first_rows(old)
    new = pool.subscribe("lw", [job("lw-new", quick(2))])
    assert old.poll()[0].state == CANCELLED
    assert finish(new)[0].result.solution == {"value": 2}
    until(lambda: written(marker), "the stale run's callback returned False in its worker")
    assert marker.read_text().startswith("stopped at")


def test_stop_interrupts_a_real_solver_in_its_worker(pool, tmp_path):
    """Stop (the session releases its run) makes the callback return False: the solver ends 'stopped' and the
    worker is free again, not killed."""
    marker, replaced = tmp_path / "status", pool.replaced
    problem = fd.make_problem(None, kappa=50.0)

    def run(callback):
        def first_row_until_stopped(row):  # holds the solver at its first row until the callback says stop
            while callback(row) is not False:
                time.sleep(0.01)
            return False

        result = fd.solve(problem, "gd", tol=1e-12, max_iter=10**6, callback=first_row_until_stopped)
        marker.write_text(f"{result.status} {len(result.history)}")
        return result

    lease = pool.subscribe("stop", [job("stop-key", run)])
    first_rows(lease)
    lease.release()
    until(lambda: written(marker), "the solver returned after Stop")
    status, rows = marker.read_text().split()
    assert status == "stopped" and rows == "1"
    after = pool.subscribe("stop", [job("stop-after", quick(3))])
    assert finish(after)[0].state == DONE and pool.replaced == replaced


def test_a_rerun_takes_its_run_up_again_and_an_abandoned_one_is_cancelled(pool, tmp_path, monkeypatch):
    monkeypatch.setattr(workers, "DETACH_GRACE_SECONDS", 0.2)
    gate, started = tmp_path / "never", pool.started
    lease = pool.subscribe("rr", [job("rr-key", held(str(gate)))])
    first_rows(lease)
    lease.detach()  # the script was interrupted by a rerun ...
    again = pool.subscribe("rr", [job("rr-key", held(str(gate)))])  # ... which asks for the same run
    assert again.flights[0] is lease.flights[0] and pool.started == started + 1
    again.detach()  # interrupted again, and this time the session never comes back (it left the page)
    until(lambda: again.poll()[0].state == CANCELLED, "the abandoned run was cancelled")


def test_a_run_that_ignores_stop_has_its_worker_killed_and_replaced(pool, monkeypatch):
    """A closed tab frees its worker even when the solver is inside a long step without callbacks."""
    monkeypatch.setattr(workers, "KILL_AFTER_SECONDS", 0.2)
    replaced = pool.replaced

    def deaf(callback):
        callback({"iter": 0, "pid": os.getpid()})
        time.sleep(600)

    lease = pool.subscribe("deaf", [job("deaf-key", deaf)])
    pid = first_rows(lease)[0]["pid"]
    lease.release()
    until(lambda: pool.replaced == replaced + 1 and pid not in pool.pids(), "the deaf worker was replaced")
    assert pool.wait_ready(120) and len(pool.pids()) == 2


def test_a_worker_killed_mid_run_is_replaced_and_the_run_says_so(pool, tmp_path):
    lease = pool.subscribe("victim", [job("victim-key", held(str(tmp_path / "never")), label="APG+")])
    pid = first_rows(lease)[0]["pid"]
    os.kill(pid, signal.SIGKILL)
    status = finish(lease)[0]
    assert status.state == FAILED and status.error[0] == "died"
    message = status.error[1]
    assert "worker process" in message and "signal 9" in message and "press Run to try again" in message
    assert "Traceback" not in message
    assert pool.wait_ready(120) and len(pool.pids()) == 2 and pid not in pool.pids()
    after = pool.subscribe("victim", [job("victim-after", quick(4))])
    assert finish(after)[0].result.solution == {"value": 4}


def test_a_lone_session_borrows_the_idle_worker_and_gives_it_back_to_the_next_session(pool, tmp_path):
    gate_a, gate_b, taken_back = tmp_path / "go-a", tmp_path / "go-b", tmp_path / "a2-stopped"
    a = pool.subscribe("fair-a", [job("a1", held(str(gate_a))), job("a2", held(str(gate_a), str(taken_back)))])
    try:
        # alone on the pool, A's two runs take both workers (a replaced worker may still be starting: wait for both)
        until(lambda: [s.state for s in a.poll()] == [RUNNING, RUNNING], "A's two runs side by side")
        lent_seq = a.poll()[1].seq
        # B's run needs a worker: A's second run is stopped in its worker and queued again, first in line
        b = pool.subscribe("fair-b", [job("b1", held(str(gate_b)))])
        until(lambda: b.poll()[0].state == RUNNING, "B's run on the worker taken back from A")
        until(lambda: written(taken_back), "A's lent run was stopped in its worker")
        second = a.poll()[1]
        assert (a.poll()[0].state, second.state, second.place) == (RUNNING, QUEUED, 1) and second.seq > lent_seq
        # C comes after A's requeued run; while the gates hold both workers, each session keeps one run going
        c = pool.subscribe("fair-c", [job("c1", quick("c1"))])
        assert c.poll()[0].place == 2 and a.poll()[1].state == QUEUED
        # A's first run ends while B's still holds the other worker: first come, first served, so A's second
        # run takes the free worker before C's (had B's ended first, C's would rightly go while A still ran)
        gate_a.touch()
        assert all(s.state == DONE for s in finish(a))
    finally:
        gate_a.touch()  # a failed check must not leave both workers held for the tests after it
        gate_b.touch()
    for lease in (b, c):
        assert all(s.state == DONE for s in finish(lease))
    assert a.flights[1].started < c.flights[0].started


def test_a_configuration_many_sessions_share_runs_its_methods_side_by_side(pool, tmp_path):
    """The lecture: everyone asks for the same two methods; each run is charged to a different student, so both
    workers take one, where charging both to the first student would run them one after the other."""
    gate = tmp_path / "go"
    jobs = [job("lecture-1", held(str(gate))), job("lecture-2", held(str(gate)))]
    leases = [pool.subscribe(f"student-{i}", jobs) for i in range(5)]
    try:  # charged to one student, the second run would stay queued until the gate opens
        until(lambda: [s.state for s in leases[-1].poll()] == [RUNNING, RUNNING], "both runs on the two workers at once")
    finally:
        gate.touch()  # a failed check must not leave both workers held for the tests after it
    assert all(s.state == DONE for lease in leases for s in finish(lease))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's (NPTL)")
def test_a_long_run_yields_its_core_and_the_next_run_starts_at_full_priority(pool):
    def spinning(cpu_seconds: float):  # a run reporting its thread's nice value while it uses this much CPU
        def run(callback):
            import threading

            start = time.thread_time()
            while True:
                callback({"nice": os.getpriority(os.PRIO_PROCESS, threading.get_native_id())})
                if time.thread_time() - start >= cpu_seconds:
                    return Result({}, pd.DataFrame({"iter": [0]}), "converged")
                sum(range(10_000))
        return run

    long_run = finish(pool.subscribe("long", [job("long-key", spinning(workers.DEMOTE_AFTER_CPU_SECONDS + 0.5))]))[0]
    nice = [row["nice"] for row in long_run.rows]
    base = nice[0]
    if base >= workers.LONG_RUN_NICE:
        pytest.skip(f"the workers already run at nice {base}: a demotion to {workers.LONG_RUN_NICE} cannot show")
    assert nice[-1] == workers.LONG_RUN_NICE and nice == sorted(nice)
    short = finish(pool.subscribe("long", [job("short-key", spinning(0.0))]))[0]
    assert short.rows[0]["nice"] == base, "the run after a long one starts at the worker's priority"


def test_a_burst_of_forty_sessions_is_started_in_arrival_order(pool):
    leases = [pool.subscribe(f"burst-{i}", [job(f"burst-key-{i}", quick(i))]) for i in range(40)]
    finished = [finish(lease)[0] for lease in leases]
    assert [s.result.solution["value"] for s in finished] == list(range(40))
    starts = [lease.flights[0].started for lease in leases]
    assert starts == sorted(starts)


def test_every_worker_prepares_once_and_a_replacement_prepares_too(monkeypatch, tmp_path):
    """A page's head start (NPSVC++: torch's imports) reaches each worker once, and the worker that replaces a dead
    one, without a run."""
    from tests.app.worker_preparation import PREPARED_FILE

    record = tmp_path / "prepared"
    monkeypatch.setenv(PREPARED_FILE, str(record))
    prepared = WorkerPool(2)
    try:
        assert prepared.wait_ready(120)
        target = "tests.app.worker_preparation:record_pid"
        assert prepared.prepare(target) is True and prepared.prepare(target) is False

        def pids_recorded() -> list[int]:
            return [int(line) for line in record.read_text().split()] if record.exists() else []

        until(lambda: sorted(pids_recorded()) == sorted(prepared.pids()), "each worker prepared, once")
        victim = prepared.pids()[0]
        os.kill(victim, signal.SIGKILL)
        until(lambda: prepared.replaced == 1 and victim not in prepared.pids(), "the dead worker was replaced")
        until(lambda: len(pids_recorded()) == 3, "the replacement prepared")
        assert sorted(pids_recorded()) == sorted([victim, *prepared.pids()])
    finally:
        prepared.close()


def test_workers_that_cannot_start_fail_runs_with_a_message_instead_of_respawning(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")  # every worker exits at once
    broken = WorkerPool(1)
    try:
        until(lambda: broken.size == 0, f"the pool gave up after {workers.START_ATTEMPTS} failed starts")
        status = broken.subscribe("early", [job("nowhere", quick(0))]).poll()[0]
        assert status.state == FAILED and "cannot start" in status.error[1]
        assert f"{workers.WORKERS_ENV}=0" in status.error[1]
    finally:
        broken.close()


def test_the_number_of_workers_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(workers.WORKERS_ENV, raising=False)
    assert workers.configured_workers(server=False) == 0  # AppTest and bare scripts: in process
    if os.name == "posix":
        assert workers.configured_workers(server=True) == (os.cpu_count() or 1)
    monkeypatch.setenv(workers.WORKERS_ENV, "3")
    assert workers.configured_workers(server=False) == workers.configured_workers(server=True) == 3
    monkeypatch.setenv(workers.WORKERS_ENV, "all")
    with pytest.raises(ValueError, match="whole number"):
        workers.configured_workers(server=True)


def test_a_run_that_cannot_be_pickled_fails_with_the_reason(pool):
    import threading

    lock = threading.Lock()  # a lock cannot leave its process
    lease = pool.subscribe("unpicklable", [job("lock-key", lambda callback: lock)])
    status = finish(lease)[0]
    assert status.state == FAILED and "could not be sent to a worker process" in status.error[1]
    after = pool.subscribe("unpicklable", [job("lock-after", quick(5))])  # the worker it was meant for is free
    assert finish(after)[0].result.solution == {"value": 5}


def test_large_arrays_reach_each_worker_once_and_runs_read_them_without_changing_them(pool, monkeypatch):
    """A slider notch changes C, not the samples: the samples go to a worker once (by content), every run reads
    the worker's array itself, and a run that tries to write into it fails, leaving it as sent."""
    sent = []
    post = workers._Worker._post
    monkeypatch.setattr(workers._Worker, "_post", lambda self, message: (sent.append(message[:2]), post(self, message))[1])
    data = np.random.default_rng(7).random(3 * payloads.SHARED_ARRAY_BYTES // 8)

    def reading(value, scribble=False):
        def run(callback):
            first = float(data[0])
            if scribble:
                data[0] = -1.0
            return Result({"value": value, "first": first, "sum": float(data[1:].sum())}, pd.DataFrame({"iter": [0]}),
                          "converged")
        return run

    statuses = [finish(pool.subscribe("arrays", [job(f"arrays-{i}", reading(i, scribble=i == 1))]))[0]
                for i in range(4)]
    arrays = [m for m in sent if m[0] == "array"]
    assert 1 <= len(arrays) <= pool.size and len({token for _, token in arrays}) == 1
    assert statuses[1].state == FAILED and "read-only" in statuses[1].error[1]
    results = [s.result.solution for i, s in enumerate(statuses) if i != 1]
    assert [r["value"] for r in results] == [0, 2, 3]
    assert all(r["first"] == data[0] and r["sum"] == float(data[1:].sum()) for r in results)


def test_a_worker_drops_its_least_recently_used_arrays_beyond_its_budget(monkeypatch):
    monkeypatch.setattr(workers, "WORKER_ARRAY_BYTES", 2 * payloads.SHARED_ARRAY_BYTES)
    worker = workers._Worker.__new__(workers._Worker)  # its bookkeeping only: no process behind it
    posted = []
    worker._held, worker._post = workers.OrderedDict(), posted.append
    arrays = {name: np.full(payloads.SHARED_ARRAY_BYTES // 8, float(i)) for i, name in enumerate("abc")}
    worker._share({"a": arrays["a"]})
    worker._share({"b": arrays["b"], "a": arrays["a"]})  # a used again: b is now the oldest
    worker._share({"a": arrays["a"]})
    worker._share({"c": arrays["c"]})
    assert [m[:2] for m in posted] == [("array", "a"), ("array", "b"), ("array", "c"), ("forget", "b")]
    assert list(worker._held) == ["a", "c"]


def test_results_in_a_worker_equal_results_in_process(pool):
    """The same closure the Foundations page builds, run here and in a worker: identical iterates."""
    problem = fd.make_problem(None, kappa=20.0, constraint="box")
    runs = {m: (lambda cb, m=m: fd.solve(problem, m, callback=cb, tol=1e-8, max_iter=300, step=1.0)) for m in fd.METHODS}
    lease = pool.subscribe("same", [job(f"same-{m}", run, label=m) for m, run in runs.items()])
    remote = {s.label: s.result for s in finish(lease)}
    for m, run in runs.items():
        here = run(lambda row: None)
        there = remote[m]
        assert there.status == here.status
        columns = [c for c in here.history.columns if c != "time"]
        pd.testing.assert_frame_equal(there.history[columns], here.history[columns], check_exact=True)
        for name, value in here.solution.items():
            np.testing.assert_array_equal(there.solution[name], value)


def test_the_foundations_page_stores_the_same_runs_through_workers_as_in_process(monkeypatch):
    """The page's own closures (defined in a script Streamlit executes, not an importable module) reach a
    worker, and the run store ends up with the same runs as the in-process mode that AppTest uses."""
    from app.ui import runs
    from tests.app_harness import assert_clean, open_page

    def page_runs(workers: int) -> dict[str, Result]:
        monkeypatch.setenv(workers_env, str(workers))
        runs._run_store().clear()
        at = open_page("foundations")
        assert_clean(at)
        return dict(runs._run_store())

    workers_env = workers.WORKERS_ENV
    runs._worker_pool.clear()
    here = page_runs(0)
    runs._worker_pool.clear()
    try:
        there = page_runs(1)
    finally:
        pool = runs._worker_pool()  # the cached pool the page started
        runs._worker_pool.clear()
    assert isinstance(pool, WorkerPool) and pool.started == len(here) == 3
    pool.close()
    assert there.keys() == here.keys()
    for key, result in here.items():
        columns = [c for c in result.history.columns if c != "time"]
        pd.testing.assert_frame_equal(there[key].history[columns], result.history[columns], check_exact=True)
        assert there[key].status == result.status

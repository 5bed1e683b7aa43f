"""A target for WorkerPool.prepare in tests/app/test_workers.py: each call appends its worker's pid to the file
named by PREPARED_FILE (set before the pool starts its workers, which inherit the environment)."""
import os

PREPARED_FILE = "OPTLAB_TEST_PREPARED_FILE"


def record_pid() -> None:
    with open(os.environ[PREPARED_FILE], "a") as out:
        out.write(f"{os.getpid()}\n")

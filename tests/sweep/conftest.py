"""One local cluster of 2 worker processes for the module that needs it, closed (processes ended) after it."""
import cloudpickle
import pytest

from solvers.sweep import executor

from . import toy_jobs

# The workers are fresh processes: ship the toy jobs by value rather than asking them to import tests/.
cloudpickle.register_pickle_by_value(toy_jobs)


@pytest.fixture(scope="module")
def client():
    with executor(workers=2, memory_limit="768MiB", dashboard=False, timeout=60) as c:
        c.wait_for_workers(2, timeout=120)
        yield c

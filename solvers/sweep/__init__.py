"""Grids of independent runs on Dask distributed: ``python -m solvers.sweep --help``.

    from solvers.sweep import expand, executor, run_sweep, solve_job
    configs = expand({"dataset": ["iris", "wine"], "method": ["twsvm", "knpsvc"], "seed": [0, 1, 2]},
                     fixed={"family": "npsvc"})
    with executor(workers=2) as client:          # or scheduler="tcp://host:8786", or workers=0 (serial)
        result = run_sweep(solve_job, configs, client=client)
    result.table                                  # job, configuration, status, seconds, error, metrics
"""
from .executor import (SCHEDULER_ENV, SweepResult, check_address, cluster_info, executor, run_job, run_sweep,
                       warm_up)
from .grid import expand, parse_axis, parse_value
from .jobs import check_solve_configs, solve_job, solve_shipped_job

__all__ = ["SCHEDULER_ENV", "SweepResult", "check_address", "cluster_info", "executor", "run_job", "run_sweep",
           "warm_up", "expand", "parse_axis", "parse_value", "check_solve_configs", "solve_job", "solve_shipped_job"]

"""The cells of the family pages' sweeps as sweep jobs, so the app's grids run on the same executor as
``python -m solvers.sweep``: the page ships its prepared problem once (``run_sweep(..., data=...)``) and
each job solves one cell of it.

Each job reads its cell from the configuration and hands every other key to the family's ``solve`` as a
method parameter, so a grid may mix methods with different parameters.
"""
from __future__ import annotations

from typing import Any

import numpy as np

SPARSE_CELL = ("method", "s", "kappa", "tol", "max_iter", "time_limit")


def sparse_fit_job(config: dict, data: dict[str, Any]) -> dict:
    """One point of the sparse page's Fig. 2 (time, GE vs s) or Fig. 5 (test score vs ε̂) sweep.

    ``data``: ``{"problem": SparseProblem, "test": Dataset or None}``; the cell's ``s`` reuses the shipped
    problem's data, L and caches (``with_start``), as a problem built at that s would compute the same L.
    """
    from ..sparse import prediction_score, solve

    problem = data["problem"].with_start(int(config["s"]), None)
    params = {k: v for k, v in config.items() if k not in SPARSE_CELL}
    r = solve(problem, config["method"], tol=config["tol"], max_iter=config["max_iter"],
              time_limit=config.get("time_limit"), **params)
    metric, score = prediction_score(problem, data.get("test"), r.solution["w"])
    return {"time": float(r.info["time"]), "GE": int(r.info["grad_evals"]), "metric": metric, "score": score,
            "solver_status": r.status}


def multitask_cell_job(config: dict, data: dict[str, Any]) -> dict:
    """One (α, h) cell of the multitask page's grid: BCD at that α and h, mean held-out error over the tasks.

    ``data``: ``{"problem": MultiTaskProblem, "dataset": Dataset, "test_rows": array}``.
    """
    from .. import multitask as mt
    from ..multitask import metrics

    problem = data["problem"]
    sol = mt.solve(problem.with_params(alpha=float(config["alpha"]), h=int(config["h"])), "bcd",
                   tol=config["tol"], max_iter=config["max_iter"]).solution
    errors = metrics.per_task_error(sol, data["dataset"], problem.data, data["test_rows"], problem.loss)
    return {"test_error": float(np.nanmean(errors))}


def smm_path_job(config: dict, data: dict[str, Any]) -> dict:
    """One C path of the SMM page (``path_method``: "as" for AS+ALM, "warm" for Warm+ALM) on a log grid
    C_low … C_high of ``points`` values; the path's table (one row per C) is the job's history.

    ``data``: ``{"problem": SMMProblem, "X_test": array, "y_test": ±1 array}``.
    """
    from ..smm import solve_path

    Cs = np.logspace(np.log10(config["C_low"]), np.log10(config["C_high"]), int(config["points"]))
    sieve = {k: config[k] for k in ("eps_hat", "d_max", "max_rounds") if k in config}
    path = solve_path(data["problem"], Cs, method=config["path_method"], tol=config["path_tol"],
                      X_test=data["X_test"], y_test=data["y_test"], time_limit=config.get("time_limit"), **sieve)
    table = path.table
    return {"path_status": path.status, "points_done": len(table), "path_seconds": float(table["time"].sum()),
            "seconds_per_point": float(table["time"].iloc[1:].mean()) if len(table) > 1 else np.nan,
            "history": table}

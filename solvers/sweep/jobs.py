"""The generic job: one ``solve`` of any family's method on a named dataset, configured by a plain dict.

A configuration holds ``family``, ``dataset``, ``method`` and any of the family's problem parameters, the
method's parameters and the stopping settings (tol, max_iter, time_limit) by name; ``seed`` goes to
whichever of them declares one. The dataset is resolved where the job runs (the worker's data directory,
``SOLVERS_DATA``), or taken from the sweep's shared data when that is a ``{name: Dataset}`` mapping.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import datasets
from ..cli import load_family
from ..core import STOPPING_PARAMS, InputError, validate_params

GRID_KEYS = ("family", "dataset", "method")


def split_config(config: dict) -> tuple[Any, dict, dict, dict]:
    """(family module, problem params, method params, stopping) of one configuration; InputError if it is wrong."""
    missing = [k for k in GRID_KEYS if k not in config]
    if missing:
        raise InputError(f"a solve job needs {', '.join(GRID_KEYS)}; this configuration lacks {', '.join(missing)}")
    fam = load_family(str(config["family"]))
    method = str(config["method"])
    if method not in fam.METHODS:
        raise InputError(f"unknown method {method!r} for {config['family']}; choose one of {', '.join(fam.METHODS)}")
    groups = {"problem": {p.name for p in fam.PROBLEM_PARAMS}, "method": {p.name for p in fam.METHODS[method].params},
              "stopping": {p.name for p in STOPPING_PARAMS}}
    parts: dict[str, dict] = {g: {} for g in groups}
    for name, value in config.items():
        if name in GRID_KEYS:
            continue
        owner = next((g for g, names in groups.items() if name in names), None)
        if owner is None:
            where = "takes no seed" if name == "seed" else f"has no parameter {name!r}"
            raise InputError(f"{config['family']} {method} {where}; its parameters: "
                             f"{', '.join(sorted(groups['problem'] | groups['method'] | groups['stopping']))}")
        parts[owner][name] = value
    validate_params(fam.PROBLEM_PARAMS, parts["problem"])
    validate_params(fam.METHODS[method].params, parts["method"])
    validate_params(STOPPING_PARAMS, parts["stopping"])
    return fam, parts["problem"], parts["method"], parts["stopping"]


def check_solve_configs(configs: list[dict]) -> None:
    """Every configuration checked before any job starts (datasets are resolved later, on the workers)."""
    for config in configs:
        split_config(config)


def solve_job(config: dict, data: Any = None) -> dict:
    """Solve one configuration; the metrics are the run's counters and its last history row."""
    fam, problem_params, method_params, stopping = split_config(config)
    name = config["dataset"]
    shared = data if isinstance(data, dict) else {}
    dataset = shared[name] if name in shared else (datasets.load(name) if name else None)
    problem = fam.make_problem(dataset, **problem_params)
    result = fam.solve(problem, config["method"], **stopping, **method_params)
    return _metrics(result)


def _metrics(result) -> dict:
    """A run's counters and the numbers of its last history row, plus the history itself."""
    last = result.history.iloc[-1]
    final = {col: float(last[col]) for col in result.history.columns
             if col not in ("iter", "time") and np.issubdtype(result.history[col].dtype, np.number)}
    return {"solver_status": result.status, "n_iter": int(result.info.get("n_iter", len(result.history))),
            "solver_seconds": float(result.info.get("time", np.nan)), **final, "history": result.history}


def solve_shipped_job(config: dict, problem: Any) -> dict:
    """Solve a problem shipped with the sweep (scattered to the workers once) with one configuration's
    ``method``, method parameters and stopping settings; ``family`` names the family. Same metrics as solve_job.
    """
    fam = load_family(str(config.get("family", "")))
    method = config.get("method")
    if method not in fam.METHODS:
        raise InputError(f"unknown method {method!r} for {config.get('family')}; "
                         f"choose one of {', '.join(fam.METHODS)}")
    params = {k: v for k, v in config.items() if k not in ("family", "method")}
    result = fam.solve(problem, method, **params)
    return _metrics(result)

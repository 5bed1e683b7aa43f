"""How a family exposes its algorithms: a `Method` table and one `solve` entry point.

Each family's ``__init__`` defines::

    METHODS = {m.name: m for m in (Method("pg", "PG", run_pg, PG_PARAMS, "..."), ...)}

    def solve(problem, method, *, tol=1e-6, max_iter=10_000, time_limit=None, callback=None, **params):
        return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter,
                          time_limit=time_limit, callback=callback, **params)

and, for the command line and the pages, ``PROBLEM_PARAMS`` (a list of Param)
and ``make_problem(dataset, **problem_params)``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from .errors import InputError
from .params import Param, validate_params
from .result import Callback, Result

STOPPING_PARAMS: tuple[Param, ...] = (
    Param("tol", 1e-6, float, low=0, low_strict=True, log=True, help="tolerance on the optimality measure",
          ui_range=(1e-12, 1e-1)),
    Param("max_iter", 1000, int, low=1, high=10**7, help="iteration cap"),
    Param("time_limit", 60.0, float, low=0, low_strict=True, help="solver seconds before giving up",
          ui_range=(1.0, 600.0)),
)


@dataclass(frozen=True)
class Method:
    """One algorithm of a family."""

    name: str  # the key used in code, CLI and URLs: "apg+"
    label: str  # what people read: "APG+"
    run: Callable[..., Result]  # run(problem, *, tol, max_iter, time_limit, callback, **params)
    params: Sequence[Param] = field(default_factory=tuple)
    summary: str = ""
    reference: str = ""  # where in the paper: "Algorithm 1"
    max_iter: int | None = None  # its own default iteration cap, where its family's solve default does not suit it


def stopping_params(method: Method) -> tuple[Param, ...]:
    """STOPPING_PARAMS with the method's own default iteration cap, for the command line's flags and help."""
    if method.max_iter is None:
        return STOPPING_PARAMS
    return tuple(replace(p, default=method.max_iter) if p.name == "max_iter" else p for p in STOPPING_PARAMS)


def check_stopping(tol: float, max_iter: int, time_limit: float | None) -> tuple[float, int, float | None]:
    values = {"tol": tol, "max_iter": max_iter}
    if time_limit is not None:
        values["time_limit"] = time_limit
    checked = validate_params(STOPPING_PARAMS, values)
    return checked["tol"], checked["max_iter"], checked["time_limit"] if time_limit is not None else None


def solve_with(
    methods: Mapping[str, Method],
    problem: Any,
    method: str,
    *,
    tol: float,
    max_iter: int,
    time_limit: float | None = None,
    callback: Callback | None = None,
    **params: Any,
) -> Result:
    """Look the method up, validate its parameters and the stopping rule, then run it."""
    if method not in methods:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(methods)}")
    spec = methods[method]
    checked = validate_params(spec.params, params)
    tol, max_iter, time_limit = check_stopping(tol, max_iter, time_limit)
    return spec.run(problem, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, **checked)

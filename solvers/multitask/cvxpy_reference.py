"""Reference solver: rASO (8)/(64) as a conic program in cvxpy, G_2 by ``matrix_frac`` (digest §1.2 SDP form).

Only for tiny problems (the paper's point is that this does not scale): it is the ground truth of the
tests and the baseline of the benchmark. cvxpy is a test/benchmark dependency and is imported lazily.
"""
from __future__ import annotations

import numpy as np

from ..core import HistoryRecorder, InputError, Param, Result
from .problem import MEASURE, MultiTaskProblem, Point
from .subspace import project_trace_box_psd

CVXPY_PARAMS = (
    Param("solver", "CLARABEL", str, choices=("CLARABEL", "SCS"), help="conic solver used by cvxpy"),
    Param("max_size", 2000, int, low=1, help="refuse problems with d·m above this (the SDP does not scale)"),
)


#: the conic solvers' own wall-clock limit option (seconds)
TIME_LIMIT_OPTION = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}
#: matrix_frac is a PSD cone of order d + m; CLARABEL's set-up factors a dense block of its svec size
#: s = n(n+1)/2 squared, ~s³/3 flops that no time limit interrupts (n = 167, School: s ≈ 14,000, i.e. ~1e12
#: flops and 1.6 GB). Up to n = 100 (s = 5050) that is seconds; above it a time_limit could not be honoured.
CLARABEL_MAX_ORDER_TIMED = 100


def solve_cvxpy(problem: MultiTaskProblem, solver: str = "CLARABEL",
                time_limit: float | None = None) -> tuple[Point, float, dict]:
    """The optimum, cvxpy's optimal value, and timings: the conic solver's own time and the wall time
    including cvxpy's compilation. With ``time_limit`` the conic solver gets what is left of it after the
    model is built (cvxpy's compilation itself cannot be interrupted); timings["stopped_early"] says that the
    solver stopped at its own limit (time or iterations) and the point is its last iterate, or Z_0 if it had none."""
    import time
    import warnings

    import cvxpy as cp

    start = time.perf_counter()

    d, m, data = problem.d, problem.m, problem.data
    U, M = cp.Variable((d, m)), cp.Variable((d, d), symmetric=True)
    b = cp.Variable(m) if problem.intercept else np.zeros(m)
    terms = []
    for ell in range(m):
        X, y = data.task(ell)
        s = X @ U[:, ell] + b[ell]
        if problem.loss == "least_squares":
            terms.append(cp.sum_squares(s - y) / len(y))
        elif problem.loss == "logistic":
            terms.append(cp.sum(cp.logistic(-cp.multiply(y, s))) / len(y))
        else:
            terms.append(cp.sum(cp.pos(1 - cp.multiply(y, s))) / len(y))
    objective = cp.sum(terms) + problem.c * cp.matrix_frac(U, problem.eta * np.eye(d) + M)
    constraints = [M >> 0, np.eye(d) - M >> 0, cp.trace(M) == problem.h]
    prob = cp.Problem(cp.Minimize(objective), constraints)
    options = {}
    if time_limit is not None:
        options[TIME_LIMIT_OPTION[solver]] = max(time_limit - (time.perf_counter() - start), 1e-3)
    with warnings.catch_warnings():  # "solution may be inaccurate": the status says so; solvers never print
        warnings.simplefilter("ignore")
        prob.solve(solver=solver, **options)
    stopped_early = prob.status == cp.USER_LIMIT
    timings = {"wall_time": time.perf_counter() - start, "solver_time": prob.solver_stats.solve_time,
               "stopped_early": stopped_early}
    if stopped_early and U.value is None:
        return problem.initial_point(), np.nan, timings
    if prob.status not in ("optimal", "optimal_inaccurate") and not stopped_early:
        raise InputError(f"cvxpy/{solver} ended with status {prob.status}")
    M_feasible, _, _ = project_trace_box_psd(M.value, problem.h)  # remove the solver's tiny infeasibility
    b_value = b.value if problem.intercept else b
    return Point(U.value, np.asarray(b_value, float), M_feasible), float(prob.value), timings


def run_cvxpy(problem: MultiTaskProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              solver: str = "CLARABEL", max_size: int = 2000) -> Result:
    """One history row: the conic solver's answer (its own tolerances; ``tol``/``max_iter`` do not apply)."""
    if problem.d * problem.m > max_size:
        raise InputError(f"the cvxpy SDP is only for tiny problems: d·m = {problem.d * problem.m} > {max_size}")
    order = problem.d + problem.m
    if solver == "CLARABEL" and time_limit is not None and order > CLARABEL_MAX_ORDER_TIMED:
        raise InputError(f"CLARABEL's set-up of this SDP (a PSD cone of order d + m = {order} > "
                         f"{CLARABEL_MAX_ORDER_TIMED}) cannot be interrupted, so time_limit = {time_limit} s could "
                         "not be honoured; use solver=SCS (it stops at the time limit), or time_limit=None from Python")
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure=MEASURE)
    Z, _, timings = solve_cvxpy(problem, solver, time_limit)
    F = problem.objective(Z)
    with rec.excluded():
        gm = problem.grad_map(Z)
    rec.record(1, objective=F, **{MEASURE: gm})
    if rec.status is None:  # the solver's own limit is time_limit or its iteration cap
        timed_out = time_limit is not None and timings["wall_time"] >= time_limit
        rec.stop(("time_limit" if timed_out else "max_iter") if timings["stopped_early"] else "converged")
    return rec.result(problem.solution(Z), solver=solver, **timings)

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


def solve_cvxpy(problem: MultiTaskProblem, solver: str = "CLARABEL") -> tuple[Point, float, dict]:
    """The optimum, cvxpy's optimal value, and timings: the conic solver's own time and the wall time
    including cvxpy's compilation."""
    import time

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
    prob.solve(solver=solver)
    timings = {"wall_time": time.perf_counter() - start, "solver_time": prob.solver_stats.solve_time}
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise InputError(f"cvxpy/{solver} ended with status {prob.status}")
    M_feasible, _, _ = project_trace_box_psd(M.value, problem.h)  # remove the solver's tiny infeasibility
    b_value = b.value if problem.intercept else b
    return Point(U.value, np.asarray(b_value, float), M_feasible), float(prob.value), timings


def run_cvxpy(problem: MultiTaskProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
              solver: str = "CLARABEL", max_size: int = 2000) -> Result:
    """One history row: the conic solver's answer (its own tolerances; ``tol``/``max_iter`` do not apply)."""
    if problem.d * problem.m > max_size:
        raise InputError(f"the cvxpy SDP is only for tiny problems: d·m = {problem.d * problem.m} > {max_size}")
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure=MEASURE)
    Z, _, timings = solve_cvxpy(problem, solver)
    F = problem.objective(Z)
    with rec.excluded():
        gm = problem.grad_map(Z)
    rec.record(1, objective=F, **{MEASURE: gm})
    if rec.status is None:
        rec.stop("converged")
    return rec.result(problem.solution(Z), solver=solver, **timings)

"""The family's method table and its ``solve`` entry point (core's ``solve_with``)."""
from __future__ import annotations

from threadpoolctl import threadpool_limits

from ..core import Method, solve_with
from .bcd import BCD_PARAMS, run_bcd
from .cvxpy_reference import CVXPY_PARAMS, run_cvxpy
from .problem import MultiTaskProblem
from .proximal_gradient import APG_PARAMS, PG_PARAMS, run_apg, run_pg

METHODS = {m.name: m for m in (
    Method("apg", "APG", run_apg, APG_PARAMS, "accelerated projected gradient with line search and domain safeguard",
           "Algorithm 1"),
    Method("pg", "PG", run_pg, PG_PARAMS, "projected gradient: Algorithm 1 without momentum", "Algorithm 1, a_i = 0"),
    Method("bcd", "BCD", run_bcd, BCD_PARAMS, "block coordinate descent: exact U-step, M-step by Eq. (71)",
           "Algorithm 2 + Algorithm 3"),
    Method("cvxpy", "cvxpy SDP", run_cvxpy, CVXPY_PARAMS, "reference: matrix_frac conic program (tiny problems)",
           "Eq. (8) as an SDP"),
)}


#: up to this many features the BLAS runs on one thread: every step is a (rows × d)(d × m) product and a d × d
#: eigendecomposition, too small for threads to pay, and a multi-threaded OpenBLAS spends its time synchronising:
#: school (10,752 rows, d = 28), APG, 200 iterations at OMP_NUM_THREADS=2 took 7.4 s wall and 14.7 CPU s, and
#: 0.54 s / 0.64 s on one thread (the page's fuzz crossed its 180 s hang guard there in a fresh-clone CI run)
SINGLE_THREAD_MAX_D = 256


def solve(problem: MultiTaskProblem, method: str, *, tol: float = 1e-6, max_iter: int = 2000, time_limit=None,
          callback=None, **params):
    limits = 1 if problem.d <= SINGLE_THREAD_MAX_D else None  # None: leave the BLAS as it is
    with threadpool_limits(limits=limits, user_api="blas"):
        return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit,
                          callback=callback, **params)



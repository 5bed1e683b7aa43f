"""Algorithm 2 (with Algorithm 1 inside): one loop behind PG, APG, PG+, APG+, PG-LL and APG-LL+.

    Unchanged = 0
    for k = 0, 1, 2, ...
        if k > 0 and w^{k−1}, w^k activate the same A_J:  Unchanged += 1   else Unchanged = 0
        if newton and Unchanged ≥ S:    z^k = t SSN steps on f|A_J from w^k   (failure: z^k = w^k, Unchanged = 0)
        elif extrapolate and same A_J:  z^k = Algorithm 1's extrapolation    (footnote 4: this is APG+)
        else:                           z^k = w^k
        w^{k+1} = T(z^k)                T = T_PG^λ (5), or Li–Lin's map for PG-LL / APG-LL+

"Same A_J" is not defined in the paper when ‖w‖₀ < s (digest §8 b); we test
supp(w^{k−1}) ⊆ J_k, J_k being the index set the projection selected for w^k (ties toward
J_{k−1}), so w⁰ = 0 shares a subspace with w¹. The residual (24) is measured at z^k, the
point whose full gradient was computed (digest §8 f), and z^k is what a converged run
returns. Each history row k describes z^k: f(z^k), Residual(z^k), and the events of step k.
"""
from __future__ import annotations

import numpy as np

from ..core import HistoryRecorder, InputError, Result
from .base_maps import LiLinMap, PGMap
from .extrapolation import Extrapolation, extrapolate
from .newton import NewtonStep, newton_step
from .problem import Point, SparseProblem

BASE_MAPS = {"pg": PGMap, "lilin": LiLinMap}


def check_problem(problem) -> SparseProblem:
    if not isinstance(problem, SparseProblem):
        raise InputError("the sparse solvers need a SparseProblem; build one with solvers.sparse.make_problem")
    return problem


def same_subspace(prev: Point, cur: Point) -> bool:
    """supp(w^{k−1}) ⊆ J_k, i.e. every nonzero of w^{k−1} sits in J_k (two counts, no set operations)."""
    return int(np.count_nonzero(prev.w[cur.J])) == int(np.count_nonzero(prev.w))


def run_accelerated(problem: SparseProblem, *, tol: float, max_iter: int, time_limit: float | None, callback,
                    base: str = "pg", extrapolation: bool = False, newton: bool = False, **params) -> Result:
    problem = check_problem(problem)
    if extrapolation and params["alpha_min"] > params["alpha_max"]:
        raise InputError(f"alpha_min = {params['alpha_min']} exceeds alpha_max = {params['alpha_max']}; "
                         "the safeguard (19) needs α_min ≤ α_max")
    ext_keys = ("sigma", "eta", "eps", "alpha_min", "alpha_max", "alpha_scale", "step_rule", "max_backtracks")
    newton_keys = ("beta", "sigma2", "max_line_search", "damping_c", "damping_rho")
    ext_args = {k: params[k] for k in ext_keys} if extrapolation else {}
    newton_args = {k: params[k] for k in newton_keys} if newton else {}
    S = params.get("S", 0)
    t_newton = params.get("t_newton", 1)

    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure="residual")
    cur = problem.start()
    T = BASE_MAPS[base](problem, cur)
    prev: Point | None = None
    unchanged = ge = cg = n_extrap = n_newton = 0
    identified_at = None
    z = cur
    for k in range(1, max_iter + 1):
        same = prev is not None and same_subspace(prev, cur)
        unchanged = unchanged + 1 if same else 0
        z = cur
        ext = Extrapolation(False)
        nwt: NewtonStep | None = None
        cg_k = 0
        if newton and unchanged >= S:
            if identified_at is None:
                identified_at = k
            for _ in range(t_newton):
                z_new, nwt = newton_step(problem, z, **newton_args)
                cg_k += nwt.cg_iters
                if nwt.failed:
                    z, unchanged = cur, 0
                    break
                z = z_new
            n_newton += nwt is not None and not nwt.failed
        elif extrapolation and same:
            z, ext = extrapolate(problem, prev, cur, **ext_args)
            n_extrap += ext.accepted
        step = T(z)
        ge += step.grad_evals
        cg += cg_k
        changes = int(np.setxor1d(cur.J, step.next.J, assume_unique=True).size)
        status = rec.record(
            k, objective=z.f, residual=step.residual, grad_evals=ge, hess_vec=cg,
            support_size=int(np.count_nonzero(z.w)), support_changes=changes, unchanged=unchanged,
            extrapolated=ext.accepted, t_hat=ext.t_hat, t_step=ext.t, backtracks=ext.backtracks, zeta=ext.zeta,
            newton=nwt is not None and not nwt.failed, newton_failed=nwt is not None and nwt.failed,
            cg_iters=cg_k, newton_alpha=nwt.alpha if nwt is not None else float("nan"),
        )
        if status:
            break
        prev, cur = cur, step.next
    return rec.result({"w": z.w, "support": np.flatnonzero(z.w)}, grad_evals=ge, hess_vec=cg,
                      extrapolations=n_extrap, newton_steps=n_newton, L=problem.L_now, lam=problem.lam, s=problem.s,
                      **({"identified_at": identified_at} if newton else {}))  # None: never identified

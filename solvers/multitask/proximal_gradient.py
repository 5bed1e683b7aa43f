"""APG (Algorithm 1, Appendix A) and PG (the same without momentum) for Eq. (20).

Each iteration: the search point S = (1 + a_i) Z_i − a_i Z_{i−1} (35) with a_i = (t_{i−2} − 1)/t_{i−1}
(t_{−1} = 0, t_0 = 1, line 15: t_i = (1 + √(1 + 4t_{i−1}²))/2); the prox step Ẑ = Z_{L,S} (36)/(42);
the line search doubling L until f(Ẑ) ≤ f(S) + ⟨∇f(S), Ẑ − S⟩ + (L/2)‖Ẑ − S‖² (37); L never decreases
(needed by the second inequality of (60), erratum E4). PG is a_i ≡ 0.

Domain safeguard (digest §2.1, not in the paper, erratum E20): S is not feasible and for η < 1 the
matrix ηI + M_S can be indefinite, where f is undefined. Before using S we halve a_i until
λ_min(ηI + M_S) ≥ η/2 (tested by a Cholesky factorisation of (η/2)I + M_S). a = 0 always passes.

Optional adaptive restart (not in the paper; off by default): when F increases, restart the momentum
as at the start (Z_{i−1} = Z_i, t_{−1} = 0, t_0 = 1).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor

from ..core import HistoryRecorder, Param, Result, fista_next_t, relative_change
from .problem import MEASURE, IterateOverflow, MultiTaskProblem, Point, SpectraLog

L0_PARAM = Param("L0", 1.0, float, low=0, low_strict=True, log=True, symbol="L_0", ui_range=(1e-3, 1e3),
                 help="initial Lipschitz estimate of the line search (Algorithm 1, line 1)")
SPECTRA_PARAM = Param("spectra", False, bool,
                      help="record the eigenvalues of M and singular values of U at every iteration "
                           "(info['spectra'], for plots)")
APG_PARAMS = (
    L0_PARAM,
    Param("safeguard", True, bool, help="keep λ_min(ηI + M_S) ≥ η/2 by shrinking the momentum (needed for η < 1)"),
    Param("restart", False, bool, help="restart the momentum whenever the objective increases (not in the paper)"),
    SPECTRA_PARAM,
)
PG_PARAMS = (L0_PARAM, SPECTRA_PARAM)

MAX_HALVINGS = 60


def _is_safe(problem: MultiTaskProblem, M: np.ndarray) -> bool:
    try:
        cho_factor(0.5 * problem.eta * np.eye(problem.d) + M, lower=True, check_finite=False)
        return True
    except np.linalg.LinAlgError:
        return False


def _line_search(problem: MultiTaskProblem, S: Point, L: float, warm):
    """Eq. (36)–(37): returns (Ẑ, f(Ẑ), L, trials, hinge dual, D = Ẑ − S). Raises IterateOverflow when f or
    ∇f at S is not finite: no step length can help then."""
    f_S, grad = problem.smooth_value_grad(S)
    if not (np.isfinite(f_S) and grad.is_finite()):
        raise IterateOverflow("f or its gradient at the search point overflowed float64")
    slack = 1e-12 * max(1.0, abs(f_S))  # rounding: near the optimum both sides agree to machine precision
    trials = 0
    while True:
        trials += 1
        # an overflow in a trial is handled below (a shorter step), not a warning
        with np.errstate(over="ignore", invalid="ignore"):
            try:
                Z_hat, warm = problem.prox(problem.gradient_step(S, grad, L), L, warm)
            except IterateOverflow:  # the step ∇f/L overflowed: a shorter one, as when (37) fails
                L *= 2.0
                continue
            D = Z_hat.minus(S)
            f_hat = problem.smooth_value(Z_hat)
            # an overflowed f(Ẑ) fails (37) even when its right-hand side overflowed too
            step_sq = D.dot(D)
            decrease = np.isfinite(f_hat) and f_hat <= f_S + grad.dot(D) + 0.5 * L * step_sq + slack
        if decrease or step_sq <= np.finfo(float).eps ** 2:
            return Z_hat, f_hat, L, trials, warm, D
        L *= 2.0


def run_proximal_gradient(problem: MultiTaskProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
                          L0: float = 1.0, accelerated: bool = True, safeguard: bool = True, restart: bool = False,
                          spectra: bool = False) -> Result:
    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback, measure=MEASURE)
    Z = Z_prev = problem.initial_point()  # line 3: Z_1 = Z_0
    t_prev, t = 0.0, 1.0  # t_{−1}, t_0
    L = float(L0)
    F = problem.objective(Z)
    warm = None
    n_trials = n_guarded = 0
    log = SpectraLog(problem, spectra)
    with rec.excluded():
        log.record(Z)
        row0 = {MEASURE: problem.grad_map(Z), "L": L, "grad_map_L": np.nan, "ls_trials": 0, "momentum": 0.0,
                "halvings": 0, "rel_change": np.nan}
    status = rec.record(0, objective=F, **row0)
    k = 0
    while status is None:
        k += 1
        a = (t_prev - 1.0) / t if accelerated else 0.0  # line 5
        halvings = 0
        if safeguard and a != 0.0:
            while not _is_safe(problem, (1 + a) * Z.M - a * Z_prev.M):
                halvings += 1
                a = 0.0 if halvings >= MAX_HALVINGS else 0.5 * a
        n_guarded += halvings > 0
        S = Z.combine(Z_prev, a)  # Eq. (35)
        try:
            Z_hat, f_hat, L, trials, warm, D = _line_search(problem, S, L, warm)  # lines 7–12
        except IterateOverflow:  # ∇f at the search point left float64's range: keep the last finite iterate
            rec.stop("diverged")
            break
        n_trials += trials
        F_new = f_hat if problem.smooth_loss else f_hat + problem.loss_sum(Z_hat.U, Z_hat.b)
        Z_prev, Z = Z, Z_hat  # line 13
        t_prev, t = t, fista_next_t(t)  # line 15
        if restart and F_new > F:
            Z_prev, t_prev, t = Z, 0.0, 1.0
        change, F = relative_change(F_new, F), F_new
        with rec.excluded():
            log.record(Z)
            row = {MEASURE: problem.grad_map(Z), "L": L, "grad_map_L": L * D.norm(), "ls_trials": trials,
                   "momentum": a, "halvings": halvings, "rel_change": change}
        status = rec.record(k, objective=F, **row)
    return rec.result(problem.solution(Z), grad_evals=k, fun_evals=k + n_trials, line_search_trials=n_trials,
                      guarded_iterations=n_guarded, L=L, **log.info())


def run_apg(problem, **kwargs) -> Result:
    return run_proximal_gradient(problem, accelerated=True, **kwargs)


def run_pg(problem, **kwargs) -> Result:
    return run_proximal_gradient(problem, accelerated=False, safeguard=False, restart=False, **kwargs)

"""ALM-SNCG as a method of `METHODS`: Algorithm 1 (`alm.py`) from the origin, from a subsample's solution, or
from the paper's start for Tables 4–5 (Sec. 6.1), a few isPADMM steps (`ispadmm.warm_start_state`).

This module sits above both: isPADMM (Appendix D) uses the ALM as its inner solver, and the ALM's warm start runs
isPADMM, so the one that needs both lives here and `alm.py` never imports `ispadmm.py`.
"""
from __future__ import annotations

from functools import partial

from ..core import InputError
from .alm import alm_solve
from .ispadmm import warm_start_state
from .problem import SMMProblem


def run_alm_sncg(problem: SMMProblem, *, tol: float, max_iter: int, time_limit=None, callback=None,
                 sigma0: float | None = None, warm_start: int = 0, start_rows: int = 1000, max_newton: int = 200,
                 obj_opt: float | None = None, device: str = "cpu"):
    """ALM-SNCG on model (1) from the origin, from ``warm_start`` isPADMM steps or from a subsample's
    solution (``start_rows``); one history row per ALM step (Algorithm 1). The start's seconds are part of
    the first row's time. ``device`` other than "cpu" runs `torch_alm` there (torch is imported only then)."""
    if device != "cpu":
        if warm_start:
            raise InputError(f"warm_start (isPADMM steps) runs on the CPU only; use warm_start=0 with "
                             f"device={device!r}")
        from .torch_alm import run_torch_alm_sncg

        return run_torch_alm_sncg(problem, device=device, tol=tol, max_iter=max_iter, time_limit=time_limit,
                                  callback=callback, sigma0=sigma0, start_rows=start_rows, max_newton=max_newton,
                                  obj_opt=obj_opt)
    if not isinstance(problem, SMMProblem):
        raise InputError("device='cpu' needs an SMMProblem with numpy samples; samples on a torch device need "
                         "device='cuda' or 'torch-cpu'")
    start = partial(warm_start_state, iterations=warm_start) if warm_start else None
    return alm_solve(problem, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                     sigma0=sigma0, start=start, start_rows=start_rows, max_newton=max_newton,
                     obj_opt=obj_opt)[0]

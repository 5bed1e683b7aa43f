"""SMM family (seed 002, Wu, Li & Sun): the support matrix machine by ALM-SNCG, with the ADMM
baselines and adaptive sieving over a C path.

    from solvers import smm
    problem = smm.make_problem(dataset, C=1.0, tau=1.0, positive_class="0")
    result = smm.solve(problem, "alm-sncg", tol=1e-6, max_iter=500)
    result = smm.solve(problem, "alm-sncg", device="cuda")  # torch on the GPU (torch_alm.py)
    path = smm.solve_path(problem, np.logspace(-1, 2, 50), method="as")
"""
from __future__ import annotations

from ..core import STOPPING_PARAMS, Method, Param, Result, solve_with
from . import synthetic  # noqa: F401  (registers the smm-synthetic generator)
from .alm import ALM_PARAMS
from .alm_sncg import run_alm_sncg
from .estimators import SupportMatrixMachine
from .fadmm import FADMM_PARAMS, run_fadmm
from .ispadmm import ISPADMM_PARAMS, run_ispadmm
from .path import PATH_PARAMS, PathResult, solve_path
from .problem import SMMProblem, build_problem, kkt_residuals, primal_objective, sample_roles, train_test
from .sgs_padmm import SGS_PARAMS, run_sgs_padmm

TITLE = "Support matrix machine: ALM-SNCG exploiting sample sparsity and low rank, with adaptive sieving"
PAPER = ("C. Wu, M. Li and Y. Sun, \"Support matrix machine: exploring sample sparsity, low rank, and adaptive "
         "sieving in high-performance computing\", arXiv:2412.08023")

METHODS = {m.name: m for m in (
    Method("alm-sncg", "ALM-SNCG", run_alm_sncg, ALM_PARAMS,
           "inexact ALM; subproblems by semismooth Newton-CG on the active samples J1 and rank |α|",
           "Algorithms 1–2, Sec. 4"),
    Method("ispadmm", "isPADMM", run_ispadmm, ISPADMM_PARAMS,
           "two-block inexact semi-proximal ADMM; (W, b) step by ALM-SNCG with τ = 0", "Appendix D, Algorithm 4"),
    Method("sgs-ispadmm", "sGS-isPADMM", run_sgs_padmm, SGS_PARAMS,
           "three-block symmetric Gauss–Seidel ADMM with a spectral majorisation", "Appendix E, Algorithm 5"),
    Method("fadmm", "F-ADMM", run_fadmm, FADMM_PARAMS,
           "fast ADMM with restart (Luo et al. 2015), n×n dual box-QP per step", "Sec. 6 baseline"),
)}

PROBLEM_PARAMS = [
    Param("C", 1.0, float, low=0, low_strict=True, log=True, help="hinge-loss weight C", symbol="C",
          ui_range=(1e-3, 1e3)),
    Param("tau", 1.0, float, low=0, low_strict=True, log=True, help="nuclear-norm weight τ", symbol=r"\tau",
          ui_range=(1e-3, 1e3)),
    Param("positive_class", "", str, help="class labelled +1 against the rest (empty: the data's two classes)"),
    Param("upsample", 1, int, low=1, high=8, help="Kronecker upsampling k: each X_i becomes X_i ⊗ 1_{k×k}"),
    Param("scale", "auto", str, choices=("auto", "none", "max-abs"),
          help="divide X by max|X| (auto: only when max|X| > 1, e.g. digits' 0–16 pixels; synthetic data stay raw)"),
]


def make_problem(dataset, *, C: float = 1.0, tau: float = 1.0, positive_class: str = "", upsample: int = 1,
                 scale: str = "auto", test_fraction: float = 0.2, seed: int = 0) -> SMMProblem:
    """The training part of ``dataset`` as an SMMProblem (see `train_test` for the split and scaling)."""
    X, y, _, _ = train_test(dataset, positive_class=positive_class, upsample=upsample, scale=scale,
                            test_fraction=test_fraction, seed=seed)
    return build_problem(X, y, C=C, tau=tau)


def solve(problem: SMMProblem, method: str, *, tol: float = 1e-6, max_iter: int = 500,
          time_limit: float | None = None, callback=None, **params) -> Result:
    """Run one method of `METHODS`. The history has iter, time, objective, kkt (η_kkt (46)) with its
    six parts eta_*, dual_objective, relgap, rank (and relobj when obj_opt is given), plus each
    method's columns (σ, Newton/CG iterations, |J1|, |α| for ALM-SNCG; γ for the ADMMs)."""
    return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit,
                      callback=callback, **params)


__all__ = ["solve", "METHODS", "PROBLEM_PARAMS", "make_problem", "SMMProblem", "build_problem", "train_test",
           "kkt_residuals", "primal_objective", "sample_roles", "solve_path", "PathResult", "PATH_PARAMS",
           "SupportMatrixMachine", "TITLE", "PAPER", "STOPPING_PARAMS"]

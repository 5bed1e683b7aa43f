"""Nonparallel support vector classifiers and NPSVC++ (seed 004): TWSVM and LSTSVM baselines,
K-NPSVC++ (Algorithm 1, corrected) and D-NPSVC++ (Algorithm 2) with same-network baselines.

    from solvers import npsvc
    from solvers.datasets import load
    problem = npsvc.make_problem(load("wine"), kernel="rbf")
    result = npsvc.solve(problem, "knpsvc", tol=1e-6, max_iter=10)
    result.history[["primal", "dual", "gap", "test_acc"]]
"""
from __future__ import annotations

from functools import partial

from ..core import Method, Result, solve_with
from . import synthetic  # noqa: F401  (registers the 2-D generators)
from .baselines import BASELINE_PARAMS, NPSVM_PARAMS, PINBALL_PARAMS, TWSVM_PARAMS, run_lstsvm, run_npsvm
from .deep_params import DNPSVC_PARAMS
from .estimators import DNPSVC, KNPSVC, LSTSVM, TWSVM
from .kernel_runs import run_knpsvc, run_twsvm
from .knpsvc import KNPSVC_PARAMS, OFFICIAL_MAX_ITER
from .problem import PROBLEM_PARAMS, NPSVCProblem, make_problem, problem_from_arrays

TITLE = "NPSVC++: nonparallel classifiers with Pareto-weighted representation learning"
PAPER = ("J. Zhang, Z. Lai, H. Zhou, J. Liang. NPSVC++: Nonparallel Classifiers Encounter Representation "
         "Learning. ICML 2024 (arXiv:2402.06010).")


def run_dnpsvc(problem: NPSVCProblem, **params) -> Result:
    """D-NPSVC++ and its same-network baselines (dnpsvc.py); torch is imported by the first deep run, not with
    the family, so a server or a worker that runs only the kernel methods never loads it."""
    from .dnpsvc import run_dnpsvc as run_deep

    return run_deep(problem, **params)


_DEEP_SHARED = tuple(p for p in DNPSVC_PARAMS if p.name != "criterion")

METHODS = {m.name: m for m in (
    Method("twsvm", "TWSVM", run_twsvm, TWSVM_PARAMS,
           "one hinge-loss hyperplane per class (TBSVM form), K box-QP duals; optimality = largest relative "
           "duality gap", "Table 1; Shao et al. 2011"),
    Method("pin-twsvm", "pinball TWSVM", run_twsvm, PINBALL_PARAMS,
           "TWSVM with the pinball loss: the same dual on the box −τ_p c ≤ λ ≤ c", "Table 1; Xu et al. 2017"),
    Method("npsvm", "NPSVM", run_npsvm, NPSVM_PARAMS,
           "ε-insensitive loss on the own class, hinge on the others; one box QP per class over [λ; α⁺; α⁻]",
           "Table 1; Tian et al. 2014"),
    Method("lstsvm", "LSTSVM", run_lstsvm, BASELINE_PARAMS,
           "squared dissimilarity loss: each hyperplane from one linear system; optimality = relative residual",
           "Table 1; Arun Kumar & Gopal 2009"),
    Method("knpsvc", "K-NPSVC++", run_knpsvc, KNPSVC_PARAMS,
           "kernel NPSVC++: U/V/P steps on τᵀJ, Pareto weights τ by a simplex QP; optimality = the larger of "
           "(max J − τᵀJ)/max J and the relative change of max J; at most the official code's 10 outer iterations "
           "by default",
           "Algorithm 1, eqs. (14)–(21)", max_iter=OFFICIAL_MAX_ITER),
    Method("dnpsvc", "D-NPSVC++", partial(run_dnpsvc, criterion="npsvc++"), _DEEP_SHARED,
           "deep NPSVC++ in torch: θ-step and τ-step per mini-batch", "Algorithm 2, eqs. (22)–(26)"),
    Method("fixed-tau", "DTWSVN (τ = 1/K)", partial(run_dnpsvc, criterion="fixed"), _DEEP_SHARED,
           "the same network trained on the mean of the J_l, no τ-step", "eq. (A.15); Li & Yang 2022"),
    Method("cross-entropy", "Cross-entropy net", partial(run_dnpsvc, criterion="ce"), _DEEP_SHARED,
           "the same network trained with softmax cross-entropy", "Table 3, first row"),
)}

DEEP_METHODS = ("dnpsvc", "fixed-tau", "cross-entropy")


#: the iteration cap of a method that declares none: QP iterations per class (TWSVM), lockstep QP iterations
#: (NPSVM), epochs (deep models, which stop at their ``epochs`` first)
FAMILY_MAX_ITER = 1000


def default_max_iter(method: str) -> int:
    """The iteration cap ``solve`` uses when none is given: the method's own (K-NPSVC++: the official code's
    10 outer iterations, with which the paper's Table 2 was made), else FAMILY_MAX_ITER."""
    own = METHODS[method].max_iter if method in METHODS else None
    return FAMILY_MAX_ITER if own is None else own


def solve(problem: NPSVCProblem, method: str, *, tol: float = 1e-6, max_iter: int | None = None,
          time_limit: float | None = None, callback=None, **params) -> Result:
    """Run one of METHODS on a problem from ``make_problem``; see each Method's params. ``max_iter`` None:
    ``default_max_iter(method)``."""
    return solve_with(METHODS, problem, method, tol=tol,
                      max_iter=default_max_iter(method) if max_iter is None else max_iter,
                      time_limit=time_limit, callback=callback, **params)


__all__ = [
    "TITLE", "PAPER", "METHODS", "DEEP_METHODS", "PROBLEM_PARAMS", "NPSVCProblem", "make_problem",
    "problem_from_arrays", "solve", "default_max_iter", "FAMILY_MAX_ITER", "TWSVM", "LSTSVM", "KNPSVC", "DNPSVC",
]

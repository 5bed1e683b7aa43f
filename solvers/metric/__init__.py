"""Triplet metric learning (RTLM) with safe triplet screening: seed 003, Yoshida, Takeuchi & Karasuyama.

    from solvers import metric, datasets
    problem = metric.make_problem(datasets.load("iris"), k=0, max_samples=30)
    result = metric.solve(problem, "pg", tol=1e-8, max_iter=2000, lam=10.0, bounds="pgb")
    path = metric.regularization_path(problem, bounds=("rrpb", "pgb"), rule="sphere", rho=0.9)
"""
from __future__ import annotations

import numpy as np

from ..core import STOPPING_PARAMS, InputError, Method, Param, solve_with, validate_params
from ..datasets import SEED, Dataset
from . import synthetic  # noqa: F401  (registers the metric-blobs generator)
from .device import DEVICES
from .bounds import BOUND_LABELS, DYNAMIC_BOUNDS, PATH_BOUNDS
from .estimators import TripletMetricLearner
from .path import PathResult, regularization_path
from .problem import TripletProblem, check_lambda, lambda_max, make_triplet_problem
from .projected_gradient import Screening, minimize
from .rules import RULE_LABELS, RULES

TITLE = "Triplet metric learning with safe triplet screening"
PAPER = ("T. Yoshida, I. Takeuchi, M. Karasuyama. Safe Triplet Screening for Distance Metric Learning. "
         "KDD 2018 / Neural Computation 2019 (arXiv:1802.03923).")

PROBLEM_PARAMS = [
    Param("k", 3, int, low=0, high=1000, help="neighbours per side: k same-class × k other-class; 0 = all triplets",
          symbol="k", ui_range=(0, 30)),
    Param("gamma", 0.05, float, low=0, high=1, high_strict=True, help="smoothing of the hinge loss; 0 = hinge",
          symbol=r"\gamma", ui_range=(0.0, 0.5)),
    Param("diagonal", False, bool, help="learn a diagonal M (App. B) instead of a full PSD matrix"),
    Param("scale", True, bool, help="min–max scale every feature to [−1, 1] as LIBSVM's .scale files"),
    Param("backend", "pairs", str, choices=("pairs", "triplets"),
          help="pairs: ⟨H, M⟩ from cached pair distances, O(1) per triplet; triplets: O(d²) per triplet (paper)"),
    Param("device", "numpy", str, choices=DEVICES,
          help="numpy: the CPU default; cpu / cuda: PyTorch on that device for the pair and triplet arithmetic and "
               "the PSD projection; auto: cuda when a GPU is visible, else numpy"),
    Param("max_samples", 0, int, low=0, high=100_000, help="class-stratified random subsample size; 0 = all samples",
          ui_range=(0, 2000)),
    SEED,
]

SCREENING_PARAMS = [
    Param("bounds", "pgb", str, choices=("none",) + DYNAMIC_BOUNDS, help="sphere bound for dynamic screening"),
    Param("rule", "sphere", str, choices=RULES, help="screening rule applied to the sphere"),
    Param("screening_period", 10, int, low=1, high=1000, help="iterations between dynamic screenings"),
]
LAM = Param("lam", 10.0, float, low=0, low_strict=True, log=True, help="regularisation strength",
            symbol=r"\lambda", ui_range=(1e-3, 1e8))
REFRESH = Param("refresh", 10, int, low=1, high=1000, help="iterations between active-set refreshes")

PATH_PARAMS = [
    Param("rho", 0.9, float, low=0, high=1, low_strict=True, high_strict=True, help="λ_t = ρ λ_{t−1}",
          symbol=r"\rho", ui_range=(0.5, 0.99)),
    Param("stop", 0.01, float, low=0, help="path stop: elasticity of the loss with respect to λ", ui_range=(1e-4, 0.1)),
    Param("max_steps", 200, int, low=1, high=10_000, help="cap on the number of λ values"),
    Param("period", 10, int, low=1, high=1000, help="iterations between dynamic screenings"),
    Param("active_set", False, bool, help="active-set projected gradient (Sec. 5.3)"),
    Param("range_screening", False, bool,
          help="RRPB range-based screening across λ (Sec. 4): pays where ranges cover many λ steps (ρ near 1, "
               "Table 2); off, RRPB screens all triplets at every λ (Table 4)"),
]


def _start(problem: TripletProblem, lam: float) -> np.ndarray:
    """K/max(λ, λ_max): the exact solution at λ ≥ λ_max, otherwise the path's first point."""
    lam_L, K = lambda_max(problem)
    return K / max(lam, lam_L)


def _run(problem, *, tol, max_iter, time_limit, callback, lam, bounds, rule, screening_period, active_set, refresh=10):
    if not isinstance(problem, TripletProblem):
        raise InputError("metric.solve needs a problem from metric.make_problem")
    check_lambda(problem, lam)
    screening = Screening(() if bounds == "none" else (bounds,), rule, screening_period)
    return minimize(problem, lam, _start(problem, lam), tol=tol, max_iter=max_iter, time_limit=time_limit,
                    callback=callback, screening=screening, active_set=active_set, refresh=refresh)


def run_pg(problem, **kw):
    return _run(problem, active_set=False, **kw)


def run_active_set(problem, **kw):
    return _run(problem, active_set=True, **kw)


METHODS = {m.name: m for m in (
    Method("pg", "Projected gradient (BB)", run_pg, [LAM, *SCREENING_PARAMS],
           "Projected gradient with the Barzilai–Borwein step and dynamic screening", "Sec. 5"),
    Method("active-set", "Active-set PG", run_active_set, [LAM, *SCREENING_PARAMS, REFRESH],
           "Projected gradient on triplets with positive loss, refreshed periodically", "Sec. 5.3"),
)}


def solve(problem, method: str, *, tol: float = 1e-6, max_iter: int = 10_000, time_limit=None, callback=None,
          **params):
    """Minimise P_λ at one λ; history has iter, time, objective, gap (relative duality gap) and screening counts."""
    return solve_with(METHODS, problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit,
                      callback=callback, **params)


def subsample_rows(y: np.ndarray, max_samples: int, seed: int) -> np.ndarray:
    """A class-stratified random subset of about ``max_samples`` rows (≥ 2 per class), in original order."""
    n = len(y)
    if max_samples == 0 or max_samples >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    classes, codes = np.unique(y, return_inverse=True)
    picked = []
    for c in range(len(classes)):
        members = np.flatnonzero(codes == c)
        take = min(members.size, max(2, int(round(max_samples * members.size / n))))
        picked.append(rng.choice(members, take, replace=False))
    return np.sort(np.concatenate(picked))


def make_problem(dataset: Dataset, **problem_params) -> TripletProblem:
    """Triplet problem from a classification dataset (PROBLEM_PARAMS; k = 0 means all triplets)."""
    p = validate_params(PROBLEM_PARAMS, problem_params)
    if dataset.task != "classification" or dataset.y is None:
        raise InputError(f"{dataset.name} is not a classification dataset; metric learning needs class labels")
    rows = subsample_rows(np.asarray(dataset.y), p["max_samples"], p["seed"])
    X = dataset.as_vectors()[rows]
    return make_triplet_problem(X, np.asarray(dataset.y)[rows], k=p["k"] or None, gamma=p["gamma"],
                                diagonal=p["diagonal"], scale=p["scale"], name=dataset.name, backend=p["backend"],
                                device=p["device"])


__all__ = [
    "TITLE", "PAPER", "METHODS", "PROBLEM_PARAMS", "PATH_PARAMS", "SCREENING_PARAMS", "STOPPING_PARAMS",
    "solve", "make_problem", "regularization_path", "PathResult", "TripletMetricLearner", "TripletProblem",
    "lambda_max", "minimize", "Screening", "BOUND_LABELS", "RULE_LABELS", "RULES", "PATH_BOUNDS", "subsample_rows",
]

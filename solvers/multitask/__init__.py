"""Multi-task learning of a shared predictive subspace: the convex relaxation rASO/cASO of alternating
structure optimization (seed 000, Chen, Tang, Liu & Ye), solved by APG, PG and BCD."""
from __future__ import annotations

from . import synthetic  # noqa: F401  (registers the family's generators)
from .data import TaskData, from_dataset, from_groups, from_shared, from_tasks, split_rows, task_index
from .eq14 import critical_points, gamma_of_t, solve_eq14
from .estimators import MultiTaskSubspace
from .methods import METHODS, solve
from .problem import MEASURE, PROBLEM_PARAMS, MultiTaskProblem, Point, make_problem
from .subspace import m_step, project_trace_box_psd, shared_subspace

TITLE = "Shared-subspace multi-task learning: convex ASO (rASO) by APG, PG and BCD"
PAPER = ("J. Chen, L. Tang, J. Liu, J. Ye. A Convex Formulation for Learning a Shared Predictive Structure "
         "from Multiple Tasks. IEEE TPAMI 35(5), 2013 (Appendices A–C; ICML 2009 as cASO).")

__all__ = [
    "TITLE", "PAPER", "METHODS", "MEASURE", "PROBLEM_PARAMS", "solve", "make_problem", "MultiTaskProblem", "Point",
    "TaskData", "from_dataset", "from_groups", "from_shared", "from_tasks", "split_rows", "task_index",
    "MultiTaskSubspace", "critical_points", "gamma_of_t", "solve_eq14", "m_step", "project_trace_box_psd",
    "shared_subspace",
]

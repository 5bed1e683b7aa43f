"""Contracts every family shares: Result and history recording, stopping, Param specs,
the input-error type with validation helpers, and projection/prox primitives."""
from .clock import clock_name, now, use_clock
from .errors import InputError
from .family import STOPPING_PARAMS, Method, check_stopping, solve_with, stopping_params
from .params import (Param, add_cli_flags, cli_values, merge_specs, params_from_cli, params_markdown, plain_symbol,
                     validate_params)
from .prox import (
    fista_momentum,
    fista_next_t,
    hard_threshold,
    project_box,
    project_capped_simplex,
    project_capped_simplex_bisection,
    project_psd,
    psd_part,
    singular_value_threshold,
)
from .result import STATUSES, Callback, HistoryRecorder, Result, relative_change
from .validation import (
    as_pm_one,
    check_array,
    check_finite,
    check_labels,
    check_memory,
    check_same_length,
    format_bytes,
    memory_budget,
)

__all__ = [
    "clock_name", "now", "use_clock",
    "InputError", "STOPPING_PARAMS", "Method", "check_stopping", "solve_with", "stopping_params",
    "Param", "add_cli_flags", "cli_values", "merge_specs", "params_from_cli", "params_markdown", "plain_symbol",
    "validate_params",
    "fista_momentum", "fista_next_t", "hard_threshold", "project_box", "project_capped_simplex",
    "project_capped_simplex_bisection", "project_psd", "psd_part", "singular_value_threshold",
    "STATUSES", "Callback", "HistoryRecorder", "Result", "relative_change",
    "as_pm_one", "check_array", "check_finite", "check_labels", "check_memory", "check_same_length",
    "format_bytes", "memory_budget",
]

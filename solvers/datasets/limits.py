"""How much memory one upload may claim: a fixed share of the solvers' memory budget.

An upload is untrusted, so its budget sits well below the machine's memory (one
eighth of ``solvers.core.memory_budget()``, itself half of physical memory unless
SOLVERS_MEMORY_BUDGET says otherwise): a server shared by many users survives any
single upload. Every reader checks the sizes a file *declares* (archive headers,
array headers, matrix dimensions) against this budget before it decompresses or
allocates anything.
"""
from __future__ import annotations

from ..core.validation import check_memory, memory_budget

#: An upload may use this fraction of the solvers' memory budget.
UPLOAD_SHARE_OF_BUDGET = 1 / 8


def upload_budget() -> int:
    """Bytes one upload may claim while it is read and turned into a Dataset."""
    return int(memory_budget() * UPLOAD_SHARE_OF_BUDGET)


def check_upload_memory(n_bytes: float, filename: str, what: str) -> None:
    """Refuse an upload whose declared content would take more than the upload budget."""
    check_memory(n_bytes, f"{filename}: {what}", budget=upload_budget())

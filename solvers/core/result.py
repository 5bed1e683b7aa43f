"""The solver contract: `Result`, and the recorder that builds its history.

Every solver in the lab loops like this::

    rec = HistoryRecorder(tol=tol, max_iter=max_iter, time_limit=time_limit,
                          callback=callback, measure="residual")
    for k in itertools.count():
        ...one iteration...
        if rec.record(k, objective=f, residual=r, support=s):
            break
    return rec.result({"w": w}, grad_evals=ge)

The recorder times the solver only: time spent in ``record`` itself (building
the row, the callback that draws live charts) and in blocks wrapped by
``with rec.excluded():`` (metrics the algorithm does not need) is left out,
as benchopt's callback strategy does. Seconds are read from
:func:`solvers.core.clock.now` (wall by default; ``use_clock("cpu")`` in benchmarks).
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from .clock import now

STATUSES = ("converged", "max_iter", "time_limit", "stopped", "diverged")

Callback = Callable[[dict], "bool | None"]


@dataclass
class Result:
    """What every ``solve`` returns."""

    solution: dict[str, Any]
    history: pd.DataFrame
    status: str
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; expected one of {STATUSES}")

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    def per_iteration_arrays(self) -> dict[str, np.ndarray]:
        """The 2-D arrays of ``info`` with one row per history row (at the top level or one dict down, as
        multitask's ``info["spectra"]``), by name: values a solver records per iteration as arrays, not as
        history columns of Python objects."""
        found = {}
        for name, value in self.info.items():
            for key, arr in (value.items() if isinstance(value, dict) else [(name, value)]):
                if isinstance(arr, np.ndarray) and arr.ndim == 2 and arr.shape[0] == len(self.history):
                    found[key] = arr
        return found

    def history_with_arrays(self) -> pd.DataFrame:
        """The history with each per-iteration array spread into columns NAME_1 … NAME_k: a file with one row per
        iteration (the CLI's --history, a page's export)."""
        parts = [self.history.reset_index(drop=True)]
        parts += [pd.DataFrame(arr, columns=[f"{name}_{i + 1}" for i in range(arr.shape[1])])
                  for name, arr in self.per_iteration_arrays().items()]
        return pd.concat(parts, axis=1) if len(parts) > 1 else self.history


class HistoryRecorder:
    """Records one history row per call, decides when to stop, keeps solver time.

    Parameters
    ----------
    tol : stop with status ``converged`` once ``row[measure] <= tol``.
    max_iter : stop with ``max_iter`` once the iteration counter reaches it.
    time_limit : seconds of solver time; ``None`` for no limit.
    callback : sees each row (a dict); returning ``False`` stops with ``stopped``.
    measure : the name of the family's optimality measure column.
    explode : the run ``diverged`` when |objective| exceeds ``explode`` times
        max(1, |first objective|), or when the objective or measure is NaN/inf.
    """

    def __init__(
        self,
        *,
        tol: float,
        max_iter: int,
        time_limit: float | None = None,
        callback: Callback | None = None,
        measure: str = "residual",
        explode: float = 1e12,
    ) -> None:
        if not (tol >= 0):
            raise ValueError(f"tol must be >= 0, got {tol}")
        if int(max_iter) < 0:
            raise ValueError(f"max_iter must be >= 0, got {max_iter}")
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.time_limit = time_limit
        self.callback = callback
        self.measure = measure
        self.explode = explode
        self.rows: list[dict] = []
        self.status: str | None = None
        self._elapsed = 0.0
        self._since = now()
        self._first_objective: float | None = None

    # -- timing -------------------------------------------------------------
    @property
    def elapsed(self) -> float:
        """Solver seconds so far (excluding monitoring and callbacks)."""
        return self._elapsed + (now() - self._since)

    def restart_clock(self) -> None:
        """Forget set-up time: call right before the first iteration if wanted."""
        self._elapsed = 0.0
        self._since = now()

    @contextmanager
    def excluded(self):
        """Time inside this block does not count as solver time."""
        self._elapsed += now() - self._since
        try:
            yield
        finally:
            self._since = now()

    # -- recording ----------------------------------------------------------
    def record(self, iteration: int, *, objective: float, **values: Any) -> str | None:
        """Append a row; return the stopping status, or ``None`` to go on."""
        self._elapsed += now() - self._since
        row = {"iter": int(iteration), "time": self._elapsed, "objective": float(objective)}
        row.update(values)
        self.rows.append(row)
        self.status = self._decide(row)
        if self.callback is not None and self.callback(dict(row)) is False and self.status is None:
            self.status = "stopped"
        self._since = now()
        return self.status

    def _decide(self, row: dict) -> str | None:
        objective = row["objective"]
        measure = row.get(self.measure)
        if not math.isfinite(objective) or (measure is not None and not math.isfinite(float(measure))):
            return "diverged"
        if self._first_objective is None:
            self._first_objective = objective
        if abs(objective) > self.explode * max(1.0, abs(self._first_objective)):
            return "diverged"
        if measure is not None and float(measure) <= self.tol:
            return "converged"
        if row["iter"] >= self.max_iter:
            return "max_iter"
        if self.time_limit is not None and self._elapsed >= self.time_limit:
            return "time_limit"
        return None

    def stop(self, status: str) -> None:
        """Set a status decided by the solver itself (e.g. a failed line search)."""
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}")
        self.status = status

    def history(self) -> pd.DataFrame:
        return pd.DataFrame.from_records(self.rows)

    def result(self, solution: dict[str, Any], **info: Any) -> Result:
        """Package the run. ``info`` gets ``n_iter`` and ``time`` added."""
        history = self.history()
        n_iter = int(history["iter"].iloc[-1]) if len(history) else 0
        info = {"n_iter": n_iter, "time": self._elapsed, **info}
        return Result(solution=solution, history=history, status=self.status or "max_iter", info=info)


def relative_change(new: float, old: float) -> float:
    """|new − old| / max(1, |old|): a scale-free change for stopping rules."""
    return abs(new - old) / max(1.0, abs(old))

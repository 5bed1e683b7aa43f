"""Where a screened path's screening time goes, and the least work its rule must do per λ (its floor).

    python -m solvers.bench metric --profile-screening --datasets segment,satimage --methods RRPB,DGB,PGB --clock cpu

One path per row with timers around the parts of its screening: the RRPB range ledger's step (its pair values at
the reference, the active set's subset, the update of H_L̂, and the compiled pass, which is the rest), the path
step of the other bounds (``path._path_screen``), and the dynamic rounds (the rest of the screening time). The
floor of the path step at each λ_t:

- RRPB's ranges (Thm 4.1, with ``range_screening``): each candidate (left unscreened at λ_{t−1}, or its range
  ended at λ_t) needs its margin at the reference M_{t−1}: the pair values u_pᵀM_{t−1}u_p over the pairs the
  candidates use and one gather q_diff − q_same per candidate (``compiled_kernels.floor_margins``), both timed
  at every λ;
- RRPB over all of T (Thm 3.10): its centre is a multiple of M_{t−1}, so one margins pass over every triplet;
- DGB: the duality gap of the whole problem at M_{t−1} for λ_t, one evaluation over every triplet;
- PGB, GB and CDGB: that evaluation (their centre and radius come from ∇P̃ at M_{t−1}) and one margins pass over
  every triplet at the centre, for the rule.
The floor is the first bound's (the one that runs at every λ); the last three are timed once, at the path's last
solution (median of five). "share at the floor" is the floor's time over the floor's time plus the path's solver
time: the share the row would have if its path step cost only its floor and its dynamic rounds cost nothing. The timers wrap the functions only during the profile.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np

from ..core import use_clock
from . import kernels
from . import path as path_module
from .problem import ReducedProblem, TripletProblem, TripletSubset
from .ranges import RangeLedger

_EVALUATION_REPEATS = 5


class _Timers:
    """CPU seconds and counts, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.in_ledger = False  # the ledger's parts are counted only inside its step
        self.running: set[str] = set()  # parts being timed now: a part that calls another one is timed once

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def count(self, name: str, n: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def timed(self, owner, attribute: str, name: str, ledger_part: bool = True):
        """``owner.attribute`` wrapped to add its CPU seconds to ``name`` (a ledger part: only inside its step)."""
        inner_function = getattr(owner, attribute)

        def wrapper(*args, **kwargs):
            if (ledger_part and not self.in_ledger) or name in self.running:
                return inner_function(*args, **kwargs)
            started = time.process_time()
            self.running.add(name)
            try:
                return inner_function(*args, **kwargs)
            finally:
                self.running.discard(name)
                self.add(name, time.process_time() - started)
        return wrapper


@contextlib.contextmanager
def _wrapped(timers: _Timers):
    """The screening functions wrapped by ``timers`` inside the block, restored after it."""
    originals = [(RangeLedger, "step"), (TripletProblem, "pair_values_where"), (TripletSubset, "pair_values"),
                 (TripletProblem, "subset"), (TripletProblem, "weighted_pairs"), (path_module, "_path_screen")]
    saved = [(owner, attribute, owner.__dict__[attribute]) for owner, attribute in originals]
    ledger_step = RangeLedger.step

    def step_with_floor(self, t, lam, reference):
        problem = self.problem
        if reference is not None and kernels.USE_NUMBA and problem.backend == "pairs" and problem.torch is None:
            _time_ledger_floor(self, t, reference[0], timers)
        started = time.process_time()
        timers.in_ledger = True
        try:
            return ledger_step(self, t, lam, reference)
        finally:
            timers.in_ledger = False
            timers.add("ledger", time.process_time() - started)
            timers.count("left active", self.candidates.size)

    try:
        RangeLedger.step = step_with_floor
        TripletProblem.pair_values_where = timers.timed(TripletProblem, "pair_values_where", "pair values")
        TripletSubset.pair_values = timers.timed(TripletSubset, "pair_values", "pair values")  # the pass's: all pairs
        TripletProblem.subset = timers.timed(TripletProblem, "subset", "subset")
        TripletProblem.weighted_pairs = timers.timed(TripletProblem, "weighted_pairs", "H_L")
        path_module._path_screen = timers.timed(path_module, "_path_screen", "path step", ledger_part=False)
        yield
    finally:
        for owner, attribute, original in saved:
            setattr(owner, attribute, original)


def _time_ledger_floor(ledger: RangeLedger, t: int, M0: np.ndarray, timers: _Timers) -> None:
    """Time the floor of the ledger's step at ``t`` and count its candidates; nothing of the ledger changes.

    The pair values at M0 are timed over all pairs and counted at that rate for the pairs the candidates use
    (a product over gathered rows costs more per pair, never less); the gather is timed as it is. The whole
    call's time (``floor overhead``) is taken out of the path's by the caller."""
    started = time.process_time()
    problem, T = ledger.problem, ledger.problem.triplets
    n_pairs = len(T.pairs)
    candidates = np.flatnonzero(ledger.release <= t)
    used = np.zeros(n_pairs, bool)
    used[T.diff[candidates]] = used[T.same[candidates]] = True
    n_used = np.count_nonzero(used)
    product = time.process_time()
    q = problem.everything.pair_values(M0)
    gather = time.process_time()
    kernels.compiled().floor_margins(candidates, T.diff, T.same, q, np.empty(candidates.size))
    stopped = time.process_time()
    timers.add("floor pair values", (gather - product) * n_used / max(n_pairs, 1))
    timers.add("floor gather", stopped - gather)
    timers.count("candidates", candidates.size)
    timers.count("released", int(np.count_nonzero(ledger.release == t)))
    timers.add("floor overhead", time.process_time() - started)


def _median_seconds(work, repeats: int = _EVALUATION_REPEATS) -> float:
    times = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return float(np.median(times))


def profile_path(problem: TripletProblem, bounds: tuple[str, ...], **path_options) -> dict:
    """One screened path with its screening split into parts and its floor (module docstring): CPU seconds
    (``path``, ``solver``, ``screening``, ``ledger`` and its parts, ``path step``, ``dynamic rounds``,
    ``floor``), counts per λ (``candidates``, ``released``, ``left active``), ``lambdas`` and ``share at floor``."""
    kernels.warm_up()
    if kernels.USE_NUMBA:  # compile or load the floor's kernel before the clock
        kernels.compiled().floor_margins(np.zeros(1, np.int64), np.zeros(1, np.int32), np.zeros(1, np.int32),
                                         np.zeros(1), np.zeros(1))
    timers = _Timers()
    with use_clock("cpu"), _wrapped(timers):  # CPU seconds, as the timers' (the floor's are taken out of the path's)
        result = path_module.regularization_path(problem, bounds=bounds, analysis=False, **path_options)
    s = timers.seconds
    ledger_floor = s.get("floor pair values", 0.0) + s.get("floor gather", 0.0)
    overhead = s.get("floor overhead", 0.0)  # the floor's timing ran inside the path's timed steps
    lambdas = len(result.table) - 1
    path = float(result.table["time"].sum()) - overhead
    screening = float(result.table["screen_time"].sum()) - overhead
    out = {"lambdas": lambdas, "path": path, "screening": screening, "solver": path - screening,
           "ledger": s.get("ledger", 0.0), "pair values": s.get("pair values", 0.0),
           "subset": s.get("subset", 0.0), "H_L": s.get("H_L", 0.0), "path step": s.get("path step", 0.0)}
    out["compiled pass"] = out["ledger"] - out["pair values"] - out["subset"] - out["H_L"]
    out["dynamic rounds"] = screening - out["ledger"] - out["path step"]
    for name in ("candidates", "released", "left active"):
        out[name] = timers.counts.get(name, 0) / max(lambdas, 1)
    if path_module.uses_ranges(problem, bounds, path_options.get("range_screening")):  # the ledger's floor
        out["floor"] = ledger_floor if timers.counts.get("candidates") else float("nan")
    else:
        M = result.solutions[-1]
        unscreened = ReducedProblem.unscreened(problem)
        # a copy of M each time: a problem reads its own last pass at the same M (the same array) instead of
        # making it again
        evaluation = 0.0 if bounds[0] == "rrpb" else _median_seconds(lambda: unscreened.evaluate(M.copy(), 1.0))
        margins = 0.0 if bounds[0] == "dgb" else _median_seconds(lambda: problem.margins(M.copy()))
        out["floor"] = lambdas * (evaluation + margins)
    out["share at floor"] = out["floor"] / (out["floor"] + out["solver"])
    return out


def format_profile(name: str, label: str, row: dict) -> str:
    """One row's profile as a few lines of text (ms per λ for the per-λ parts)."""
    per = 1e3 / max(row["lambdas"], 1)
    lines = [f"{name} {label}: path {row['path']:.2f} s, screening {row['screening']:.2f} s "
             f"({row['screening'] / row['path']:.0%}), solver {row['solver']:.2f} s, {row['lambdas']} λ"]
    if row["ledger"]:
        lines.append(f"  ledger {row['ledger'] * per:.2f} ms/λ: compiled pass {row['compiled pass'] * per:.2f}, "
                     f"pair values {row['pair values'] * per:.2f}, subset {row['subset'] * per:.2f}, "
                     f"H_L̂ {row['H_L'] * per:.2f}; "
                     f"candidates {row['candidates']:,.0f}/λ ({row['released']:,.0f} released, "
                     f"{row['left active']:,.0f} left active)")
    if row["path step"]:
        lines.append(f"  path step {row['path step'] * per:.2f} ms/λ")
    lines.append(f"  dynamic rounds {row['dynamic rounds']:.2f} s")
    lines.append(f"  floor {row['floor'] * per:.2f} ms/λ = {row['floor']:.2f} s; share at the floor "
                 f"{row['share at floor']:.1%}")
    return "\n".join(lines)


def profile_rows(problem: TripletProblem, name: str, configs: list[tuple[str, tuple[str, ...]]], **path_options
                 ) -> list[str]:
    """``format_profile`` of every configuration on ``problem``, one path each, in order."""
    return [format_profile(name, label, profile_path(problem, bounds, **path_options)) for label, bounds in configs]


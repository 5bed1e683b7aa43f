"""What simulated students ask of each page: the lesson's links, a student's own drag, the heaviest run.

A link is the page's URL state (``{widget key: URL text}``), exactly what "Copy link" gives and what Back and
Forward restore (app/ui/page_state.py). Preset links are written from the presets' own widget values
(app/views/_presets.py), so the lesson follows the presets when they change.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence
from urllib.parse import urlencode

from app.ui.page_state import readable_number
from app.ui.params import log_grid
from app.views._presets import PRESETS

PAGES = ("foundations", "sparse", "multitask", "smm", "metric", "npsvc")


@dataclass(frozen=True)
class PagePlan:
    """One page's share of a class: which slider the lecture moves, which ones a student drags, the heaviest run."""

    lesson_key: str  # the slider the lecturer asks everyone to move ("set κ to 100")
    lesson_values: Sequence[float]  # notches of that slider, in the order the lecture visits them
    drag: Mapping[str, Sequence[float]]  # sliders a student drags on their own: key → the slider's notches
    heavy: Mapping[str, Any] = field(default_factory=dict)  # the heaviest configuration the page allows


def _notches(low: float, high: float, step: float) -> list[float]:
    count = int(round((high - low) / step))
    return [round(low + i * step, 10) for i in range(count + 1)]


PLANS: dict[str, PagePlan] = {
    "foundations": PagePlan(
        "fd.problem.kappa", [100.0, 1000.0, 10.0, 500.0, 2000.0, 5.0],
        {"fd.problem.x0": _notches(-2.0, 2.0, 0.02), "fd.problem.y0": _notches(-1.0, 3.0, 0.02)},
        # every method, Rosenbrock (α = 1/L is tiny there), the largest iteration cap and the smallest tolerance
        {"fd.problem.problem": "rosenbrock", "fd.methods": ["gd", "heavy-ball", "nesterov"],
         "fd.stop.max_iter": 5000, "fd.stop.tol": 1e-12}),
    "sparse": PagePlan(
        "sp.problem.s_ratio", [0.5, 1.0, 1.5, 2.0, 0.8, 1.2],
        {"sp.problem.s_ratio": _notches(0.0, 3.0, 0.02), "sp.problem.step_factor": _notches(0.1, 0.999, 0.001)},
        {"sp.methods": ["pg", "apg", "pg+", "apg+"], "sp.stop.max_iter": 10000, "sp.stop.tol": 1e-10}),
    "multitask": PagePlan(
        "mt.problem.alpha", [1.0, 0.01, 10.0, 0.5, 2.0, 0.05],
        {"mt.problem.alpha": log_grid(1e-3, 100.0, 1.0), "mt.problem.beta": log_grid(1e-3, 100.0, 1.0)},
        # the page allows 20000 iterations (after Run); that ran past 150 s on the loaded 2-core machine, past any
        # lecture step: 5000 keeps the neighbour heavy and lets its runs end within the harness's timeout
        {"mt.methods": ["apg", "pg", "bcd"], "mt.stop.max_iter": 5000, "mt.stop.tol": 1e-10}),
    "smm": PagePlan(
        "smm.problem.C", [1.0, 100.0, 0.1, 50.0, 2.0, 20.0],
        {"smm.problem.C": log_grid(1e-3, 1000.0, 1.0), "smm.problem.tau": log_grid(1e-3, 1000.0, 1.0)},
        {"smm.data_limits.n_max": 3000, "smm.stop.max_iter": 20000, "smm.stop.tol": 1e-10}),
    "metric": PagePlan(
        "ml.problem.gamma", [0.1, 0.2, 0.02, 0.3, 0.15, 0.05],
        {"ml.problem.gamma": _notches(0.0, 0.5, 0.005), "ml.path.rho": _notches(0.5, 0.99, 0.002)},
        {"ml.problem.k": 30, "ml.stop.max_iter": 20000, "ml.stop.tol": 1e-10}),
    "npsvc": PagePlan(
        "np.m.knpsvc.c", [10.0, 0.1, 100.0, 0.5, 5.0, 0.01],
        {"np.m.knpsvc.c": log_grid(1e-3, 1000.0, 1.0), "np.m.twsvm.c": log_grid(1e-3, 1000.0, 1.0)},
        {"np.stop.max_iter": 2000, "np.stop.tol": 1e-10}),
}


def url_text(value: Any) -> list[str]:
    """A widget value as the page writes it into its URL (page_state's codecs): numbers readable, lists repeated."""
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in url_text(v)]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, (int, float)):
        return [readable_number(value)]
    return [str(value)]


def query_string(link: Mapping[str, Any]) -> str:
    """``{"fd.methods": ["gd", "nesterov"], "fd.step": 1.0}`` → ``fd.methods=gd&fd.methods=nesterov&fd.step=1``."""
    return urlencode([(k, t) for k, v in link.items() for t in url_text(v)])


def preset_links(page: str) -> list[dict[str, Any]]:
    """One link per preset of the page: the preset's widget values (what the page shows once it is applied)."""
    return [dict(p.values) for p in PRESETS.get(page, [])]


def lesson_links(page: str, steps: int) -> list[dict[str, Any]]:
    """The lecture: the page's presets in order, then the lesson slider's notches from the defaults, ``steps`` in all."""
    plan = PLANS[page]
    links = preset_links(page) + [{plan.lesson_key: v} for v in plan.lesson_values]
    while len(links) < steps:  # a long lecture goes over the slider again
        links += [{plan.lesson_key: v} for v in plan.lesson_values]
    return links[:steps]


def notch_links(page: str, steps: int) -> list[dict[str, Any]]:
    """From the page's defaults, the lesson slider's notches alone: on a fresh server each is a configuration not run
    before (a fresh notch), with every other widget at its default."""
    plan = PLANS[page]
    return [{plan.lesson_key: v} for v in plan.lesson_values][:steps]


def drag_links(page: str, steps: int, student: int) -> list[dict[str, Any]]:
    """A student dragging on their own: every drag slider starts on a notch of their own and moves 1–3 notches a
    step (seeded by the student's number, so a rerun of the test asks the same)."""
    rng = random.Random(student)
    plan = PLANS[page]
    where = {k: rng.randrange(len(v)) for k, v in plan.drag.items()}
    links = []
    for _ in range(steps):
        for k, notches in plan.drag.items():
            move = rng.choice([-3, -2, -1, 1, 2, 3])
            where[k] = min(max(where[k] + move, 0), len(notches) - 1)
        links.append({k: plan.drag[k][i] for k, i in where.items()})
    return links


def heavy_link(page: str) -> dict[str, Any]:
    return dict(PLANS[page].heavy)


def warm_links(page: str) -> list[dict[str, Any]]:
    """What a lecturer warms before class: the page at its defaults, every preset, the lesson slider's notches."""
    plan = PLANS[page]
    return [{}] + preset_links(page) + [{plan.lesson_key: v} for v in plan.lesson_values]

"""One look per method, the same on every page and every chart: a colour, a dash and a marker.

Colours are Okabe & Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/): within a family every
method gets a different colour AND a different dash or marker, so two methods stay apart under deuteranopia,
in greyscale print, and when their curves coincide (a dashed line over a solid one still shows both).
The Okabe–Ito yellow (#F0E442) is left out: 1.2:1 against white.
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

BLACK, ORANGE, SKY, GREEN, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7")
GREY = "#7F7F7F"  # for references and "others" (4.0:1 on white, used with a dash)
PALETTE = [BLUE, VERMILLION, GREEN, ORANGE, SKY, PURPLE, BLACK, GREY]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
MARKERS = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down"]


class Style(NamedTuple):
    color: str
    dash: str
    marker: str


def _family(*entries: tuple[str, str], start: int = 0) -> dict[str, Style]:
    """Methods of one family, in order: the i-th gets the given colour, the i-th dash and the i-th marker
    (``start`` skips the dashes and markers of methods shared with another family: multitask's APG and PG)."""
    return {name: Style(color, DASHES[i % len(DASHES)], MARKERS[i % len(MARKERS)])
            for i, (name, color) in enumerate(entries, start)}


METHOD_STYLES: dict[str, Style] = {
    **_family(("gd", BLUE), ("heavy-ball", ORANGE), ("nesterov", GREEN)),
    "fista": Style(GREEN, "dot", "diamond"), "projected-gd": Style(BLUE, "solid", "circle"),
    # sparse: APG vs APG+ and PG-LL vs GraSP were confusable red/red and grey/green pairs
    **_family(("pg", BLUE), ("apg", VERMILLION), ("pg+", SKY), ("apg+", PURPLE), ("pg-ll", BLACK),
              ("apg-ll+", ORANGE), ("grasp", GREEN)),
    # multitask: APG and PG as in sparse
    **_family(("bcd", GREEN), ("cvxpy", BLACK), ("single-task", GREY), ("pooled", PURPLE), start=2),
    # smm
    **_family(("alm-sncg", VERMILLION), ("ispadmm", BLUE), ("sgs-ispadmm", SKY), ("fadmm", ORANGE),
              ("as+alm", PURPLE), ("warm+alm", GREEN)),
    # metric: bounds and the unscreened solver (PGB and RRPB coincide at the defaults: dot over dashdot)
    **_family(("naive", BLACK), ("gb", BLUE), ("pgb", SKY), ("dgb", VERMILLION), ("cdgb", ORANGE), ("rpb", GREEN),
              ("rrpb", PURPLE), ("rrpb+pgb", GREY)),
    # npsvc: K- and D-NPSVC++ were the same red pair as APG/APG+
    **_family(("twsvm", BLUE), ("pin-twsvm", SKY), ("npsvm", GREEN), ("lstsvm", BLACK), ("knpsvc", VERMILLION),
              ("dnpsvc", PURPLE), ("fixed-tau", ORANGE), ("cross-entropy", GREY)),
    "svc": Style(BLACK, "longdashdot", "triangle-down"),
}
METHOD_STYLES["k-npsvc++"] = METHOD_STYLES["knpsvc"]
METHOD_STYLES["d-npsvc++"] = METHOD_STYLES["dnpsvc"]
METHOD_COLORS: dict[str, str] = {name: s.color for name, s in METHOD_STYLES.items()}


def _key(name: str) -> str:
    return name.strip().lower().replace(" ", "-").replace("_", "-")


def method_style(name: str) -> Style:
    """Colour, dash and marker of a method; unknown names get a stable combination from their hash."""
    key = _key(name)
    if key in METHOD_STYLES:
        return METHOD_STYLES[key]
    digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
    return Style(PALETTE[digest % len(PALETTE)], DASHES[(digest // 8) % len(DASHES)],
                 MARKERS[(digest // 48) % len(MARKERS)])


def method_color(name: str) -> str:
    """The colour of a method (see ``method_style`` for its dash and marker)."""
    return method_style(name).color


def method_line(name: str, width: float = 2.5) -> dict:
    """Plotly ``line=`` for a method: its colour and dash."""
    s = method_style(name)
    return dict(color=s.color, dash=s.dash, width=width)


def method_marker(name: str, size: float = 8) -> dict:
    """Plotly ``marker=`` for a method: its colour and symbol, at most 12 markers per curve."""
    s = method_style(name)
    return dict(color=s.color, symbol=s.marker, size=size, maxdisplayed=12)

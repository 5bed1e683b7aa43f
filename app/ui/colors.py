"""One colour per method, the same on every page and every chart."""
from __future__ import annotations

import hashlib

# Known methods across the families get fixed, distinguishable colours (Okabe–Ito-like + extras).
METHOD_COLORS: dict[str, str] = {
    # foundations
    "gd": "#0072B2", "heavy-ball": "#E69F00", "nesterov": "#009E73", "fista": "#009E73",
    "projected-gd": "#0072B2",
    # sparse
    "pg": "#0072B2", "apg": "#D55E00", "pg+": "#56B4E9", "apg+": "#CC0033", "pg-ll": "#999999",
    "apg-ll+": "#E69F00", "grasp": "#009E73",
    # multitask
    "bcd": "#009E73", "cvxpy": "#000000", "single-task": "#999999", "pooled": "#AA7733",
    # smm
    "alm-sncg": "#CC0033", "ispadmm": "#0072B2", "sgs-ispadmm": "#56B4E9", "fadmm": "#E69F00",
    "as+alm": "#CC0033", "warm+alm": "#0072B2",
    # metric (bounds and the unscreened solver)
    "naive": "#000000", "gb": "#0072B2", "pgb": "#56B4E9", "dgb": "#D55E00", "cdgb": "#E69F00",
    "rpb": "#009E73", "rrpb": "#CC0033", "rrpb+pgb": "#882255",
    # npsvc
    "svc": "#000000", "twsvm": "#0072B2", "lstsvm": "#56B4E9", "knpsvc": "#CC0033", "k-npsvc++": "#CC0033",
    "dnpsvc": "#D55E00", "d-npsvc++": "#D55E00", "cross-entropy": "#999999", "fixed-tau": "#E69F00",
}
FALLBACK = ["#332288", "#117733", "#44AA99", "#88CCEE", "#DDCC77", "#CC6677", "#AA4499", "#661100"]


def method_color(name: str) -> str:
    """The colour of a method; unknown names get a stable colour from their hash."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    if key in METHOD_COLORS:
        return METHOD_COLORS[key]
    digest = int(hashlib.sha1(key.encode()).hexdigest(), 16)
    return FALLBACK[digest % len(FALLBACK)]

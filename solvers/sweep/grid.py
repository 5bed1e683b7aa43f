"""A sweep's grid: every combination of a few named axes, one configuration (a plain dict) per job."""
from __future__ import annotations

import itertools
from typing import Any, Sequence

from ..core import InputError


def expand(axes: dict[str, Sequence[Any]], fixed: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The Cartesian product of ``axes`` in the order given (the last axis varies fastest), ``fixed`` in every one.

    >>> expand({"dataset": ["iris", "wine"], "seed": [0, 1]})[1]
    {'dataset': 'iris', 'seed': 1}
    """
    fixed = dict(fixed or {})
    clash = sorted(set(axes) & set(fixed))
    if clash:
        raise InputError(f"{', '.join(clash)} is both an axis and a fixed setting; keep one")
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise InputError(f"axis {name!r} needs a list of values, got {values!r}")
        if len(list(values)) == 0:
            raise InputError(f"axis {name!r} has no values; give at least one")
    names = list(axes)
    return [{**fixed, **dict(zip(names, combo))} for combo in itertools.product(*(list(v) for v in axes.values()))]


def parse_value(text: str) -> Any:
    """'3' → 3, '0.1' → 0.1, '1e-3' → 0.001, 'true' → True, anything else stays a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_axis(text: str) -> tuple[str, list[Any]]:
    """'name=v1,v2,v3' → ('name', [v1, v2, v3]) with numbers parsed."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise InputError(f"{text!r} is not NAME=V1,V2,...; e.g. --param c=0.1,1,10")
    return name.strip(), [parse_value(v) for v in values.split(",") if v.strip()]

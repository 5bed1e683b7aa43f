"""Widgets generated from Param specs; values mirrored in the URL (``bind="query-params"``)."""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import streamlit as st

from solvers.core import InputError, Method, Param, validate_params


def log_grid(low: float, high: float, default: float) -> list[float]:
    """1–2–5 steps per decade between low and high, with the default included."""
    values = {float(default)}
    for exp in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1):
        for mantissa in (1.0, 2.0, 5.0):
            v = float(f"{mantissa}e{exp}")
            if low * (1 - 1e-12) <= v <= high * (1 + 1e-12):
                values.add(v)
    return sorted(values)


def format_number(v: float) -> str:
    return f"{v:.3g}" if 1e-3 <= abs(v) < 1e4 or v == 0 else f"{v:.0e}"


def label_of(p: Param) -> str:
    return f"{p.name} (${p.symbol}$)" if p.symbol and p.symbol != p.name else p.name


def help_of(p: Param) -> str:
    scale = " Log scale." if p.log else ""
    return f"{p.help} Allowed: {p.bounds_text()}.{scale}".strip()


def url_value_problem(p: Param, key: str) -> str | None:
    """Why the URL's value for this widget cannot be used, or None (absent or fine).

    Streamlit drops a bound widget's URL value that the widget cannot take and silently shows the
    default; the page says so instead, with the allowed range.
    """
    raw = st.query_params.get(key)
    if raw is None or (p.choices is None and p.type in (bool, str)):
        return None
    if p.choices is not None:
        return None if raw in {str(c) for c in p.choices} else f"allowed: {p.bounds_text()}"
    try:
        value = float(raw)
    except ValueError:
        return "not a number"
    if p.type is int and not value.is_integer():
        return "not a whole number"
    try:
        validate_params([p], {p.name: p.type(value)})
    except InputError as exc:
        return str(exc)
    if p.default is None:
        return None
    lo, hi = p.widget_range()
    if not lo <= value <= hi:
        return f"outside the widget's range {format_number(lo)} … {format_number(hi)}"
    if p.log and not any(math.isclose(value, v, rel_tol=1e-9) for v in log_grid(max(lo, 1e-300), hi, p.default)):
        return "not on the slider's 1–2–5 steps"
    return None


def param_widget(p: Param, *, key: str, container: Any = None) -> Any:
    """One widget for one Param; ``key`` is also the URL query parameter's name."""
    box = container if container is not None else st
    problem = url_value_problem(p, key)
    if problem:
        box.error(f"The link sets {key} = {st.query_params.get(key)!r}, which cannot be used ({problem}); "
                  f"{label_of(p)} shows its default {p.default} instead. Change it in the sidebar or in the URL.")
    kw = dict(key=key, help=help_of(p), bind="query-params")
    if p.choices is not None:
        return box.selectbox(label_of(p), list(p.choices), index=list(p.choices).index(p.default), **kw)
    if p.type is bool:
        return box.toggle(label_of(p), value=bool(p.default), **kw)
    if p.type is str:
        return box.text_input(label_of(p), value=str(p.default), **kw)
    if p.default is None:  # an optional number: an empty box means "not given"
        return box.number_input(label_of(p), value=None, min_value=p.low, max_value=p.high, **kw)
    lo, hi = p.widget_range()
    if p.log:
        options = log_grid(max(lo, 1e-300), hi, p.default)
        if p.type is int:
            options = sorted({max(int(round(v)), int(lo)) for v in options} | {int(p.default)})
        return box.select_slider(label_of(p), options=options, value=p.default, format_func=format_number, **kw)
    if p.type is int:
        lo_i, hi_i = int(math.ceil(lo)), int(math.floor(hi))
        if hi_i - lo_i <= 200:
            return box.slider(label_of(p), min_value=lo_i, max_value=hi_i, value=int(p.default), step=1, **kw)
        return box.number_input(label_of(p), min_value=lo_i if p.low is not None else None,
                                max_value=hi_i if p.high is not None else None, value=int(p.default), step=1, **kw)
    step = (hi - lo) / 100 if hi > lo else 0.01
    return box.slider(label_of(p), min_value=float(lo), max_value=float(hi), value=float(p.default),
                      step=float(f"{step:.2g}"), **kw)


def param_form(specs: Sequence[Param], *, key: str, container: Any = None) -> dict[str, Any]:
    """Widgets for a list of specs, returned as validated values ``{name: value}``."""
    values = {p.name: param_widget(p, key=f"{key}.{p.name}", container=container) for p in specs}
    return validate_params(specs, values)


def method_picker(methods: Mapping[str, Method], *, key: str, default: Sequence[str], label: str = "Methods",
                  container: Any = None) -> list[str]:
    """Several methods at once, by name; shows each method's label."""
    box = container if container is not None else st.sidebar
    return box.multiselect(label, list(methods), default=list(default), key=key, bind="query-params",
                           format_func=lambda n: methods[n].label, help="Pick one or more; each gets its own colour.")


def method_params(methods: Mapping[str, Method], chosen: Sequence[str], *, key: str,
                  container: Any = None) -> dict[str, dict[str, Any]]:
    """One expander of parameters per chosen method (only for methods that have parameters)."""
    box = container if container is not None else st.sidebar
    out: dict[str, dict[str, Any]] = {}
    for name in chosen:
        m = methods[name]
        if m.params:
            with box.expander(f"{m.label} parameters"):
                out[name] = param_form(m.params, key=f"{key}.{name}")
        else:
            out[name] = {}
    return out

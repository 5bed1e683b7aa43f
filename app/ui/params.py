"""Widgets generated from Param specs; values kept in session state and the URL by ``page_state``.

Sliders show values as they are (2000, 0.001, 0.5346: never "2e+03" or "0.00") and can always return
to their default: log parameters slide over a 1–2–5 grid that contains the default, and so do linear
ones whose default is tiny next to their range (μ = 0.001 on [0, 10]); other linear sliders step on a
grid that contains the default. Labels are plain text (screen readers read them); LaTeX goes in help.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import streamlit as st

from solvers.core import InputError, Method, Param, plain_symbol, validate_params

from .page_state import (
    LinkValueError, bool_codec, choice_codec, kept, multi_choice_codec, number_codec, optional_number_codec,
    readable_number, snap, text_codec,
)

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
    """How a slider shows a value: as it is (2000, 0.001, 1e-8)."""
    return readable_number(v)


def label_of(p: Param) -> str:
    """Plain-text widget label, e.g. "kappa (κ)"; never raw LaTeX."""
    symbol = plain_symbol(p.symbol) if p.symbol else ""
    return f"{p.name} ({symbol})" if symbol and symbol != p.name else p.name


def help_of(p: Param) -> str:
    scale = " Log scale." if p.log else ""
    symbol = f" In the paper: ${p.symbol}$." if p.symbol and p.symbol != p.name else ""
    return f"{p.help} Allowed: {p.bounds_text()}.{scale}{symbol}".strip()


def slider_options(p: Param) -> list[float] | None:
    """The options of a select_slider for this number, or None when a plain slider suits it.

    Log parameters; and linear ones on [0, hi] whose default is under 1 % of hi, which a linear slider
    cannot reach again (μ = 0.001 on [0, 10] jumps 0 → 0.1): 0 plus a 1–2–5 grid from default/100.
    """
    lo, hi = p.widget_range()
    if p.log:
        options = log_grid(max(lo, 1e-300), hi, p.default)
        if p.type is int:
            options = sorted({max(int(round(v)), int(lo)) for v in options} | {int(p.default)})
        return [v for v in options if admissible(p, v)]  # no end on a strict bound (σ < 1: the grid's 1 goes)
    if p.type is float and lo == 0 and 0 < p.default <= hi / 100:
        return [v for v in [0.0] + log_grid(p.default / 100, hi, p.default) if admissible(p, v)]
    return None


def admissible(p: Param, value: float) -> bool:
    """Whether the Param's bounds admit the value (a slider must never offer one that the page then refuses)."""
    try:
        p.check(value)
    except InputError:
        return False
    return True


def inside_strict_bounds(p: Param, lo: float, hi: float, step: float) -> tuple[float, float]:
    """A linear slider's ends moved onto the first grid point inside a strict bound: β with 0 < β ≤ 1 slides from
    one step above 0, ζ < (1 + √5)/2 up to the last step below it. The grid from ``lo`` (which holds the default)
    is kept."""
    if not admissible(p, lo):
        lo += step * math.ceil((p.low - lo) / step + 1e-9)  # the first grid point above the bound
    if not admissible(p, hi):
        hi = lo + step * (math.ceil((p.high - lo) / step - 1e-9) - 1)
    return lo, hi


def linear_step(lo: float, hi: float, default: float) -> float:
    """A 1–2–5 step near (hi − lo)/100 on whose grid from ``lo`` the default lies (so the slider can return to it)."""
    if hi <= lo:
        return 0.01
    target = (hi - lo) / 100
    for exp in range(math.floor(math.log10(target)), math.floor(math.log10(target)) - 7, -1):
        for mantissa in (5.0, 2.0, 1.0):
            step = float(f"{mantissa}e{exp}")
            if step > target * (1 + 1e-9):
                continue
            k = (default - lo) / step
            if math.isclose(k, round(k), abs_tol=1e-6):
                return step
    return float(f"{target:.1g}")


def decimals(step: float) -> int:
    text = readable_number(step)
    if "e-" in text:
        mantissa, exp = text.split("e-")
        return int(exp) + (len(mantissa.split(".")[1]) if "." in mantissa else 0)
    return len(text.split(".")[1]) if "." in text else 0


def checker(p: Param, key: str) -> Any:
    """The URL check of one numeric Param: validates, keeps the slider's range and steps (LinkValueError)."""
    options = slider_options(p) if p.default is not None else None

    def check(value: float) -> Any:
        if p.type is int and not value.is_integer():
            raise LinkValueError("not a whole number")
        try:
            validate_params([p], {p.name: p.type(value)})
        except InputError as exc:
            raise LinkValueError(str(exc)) from None
        if p.default is None:
            return p.type(value)
        lo, hi = p.widget_range()
        if not lo <= value <= hi:
            raise LinkValueError(f"outside the widget's range {format_number(lo)} … {format_number(hi)}")
        if options is not None:
            hit = snap(value, options)
            if hit is None:
                near = sorted(options, key=lambda o: abs(math.log(max(o, 1e-300)) - math.log(max(value, 1e-300))))
                raise LinkValueError(f"not on the slider's 1–2–5 steps; nearest: "
                                     f"{', '.join(format_number(o) for o in sorted(near[:2]))}")
            return hit
        return p.type(value)

    return check


def param_widget(p: Param, *, key: str, container: Any = None) -> Any:
    """One widget for one Param; ``key`` is also the URL query parameter's name."""
    box = container if container is not None else st
    kw = dict(key=key, help=help_of(p), box=box, default=p.default, name=label_of(p), shown=_shown)
    if p.choices is not None:
        choices = list(p.choices)
        return kept(box.selectbox, label_of(p), options=choices, codec=choice_codec(choices), **kw)
    if p.type is bool:
        return kept(box.toggle, label_of(p), codec=bool_codec(), **kw)
    if p.type is str:
        return kept(box.text_input, label_of(p), codec=text_codec(), **kw)
    if p.default is None:  # an optional number: an empty box means "not given"
        return kept(box.number_input, label_of(p), min_value=p.low, max_value=p.high,
                    codec=optional_number_codec(checker(p, key)), **kw)
    codec = number_codec(checker(p, key))
    lo, hi = p.widget_range()
    options = slider_options(p)
    if options is not None:
        return kept(box.select_slider, label_of(p), options=options, format_func=format_number, codec=codec, **kw)
    if p.type is int:
        lo_i, hi_i = (int(v) for v in inside_strict_bounds(p, math.ceil(lo), math.floor(hi), 1))
        if hi_i - lo_i <= 200:
            return kept(box.slider, label_of(p), min_value=lo_i, max_value=hi_i, step=1, codec=codec, **kw)
        return kept(box.number_input, label_of(p), min_value=lo_i if p.low is not None else None,
                    max_value=hi_i if p.high is not None else None, step=1, codec=codec, **kw)
    step = linear_step(lo, hi, float(p.default))
    lo, hi = inside_strict_bounds(p, lo, hi, step)
    places = max(decimals(step), 1)
    return kept(box.slider, label_of(p), min_value=float(lo), max_value=float(hi), step=step,
                format=f"%.{places}f", codec=codec, **kw)


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return format_number(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else repr(value)


def param_form(specs: Sequence[Param], *, key: str, container: Any = None) -> dict[str, Any]:
    """Widgets for a list of specs, returned as validated values ``{name: value}``."""
    values = {p.name: param_widget(p, key=f"{key}.{p.name}", container=container) for p in specs}
    return validate_params(specs, values)


def choice(label: str, options: Sequence[Any], *, key: str, default: Any = None, widget: str = "selectbox",
           format_func: Any = str, container: Any = None, **kwargs: Any) -> Any:
    """A selectbox / radio / segmented control kept in the URL by its option value (readable), not its label."""
    box = container if container is not None else st
    options = list(options)
    default = options[0] if default is None else default
    if key in st.session_state and st.session_state[key] not in options:  # no longer offered (a run deselected)
        st.session_state[key] = default
    return kept(getattr(box, widget), label, options=options, format_func=format_func, key=key, default=default,
                codec=choice_codec(options, format_func), box=box, **kwargs)


def choices(label: str, options: Sequence[Any], *, key: str, default: Sequence[Any], format_func: Any = str,
            container: Any = None, **kwargs: Any) -> list[Any]:
    """A multiselect kept in the URL by option values (``m=gd&m=nesterov`` or ``m=gd,nesterov``)."""
    box = container if container is not None else st
    options = list(options)
    return kept(box.multiselect, label, options=options, format_func=format_func, key=key, default=list(default),
                codec=multi_choice_codec(options, format_func), box=box, **kwargs)


def method_picker(methods: Mapping[str, Method], *, key: str, default: Sequence[str], label: str = "Methods",
                  container: Any = None) -> list[str]:
    """Several methods at once; the URL names them by key (``gd``), the widget by label."""
    return choices(label, list(methods), key=key, default=default, format_func=lambda n: methods[n].label,
                   container=container if container is not None else st.sidebar,
                   help="Pick one or more; each gets its own colour, dash and marker.")


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


def slider(label: str, min_value: float, max_value: float, value: float, step: float | None = None, *, key: str,
           container: Any = None, **kwargs: Any) -> Any:
    """``st.slider`` for a page's own control (a toy's ρ, a step to show), kept in session state and the URL.

    A kept value outside today's range (the data changed) goes back to ``value``.
    """
    box = container if container is not None else st
    whole = all(isinstance(v, int) for v in (min_value, max_value, value))

    def check(x: float) -> Any:
        if whole and not x.is_integer():
            raise LinkValueError("not a whole number")
        if not min_value <= x <= max_value:
            raise LinkValueError(f"outside {format_number(min_value)} … {format_number(max_value)}")
        return int(x) if whole else float(x)

    current = st.session_state.get(key)
    if isinstance(current, (int, float)) and not min_value <= current <= max_value:
        del st.session_state[key]
    if step is None and not whole:
        step = linear_step(float(min_value), float(max_value), float(value))
    if step is not None and not whole:
        kwargs.setdefault("format", f"%.{max(decimals(step), 1)}f")
    return kept(box.slider, label, min_value=min_value, max_value=max_value, step=step, key=key, default=value,
                codec=number_codec(check), box=box, **kwargs)


def number(label: str, min_value: int, max_value: int, value: int, *, key: str, container: Any = None,
           **kwargs: Any) -> int:
    """``st.number_input`` for a whole number of a page's own (a seed), kept in session state and the URL."""
    def check(x: float) -> int:
        if not x.is_integer():
            raise LinkValueError("not a whole number")
        if not min_value <= x <= max_value:
            raise LinkValueError(f"outside {min_value} … {max_value}")
        return int(x)

    box = container if container is not None else st
    return kept(box.number_input, label, min_value=min_value, max_value=max_value, step=1, key=key, default=value,
                codec=number_codec(check), box=box, **kwargs)


def checkbox(label: str, value: bool, *, key: str, container: Any = None, **kwargs: Any) -> bool:
    """``st.checkbox`` of a page's own, kept in session state and the URL (``true``/``false``)."""
    box = container if container is not None else st
    return kept(box.checkbox, label, key=key, default=value, codec=bool_codec(), box=box, **kwargs)

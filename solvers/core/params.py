"""Parameter specs: one declaration per parameter drives validation, widgets, CLI flags and docs.

    Param("s", 10, int, low=1, help="sparsity level", symbol="s")
    Param("lam", 1e-2, low=0, low_strict=True, log=True, symbol=r"\\lambda")

``validate_params`` turns user input into checked, typed values (raising
`InputError` with the bound it broke); ``add_cli_flags`` / ``params_from_cli``
build argparse flags; ``params_markdown`` renders a table for the docs; the
page's parameter form (app/ui/params.py) builds sliders from the same specs.
"""
from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .errors import InputError

# The papers' symbols (LaTeX in Param.symbol) as plain text for labels and messages; LaTeX stays in the page's help.
GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ",
    "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Sigma": "Σ", "Lambda": "Λ",
    "max": "max", "min": "min",
}
SUBSCRIPTS = str.maketrans("0123456789+-", "₀₁₂₃₄₅₆₇₈₉₊₋")


def plain_symbol(latex: str) -> str:
    """A paper symbol as plain Unicode text: r"\\gamma_0" → "γ₀", r"\\hat\\varepsilon" → "ε̂", r"d_{\\max}" → "d_max"."""
    text = re.sub(r"\\+hat\s*\\+(\w+)", lambda m: GREEK.get(m.group(1), m.group(1)) + "\u0302", latex)
    text = re.sub(r"\\+([A-Za-z]+)", lambda m: GREEK.get(m.group(1), m.group(1)), text)
    text = re.sub(r"_\{?([0-9+-]+)\}?", lambda m: m.group(1).translate(SUBSCRIPTS), text)
    return text.replace("{", "").replace("}", "").strip()


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    type: type = float
    low: float | None = None
    high: float | None = None
    low_strict: bool = False
    high_strict: bool = False
    log: bool = False
    choices: tuple | None = None
    help: str = ""
    symbol: str = ""
    ui_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.type not in (float, int, bool, str):
            raise TypeError(f"Param {self.name}: type must be float, int, bool or str")
        if self.log and (self.low is None or self.low < 0):
            raise TypeError(f"Param {self.name}: a log-scale parameter needs low >= 0")
        if self.default is not None:
            self.check(self.default)

    # ------------------------------------------------------------------
    @property
    def label(self) -> str:
        """"beta (β)": the name and the paper's symbol as plain text, for messages on the CLI and the page."""
        symbol = plain_symbol(self.symbol) if self.symbol else ""
        return f"{self.name} ({symbol})" if symbol and symbol != self.name else self.name

    def bounds_text(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(map(str, self.choices))
        lo = "" if self.low is None else f"{self.low} {'<' if self.low_strict else '≤'} "
        hi = "" if self.high is None else f" {'<' if self.high_strict else '≤'} {self.high}"
        return f"{lo}{self.name}{hi}" if (lo or hi) else "any value"

    def widget_range(self) -> tuple[float, float]:
        """The slider's range: ``ui_range`` if given, else the bounds, else around the default."""
        if self.ui_range is not None:
            return self.ui_range
        lo, hi = self.low, self.high
        d = float(self.default)
        if lo is None:
            lo = min(0.0, d - 10 * max(1.0, abs(d)))
        if hi is None:
            hi = d * 1000 if self.log else d + 10 * max(1.0, abs(d))
        if self.log and lo <= 0:
            lo = (d if d > 0 else 1.0) / 1000
        return float(lo), float(hi)

    def coerce(self, value: Any) -> Any:
        """Convert text or numbers to the declared type, or raise InputError."""
        try:
            if self.type is bool:
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low in ("1", "true", "yes", "on"):
                        return True
                    if low in ("0", "false", "no", "off"):
                        return False
                    raise ValueError
                return bool(value)
            if self.type is int:
                f = float(value)
                if not f.is_integer():
                    raise ValueError
                return int(f)
            if self.type is float:
                return float(value)
            return str(value)
        except (TypeError, ValueError):
            raise InputError(f"{self.label} must be a {self.type.__name__}, got {value!r}") from None

    def check(self, value: Any) -> Any:
        if value is None and self.default is None:
            return None  # an optional parameter left unset (e.g. SMM's reference optimum obj_opt)
        value = self.coerce(value)
        if self.choices is not None:
            if value not in self.choices:
                raise InputError(f"{self.label} = {value!r} is not allowed; choose {self.bounds_text()}")
            return value
        if self.type in (int, float):
            if isinstance(value, float) and not math.isfinite(value):
                raise InputError(f"{self.label} must be finite, got {value}")
            bad_low = self.low is not None and (value <= self.low if self.low_strict else value < self.low)
            bad_high = self.high is not None and (value >= self.high if self.high_strict else value > self.high)
            if bad_low or bad_high:
                raise InputError(f"{self.label} = {value} is out of range; it needs {self.bounds_text()}")
        return value


def validate_params(specs: Sequence[Param], values: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults filled in, every value coerced and bounds-checked; unknown names refused."""
    values = dict(values or {})
    by_name = {p.name: p for p in specs}
    unknown = sorted(set(values) - set(by_name))
    if unknown:
        raise InputError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(by_name) or 'none'}")
    return {p.name: p.check(values[p.name]) if p.name in values else p.default for p in specs}


def merge_specs(*groups: Iterable[Param]) -> list[Param]:
    """Concatenate spec lists, refusing a name declared twice with different specs."""
    merged: dict[str, Param] = {}
    for group in groups:
        for p in group:
            if p.name in merged and merged[p.name] != p:
                raise TypeError(f"parameter {p.name} declared twice with different specs")
            merged[p.name] = p
    return list(merged.values())


# -- command line -----------------------------------------------------------
def add_cli_flags(parser: argparse.ArgumentParser, specs: Sequence[Param], prefix: str = "") -> None:
    """One ``--[prefix-]name`` flag per spec; ``prefix`` keeps apart two groups that declare the same name."""
    for p in specs:
        dest = f"{prefix}_{p.name}" if prefix else p.name
        flag = "--" + dest.replace("_", "-")
        text = f"{p.help} [{p.bounds_text()}; default {p.default}]".strip()
        parser.add_argument(flag, dest=dest, default=None, metavar=p.type.__name__.upper(), help=text)


def cli_values(namespace: argparse.Namespace, specs: Sequence[Param], prefix: str = "") -> dict[str, Any]:
    """The raw values of the flags that ``add_cli_flags(..., prefix)`` declared and the user gave."""
    dest = (lambda name: f"{prefix}_{name}") if prefix else (lambda name: name)
    return {p.name: getattr(namespace, dest(p.name)) for p in specs
            if getattr(namespace, dest(p.name), None) is not None}


def params_from_cli(namespace: argparse.Namespace, specs: Sequence[Param], prefix: str = "") -> dict[str, Any]:
    return validate_params(specs, cli_values(namespace, specs, prefix))


# -- documentation ----------------------------------------------------------
def params_markdown(specs: Sequence[Param]) -> str:
    lines = ["| parameter | paper symbol | default | allowed | meaning |", "|---|---|---|---|---|"]
    for p in specs:
        symbol = f"${p.symbol}$" if p.symbol else ""
        scale = " (log scale)" if p.log else ""
        lines.append(f"| `{p.name}` | {symbol} | {p.default} | {p.bounds_text()}{scale} | {p.help} |")
    return "\n".join(lines)

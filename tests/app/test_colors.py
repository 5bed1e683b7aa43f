"""Colour-blind-safe method looks: every pair of methods of a family differs in dash and
marker, and the pairs the issue found confusable differ in colour under simulated deuteranopia and protanopia."""
from __future__ import annotations

import importlib
import itertools

import numpy as np
import pytest

import solvers
from app.ui.colors import METHOD_STYLES, PALETTE, method_style

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB
SIMULATION = {
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
}
CONFUSED_IN_ISSUE = [("apg", "apg+"), ("knpsvc", "dnpsvc"), ("dgb", "rrpb"), ("pg-ll", "grasp"), ("pgb", "rrpb")]


def linear_rgb(hex_color: str) -> np.ndarray:
    c = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(rgb_linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear sRGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb_linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen_difference(a: str, b: str, vision: str) -> float:
    """ΔE*ab between two colours as seen with the given colour-vision deficiency."""
    m = SIMULATION[vision]
    sa, sb = (np.clip(m @ linear_rgb(c), 0, 1) for c in (a, b))
    return float(np.linalg.norm(lab(sa) - lab(sb)))


def family_methods(family: str) -> list[str]:
    return [m for m in importlib.import_module(f"solvers.{family}").METHODS if m in METHOD_STYLES]


@pytest.mark.parametrize("family", [*solvers.FAMILIES, "foundations"])
def test_methods_of_a_family_differ_in_dash_and_marker(family):
    methods = family_methods(family)
    for a, b in itertools.combinations(methods, 2):
        sa, sb = method_style(a), method_style(b)
        assert sa.dash != sb.dash or sa.marker != sb.marker, (a, b)
        assert sa != sb, (a, b)


@pytest.mark.parametrize("vision", sorted(SIMULATION))
@pytest.mark.parametrize("a, b", CONFUSED_IN_ISSUE)
def test_the_issues_confusable_pairs_are_apart_in_colour_blind_vision(a, b, vision):
    # 20 ΔE: clearly different at a glance (a just-noticeable difference is about 2.3)
    assert seen_difference(method_style(a).color, method_style(b).color, vision) > 20


def test_every_method_colour_is_from_the_palette_and_unknown_names_are_stable():
    assert {s.color for s in METHOD_STYLES.values()} <= set(PALETTE)
    assert method_style("some new method") == method_style("Some_New method")

"""Named one-click scenarios: a preset writes a few widget values into session state and reruns.

    PRESETS = [Preset("hb-overshoot", "Ill-conditioned quadratic: heavy ball overshoots",
                      {"fd.problem.kappa": 1000.0, "fd.beta": 0.9}, "Heavy ball swings past x* ...")]
    ui.preset_buttons(PRESETS, key="fd")    # at the top of main, before the widgets it sets

A preset names what it shows and sets every widget its claim depends on (the others keep their values).
Home's lesson order links to a page with ``?preset=<slug>``; the page applies that preset once on
arrival and removes the parameter, so the URL then holds the preset's widget values like any other state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import streamlit as st

from .page_state import adopt_url

URL_PARAM = "preset"


@dataclass(frozen=True)
class Preset:
    slug: str  # URL value (?preset=slug) and button key
    title: str  # the button: what the scenario shows
    values: Mapping[str, Any] = field(default_factory=dict)  # widget key → value (a widget's own value type)
    claim: str = ""  # what to look at once it is applied


def apply_preset(preset: Preset) -> None:
    """Write the preset's values into session state (call before the widgets are drawn, or in a callback)."""
    for widget_key, value in preset.values.items():
        st.session_state[widget_key] = list(value) if isinstance(value, tuple) else value


def _is_active(preset: Preset) -> bool:
    """The page still shows the preset: every value it set is unchanged."""
    state = st.session_state
    return all(k in state and state[k] == (list(v) if isinstance(v, tuple) else v) for k, v in preset.values.items())


def preset_buttons(presets: Sequence[Preset], *, key: str, container: Any = None) -> Preset | None:
    """A row of preset buttons; returns the preset the page currently shows (its claim is displayed), or None.

    Must run before the widgets the presets set. A press applies the preset in the button's callback
    (before the rerun draws the widgets); ``?preset=<slug>`` in the URL applies it once on arrival.
    """
    box = container if container is not None else st
    by_slug = {p.slug: p for p in presets}
    linked = st.query_params.get(URL_PARAM)
    if linked is not None:
        del st.query_params[URL_PARAM]
        if linked in by_slug:
            apply_preset(by_slug[linked])
            # a lesson link after an earlier visit (Home → preset A → Home → preset B) is not a history step:
            # without this the page's values of preset A's URL were dropped, preset B's with them
            adopt_url(key)
            st.session_state[f"{key}.preset"] = linked
        else:
            box.warning(f"The link asks for the preset {linked!r}, which this page does not have; "
                        f"its presets are: {', '.join(by_slug)}.")
    # one row, the label beside the buttons, so that the chart stays high on the page; each button's hover says
    # what the scenario shows
    label, *cols = box.columns([1.8] + [3] * len(presets), vertical_alignment="center")
    label.markdown("**Presets**")
    for col, preset in zip(cols, presets):
        col.button(preset.title, key=f"{key}.preset.{preset.slug}", on_click=_press, args=(preset, key),
                   help=preset.claim, width="stretch")
    current = by_slug.get(st.session_state.get(f"{key}.preset"))
    if current is not None and _is_active(current):
        box.info(f"**{current.title}.** {current.claim}")
        return current
    return None


def _press(preset: Preset, key: str) -> None:
    apply_preset(preset)
    st.session_state[f"{key}.preset"] = preset.slug

"""AppTest helpers every page test reuses.

    from tests.app_harness import open_page, assert_clean, click_run, random_walk, upload

    at = open_page("foundations")              # app/views/foundations.py, first run done
    assert_clean(at)                            # no exception element, no st.error
    at.multiselect(key="fd.methods").set_value(["gd"]).run()
    random_walk("foundations", seed=1, steps=10)   # random valid values on every widget; never an exception
    fuzz("sparse", seed=0, interactions=50)        # timed random interactions (widgets, Run, other buttons)
    upload(at, "fd.data", "bad.csv", b"a,b\n1,2\n")  # the picker's Upload source, then st.error expected
"""
from __future__ import annotations

import base64
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app"
DEFAULT_TIMEOUT = 120


def open_page(name: str, *, timeout: float = DEFAULT_TIMEOUT, query: dict[str, str] | None = None,
              run: bool = True) -> AppTest:
    """AppTest for app/views/<name>.py (or app/main.py for "main"), run once unless ``run=False``."""
    path = APP / "main.py" if name == "main" else APP / "views" / f"{name}.py"
    at = AppTest.from_file(str(path), default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run() if run else at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest, *, allow_errors: bool = False) -> None:
    """No uncaught exception on the page (and no st.error unless allowed)."""
    assert not at.exception, [e.value for e in at.exception]
    if not allow_errors:
        assert not at.error, errors(at)


def click_run(at: AppTest) -> AppTest:
    buttons = [b for b in at.sidebar.button if b.label == "Run"]
    assert buttons, "the page has no sidebar button labelled 'Run'"
    return buttons[0].click().run()


def upload(at: AppTest, data_key: str, filename: str, content: bytes, mime: str = "text/csv") -> AppTest:
    """Switch the dataset picker keyed ``data_key`` to Upload and upload one file; never an exception."""
    at.radio(key=f"{data_key}.source").set_value("upload").run()
    at.file_uploader(key=f"{data_key}.upload").upload(filename, content, mime).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plotly_figures(at: AppTest) -> list[dict]:
    """The Plotly figures on the page, as JSON dicts (AppTest shows them as unknown elements)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def trace_names(at: AppTest) -> set[str]:
    return {t.get("name") for fig in plotly_figures(at) for t in fig.get("data", [])}


def _parse_label(label: str) -> Any:
    for cast in (int, float):
        try:
            return cast(label)
        except ValueError:
            pass
    return label


def _raw_options(widget: Any) -> list:
    """The values behind a widget's shown options. AppTest lists the labels that ``format_func`` made, but
    ``set_value`` wants the values: recover them from the dict (or list) the format function reads."""
    labels = list(widget.options)
    fmt = getattr(widget, "format_func", None)
    if fmt is None:
        return labels
    candidates: list = []
    cells = [c.cell_contents for c in (getattr(fmt, "__closure__", None) or ())]
    for source in [getattr(fmt, "__self__", None), *cells]:
        if isinstance(source, (dict, list, tuple)):
            candidates.extend(source)
    raw: dict[str, Any] = {}
    for value in candidates:
        try:
            raw.setdefault(str(fmt(value)), value)
        except Exception:  # noqa: BLE001 (a candidate the format function does not take)
            continue
    return [raw.get(label, label) for label in labels]


def _random_value(widget: Any, rng: random.Random) -> tuple[bool, Any]:
    kind = type(widget).__name__
    proto = widget.proto
    if kind == "Slider":
        lo, hi = proto.min, proto.max
        if proto.data_type in (0, 1):  # INT
            return True, rng.randint(int(lo), int(hi))
        return True, rng.choice([lo, hi, lo + (hi - lo) * rng.random()])
    if kind == "SelectSlider":  # AppTest lists the formatted labels; ours are numbers written out
        return True, _parse_label(rng.choice(widget.options))
    if kind in ("Selectbox", "Radio"):
        opts = _raw_options(widget)
        return True, rng.choice(opts) if opts else None
    if kind == "Multiselect":
        opts = _raw_options(widget)
        most = min(len(opts), proto.max_selections or len(opts))  # the browser stops a user at max_selections
        return True, rng.sample(opts, rng.randint(1, most)) if opts else []
    if kind in ("Checkbox", "Toggle"):
        return True, rng.random() < 0.5
    if kind == "NumberInput":
        lo = proto.min if proto.has_min else 0
        hi = proto.max if proto.has_max else lo + 100
        return True, type(widget.value)(rng.choice([lo, hi, lo + (hi - lo) * rng.random()]))
    return False, None


WALK_KINDS = ("slider", "select_slider", "selectbox", "radio", "multiselect", "checkbox", "toggle", "number_input")


def walkable_widgets(at: AppTest, skip_keys) -> list:
    """The enabled, keyed widgets a random walk may change, less those whose key starts with one of skip_keys."""
    return [w for kind in WALK_KINDS for w in getattr(at, kind)
            if getattr(w, "key", None) and not any(str(w.key).startswith(s) for s in skip_keys)
            and not getattr(w.proto, "disabled", False)]


def random_walk(name: str, *, seed: int, steps: int = 8, skip_keys: tuple[str, ...] = (),
                timeout: float = DEFAULT_TIMEOUT) -> AppTest:
    """Set random valid values on random widgets of the page, ``steps`` times, pressing Run each time.

    The page may show st.error for an impossible combination, but never an exception.
    ``skip_keys`` leaves widgets alone (e.g. ones that switch to an expensive dataset).
    """
    rng = random.Random(seed)
    at = open_page(name, timeout=timeout)
    assert_clean(at, allow_errors=True)
    for _ in range(steps):
        widgets = walkable_widgets(at, skip_keys)
        if not widgets:
            break
        widget = rng.choice(widgets)
        ok, value = _random_value(widget, rng)
        if not ok:
            continue
        widget.set_value(value)
        at.run()
        assert not at.exception, f"after setting {widget.key} = {value!r}: {[e.value for e in at.exception]}"
        runs = [b for b in at.sidebar.button if b.label == "Run"]
        if runs:
            runs[0].click().run()
            assert not at.exception, f"after Run with {widget.key} = {value!r}: {[e.value for e in at.exception]}"
    return at


@dataclass
class Interaction:
    page: str
    action: str  # "set <key> = <value>", "click <label>" or "open"
    seconds: float  # wall time of the script run it caused


def _timed_run(at: AppTest, page: str, action: str, log: list[Interaction]) -> None:
    start = time.perf_counter()
    try:
        at.run()
    except RuntimeError as exc:  # AppTest's timeout: name the interaction and the ones before it
        raise AssertionError(f"{page}: {action}: {exc}; before it: {[i.action for i in log[-6:]]}") from exc
    log.append(Interaction(page, action, time.perf_counter() - start))
    assert not at.exception, f"{page}: after {action}: {[e.value for e in at.exception]}"


def fuzz(name: str, *, seed: int, interactions: int, query: dict[str, str] | None = None,
         skip_keys: tuple[str, ...] = (), click_share: float = 0.25, timeout: float = DEFAULT_TIMEOUT
         ) -> list[Interaction]:
    """``interactions`` seeded random interactions with one page, each timed; never an exception.

    An interaction sets a random valid value on a random widget, or (with probability ``click_share``)
    clicks a random enabled button: Run, Stop, a sweep or path button. The page is reopened when a
    run hits the AppTest timeout (reported as an interaction of that length, so the caller sees it).
    """
    rng = random.Random(seed)
    log: list[Interaction] = []
    at = open_page(name, timeout=timeout, query=query, run=False)
    _timed_run(at, name, "open", log)
    while len(log) < interactions:
        if rng.random() < click_share:
            buttons = [b for b in at.button if not getattr(b.proto, "disabled", False)]
            if buttons:
                button = rng.choice(buttons)
                button.click()
                _timed_run(at, name, f"click {button.label}", log)
                continue
        widgets = walkable_widgets(at, skip_keys)
        if not widgets:
            break
        widget = rng.choice(widgets)
        ok, value = _random_value(widget, rng)
        if ok:
            widget.set_value(value)
            _timed_run(at, name, f"set {widget.key} = {value!r}", log)
    return log


def as_array(values) -> np.ndarray:
    """A trace's values: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array(values, float)

"""AppTest helpers every page test reuses.

    from tests.app_harness import open_page, assert_clean, click_run, pick, random_walk, upload

    at = open_page("foundations")              # app/views/foundations.py, first run done
    assert_clean(at)                            # no exception element, no st.error
    at.multiselect(key="fd.methods").set_value(["gd"]).run()
    random_walk("foundations", seed=1, steps=10)   # random valid values on every widget; never an exception
    fuzz("sparse", seed=0, interactions=50)        # timed, checked random interactions (widgets, Run, buttons)
    pick(at.multiselect(key="ml.rules"), ["sphere + linear"])  # options by their shown labels
    upload(at, "fd.data", "bad.csv", b"a,b\n1,2\n")  # the picker's Upload source, then st.error expected
"""
from __future__ import annotations

import base64
import json
import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from app.ui.page_state import EVERY_TAB

APP = Path(__file__).resolve().parents[1] / "app"
DEFAULT_TIMEOUT = 120


def open_page(name: str, *, timeout: float = DEFAULT_TIMEOUT, query: dict[str, str] | None = None,
              run: bool = True, every_tab: bool = True) -> AppTest:
    """AppTest for app/views/<name>.py (or app/main.py for "main"), run once unless ``run=False``.

    ``every_tab``: the page draws all its tabs on every run (``tabs_to_draw``), so that a test reads every
    view's widgets and figures without opening each tab; False draws the open tab only, as a browser does."""
    path = APP / "main.py" if name == "main" else APP / "views" / f"{name}.py"
    at = AppTest.from_file(str(path), default_timeout=timeout)
    if every_tab:
        at.session_state[EVERY_TAB] = True
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


@dataclass(frozen=True)
class Shown:
    """Options picked by the labels the page shows, as a browser sends them (see ``pick``)."""

    labels: tuple[str, ...]


def _state_of_shown(widget: Any) -> WidgetState:
    picked = widget._value
    if not isinstance(picked, Shown):  # an unsubmitted form masks the pick: the widget's own state
        return type(widget).__mro__[1]._widget_state.fget(widget)
    state = WidgetState()
    state.id = widget.id
    if type(widget).__mro__[1].__name__ in ("Multiselect", "SelectSlider"):
        state.string_array_value.data[:] = picked.labels
    else:
        state.string_value = picked.labels[0]
    return state


_SHOWN_TYPES: dict[type, type] = {}


def pick(widget: Any, labels: list[str] | str) -> Any:
    """Choose a selectbox, radio, select slider or multiselect option by its shown label(s).

    A browser sends the labels the user clicked and the server maps them back to the option values. AppTest's
    ``set_value`` takes option values instead and formats them with the page's ``format_func``; given a label it
    only falls back to the label when the format function raises, so a ``dict.get`` format function turns the label
    into None, which protobuf rejects ("bad argument type for built-in operation"). ``pick`` sends the labels.
    """
    labels = (labels,) if isinstance(labels, str) else tuple(labels)
    unknown = [label for label in labels if label not in widget.options]
    if unknown:
        raise ValueError(f"{widget.key}: {unknown} are not among the shown options {widget.options}")
    base = type(widget)
    if base not in _SHOWN_TYPES.values():  # the same widget class, sending what ``_state_of_shown`` makes
        if base not in _SHOWN_TYPES:
            _SHOWN_TYPES[base] = type(f"Shown{base.__name__}", (base,), {"_widget_state": property(_state_of_shown)})
        widget.__class__ = _SHOWN_TYPES[base]
    widget.set_value(Shown(labels))
    return widget


#: what a user may type into a text box (a class name, a pasted link, a key): empty, numbers, words, junk
TEXTS = ("", " ", "0", "1", "-1", "1e309", "nan", "abc", "ünïcode ✓", "?a=1&b=", "http://", "x" * 300)


def _random_change(widget: Any, rng: random.Random) -> Any | None:
    """Set a random valid value on ``widget`` as a user could; returns what was chosen, or None if nothing."""
    kind = type(widget).__name__
    proto = widget.proto
    if kind == "Slider":
        lo, hi = proto.min, proto.max
        if proto.data_type in (0, 1):  # INT
            value = rng.randint(int(lo), int(hi))
        else:
            value = rng.choice([lo, hi, lo + (hi - lo) * rng.random()])
    elif kind in ("SelectSlider", "Selectbox", "Radio"):
        if not widget.options:
            return None
        label = rng.choice(widget.options)
        pick(widget, label)
        return label
    elif kind == "Multiselect":
        if not widget.options:
            return None
        most = min(len(widget.options), proto.max_selections or len(widget.options))  # the browser stops there
        labels = rng.sample(widget.options, rng.randint(1, most))
        pick(widget, labels)
        return labels
    elif kind in ("Checkbox", "Toggle"):
        value = rng.random() < 0.5
    elif kind == "TextInput":
        value = rng.choice(TEXTS)
    elif kind == "NumberInput":
        lo = proto.min if proto.has_min else 0
        hi = proto.max if proto.has_max else lo + 100
        number = rng.choice([lo, hi, lo + (hi - lo) * rng.random()])
        value = int(number) if proto.data_type == proto.INT else float(number)
        if not proto.HasField("default") and rng.random() < 0.25:  # a box that may be empty: a user clears it
            value = None
    else:
        return None
    widget.set_value(value)
    return value


WALK_KINDS = ("slider", "select_slider", "selectbox", "radio", "multiselect", "checkbox", "toggle", "number_input",
              "text_input")


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
        value = _random_change(widget, rng)
        if value is None:
            continue
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
    cpu_seconds: float  # this process's CPU time over that run (the script runs in a thread of this process)
    asked_for_run: bool  # a button press made while the page showed a cost estimate that waited for it
    problems: list[str]  # exception elements, "failed" messages on the page, errors the app logged

    @property
    def work_seconds(self) -> float:
        """How long the interaction took, by a measure neither a loaded machine nor extra BLAS threads inflate:
        the smaller of wall and CPU seconds (wall grows with the neighbours' load, CPU with parallel threads)."""
        return min(self.seconds, self.cpu_seconds)


class _AppErrors(logging.Handler):
    """Collects the records the lab's own modules log at ERROR (e.g. app.ui.runs: "run APG failed")."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        detail = f" ({record.exc_info[0].__name__}: {record.exc_info[1]})" if record.exc_info else ""
        self.records.append(f"{record.name}: {record.getMessage()}{detail}")


#: words of the messages a page shows when something broke rather than when it refused bad settings
FAILURE_WORDS = ("failed", "went wrong", "could not finish")


def estimate_waiting_for_run(at: AppTest) -> bool:
    """The page shows a cost estimate that waits for a button: the Run controls' heavy estimate ("… Stop
    interrupts it.") or an optional extra's estimate beside its own button ("Estimated: …")."""
    captions = [c.value for c in at.caption if c.value.startswith("Estimated")]
    return any(c.startswith("Estimated:") or "Stop interrupts it" in c for c in captions)


def _timed_run(at: AppTest, page: str, action: str, log: list[Interaction], *, asked_for_run: bool = False) -> None:
    handler = _AppErrors()
    app_log = logging.getLogger("app")
    app_log.addHandler(handler)
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        at.run()
    except RuntimeError as exc:  # AppTest's timeout: name the interaction and the ones before it
        raise AssertionError(f"{page}: {action}: {exc}; before it: {[i.action for i in log[-6:]]}") from exc
    finally:
        app_log.removeHandler(handler)
    problems = [f"exception: {e.value}" for e in at.exception]
    problems += [f"st.error: {e.value}" for e in at.error if any(w in e.value for w in FAILURE_WORDS)]
    problems += [f"log: {r}" for r in handler.records]
    log.append(Interaction(page, action, time.perf_counter() - wall, time.process_time() - cpu, asked_for_run,
                           problems))


def fuzz(name: str, *, seed: int, interactions: int, query: dict[str, str] | None = None,
         skip_keys: tuple[str, ...] = (), click_share: float = 0.25, timeout: float = DEFAULT_TIMEOUT
         ) -> list[Interaction]:
    """``interactions`` seeded random interactions with one page, each timed and checked.

    An interaction sets a random valid value on a random widget (option widgets by their shown labels, as a
    browser sends them), or (with probability ``click_share``) clicks a random enabled button: Run, Stop, a
    sweep or path button. Each records its wall and CPU seconds, whether it was a press the page's cost estimate
    had asked for, and its problems (exception elements, "failed" messages, errors logged by the app); the
    caller asserts on them. A run past the AppTest ``timeout`` is a hang, and raises at once.
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
                asked = estimate_waiting_for_run(at)
                button.click()
                _timed_run(at, name, f"click {button.label}", log, asked_for_run=asked)
                continue
        widgets = walkable_widgets(at, skip_keys)
        if not widgets:
            break
        widget = rng.choice(widgets)
        value = _random_change(widget, rng)
        if value is not None:
            _timed_run(at, name, f"set {widget.key} = {value!r}", log)
    return log


def as_array(values) -> np.ndarray:
    """A trace's values: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array(values, float)

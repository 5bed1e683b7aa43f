"""Widget walk of every page: 1,000 seeded random interactions with the family pages through AppTest (500 per
seed, two seeds), and the home page opened.

Each interaction (a random valid value on a random widget, option widgets picked by their shown labels as a
browser sends them, or a click on a random button: Run, sweeps, paths, Stop) must leave
- no exception element;
- no failure: no st.error that says "failed" or "went wrong", nothing the lab's modules log at ERROR
  (app.ui.runs logs "run APG failed" when a solver raises);
- no run over the run limit that no cost estimate asked for: an interaction that took longer than
  OPTLAB_RUN_LIMIT_S must be a button press made while the page showed an estimate that waited for it.
The duration compared is the smaller of wall and CPU seconds (``Interaction.work_seconds``), so neither a loaded
machine nor extra BLAS threads make a fast interaction look slow (runs stay in this process, without the server's
worker pool, so their CPU seconds count); an interaction that runs past the AppTest timeout is a hang and fails
at once.
Pages refuse runs whose estimated time is above OPTLAB_RUN_LIMIT_S and memory above SOLVERS_MEMORY_BUDGET
(15 s and 256 MiB here, as a small shared server would set them). Every interaction's wall and CPU seconds are
printed per page (``pytest -s``) with the slowest ones, so the walk's cost shows in the CI log.
"""
from __future__ import annotations

import random

import pytest
from streamlit.testing.v1 import AppTest

from app.ui.cost import run_limit_seconds
from tests.app_harness import (APP, _random_change, assert_clean, click_run, fuzz, open_page, pick,
                               plotly_figures, walkable_widgets)

RUN_LIMIT_SECONDS = 15.0
HANG_SECONDS = 180.0  # an interaction that has not finished by then is a hang, and fails
SEEDS = (0, 1)  # added to each page's own seed: seed 0 is the walk this file has always run
#: interactions per page and seed: 500 a seed with the family pages (the home page has no widget to walk)
PLAN = {"main": 10, "foundations": 70, "sparse": 100, "multitask": 80, "smm": 80, "metric": 90, "npsvc": 80}
#: multitask-subspace sizes are generated as soon as a field changes; the generator refuses what exceeds the
#: memory budget, but a random size within it can still take minutes to draw, so the walk leaves those fields alone
UNCHECKED_GENERATOR_FIELDS = ("mt.data.gen.multitask-subspace.",)
#: the sweep executor's panel starts a local Dask cluster (scheduler and worker processes) for each worker count
#: and keeps it for the server's lifetime: the walk would pile up processes whose CPU it cannot count
DASK_PANEL = ("sweep.",)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("page", list(PLAN))
def test_random_interactions_are_clean(page, seed, monkeypatch, record_property):
    monkeypatch.setenv("OPTLAB_RUN_LIMIT_S", str(RUN_LIMIT_SECONDS))
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(256 * 2**20))  # generators refuse big requests from their sizes
    monkeypatch.delenv("OPTLAB_WORKERS", raising=False)  # runs in this process, where their CPU seconds are counted
    log = fuzz(page, seed=seed + sum(map(ord, page)), interactions=PLAN[page], timeout=HANG_SECONDS,
               skip_keys=UNCHECKED_GENERATOR_FIELDS + DASK_PANEL)
    slowest = sorted(((round(i.seconds, 1), round(i.cpu_seconds, 1), i.action) for i in log), reverse=True)[:5]
    record_property("interactions", len(log))
    record_property("slowest", slowest)
    print(f"{page}, seed {seed}: {len(log)} interactions, {sum(i.seconds for i in log):.0f} wall s and "
          f"{sum(i.cpu_seconds for i in log):.0f} CPU s in all; slowest (wall, CPU, action) {slowest}")
    if page != "main":  # the home page has only a couple of widgets; every family page has dozens
        assert len(log) == PLAN[page]
    problems = [(n, i.action, p) for n, i in enumerate(log) for p in i.problems]
    assert not problems, f"{page}, seed {seed}: {len(problems)} problems (interaction, action, problem): {problems[:5]}"
    limit = run_limit_seconds()
    unasked = [(n, round(i.work_seconds, 1), i.action) for n, i in enumerate(log)
               if i.work_seconds > limit and not i.asked_for_run]
    assert not unasked, (f"{page}, seed {seed}: over the {limit:.0f} s run limit without an estimate that asked for "
                         f"the press (interaction, seconds, action): {unasked}")


def test_the_plan_covers_every_page_and_1000_interactions():
    views = {p.stem for p in (APP / "views").glob("*.py") if not p.stem.startswith("_")}
    assert set(PLAN) - {"main"} == views - {"home"}  # home is what "main" opens
    assert len(SEEDS) * sum(n for page, n in PLAN.items() if page != "main") >= 1000


#: option widgets whose format functions the walk cannot invert: a dict's ``get`` reached through a module-level
#: function (the Metric page's Rules pass ``RULE_LABELS.get``, which returns None for a label instead of raising),
#: and a select slider whose labels carry a unit
RULE_LABELS = {"sphere": "sphere", "linear": "sphere + linear", "sdp": "sphere + semidefinite"}
FORMATTED_OPTIONS_PAGE = f'''
import streamlit as st

RULES = {RULE_LABELS!r}


def rule_label(rule):
    return RULES.get(rule)


def seconds(value):
    return f"{{value:g}} s"


rules = st.multiselect("Rules", list(RULES), default=["sphere"], key="rules", format_func=rule_label)
first = st.selectbox("First rule", list(RULES), key="first", format_func=rule_label)
shown = st.radio("Shown rule", list(RULES), key="shown", format_func=rule_label)
limit = st.select_slider("Time limit", [0.5, 1.0, 2.0, 5.0], value=1.0, key="limit", format_func=seconds)
st.session_state["received"] = {{"rules": rules, "first": first, "shown": shown, "limit": limit}}
'''


def test_the_walk_drives_formatted_options_by_their_labels():
    """A browser sends the labels a user picked; the walk does the same, so the page receives the option values
    behind them. (Setting values through AppTest's set_value failed here with "bad argument type for built-in
    operation" on the Metric page's Rules.)"""
    at = AppTest.from_string(FORMATTED_OPTIONS_PAGE).run()
    rng = random.Random(0)
    changed = set()
    for _ in range(40):
        widget = rng.choice(walkable_widgets(at, ()))
        chosen = _random_change(widget, rng)
        key = widget.key
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        received = at.session_state["received"][key]
        if key == "rules":
            assert [RULE_LABELS[r] for r in received] == chosen
        elif key == "limit":
            assert f"{received:g} s" == chosen
        else:
            assert RULE_LABELS[received] == chosen
        changed.add(key)
    assert changed == {"rules", "first", "shown", "limit"}


def test_metric_rules_picked_by_their_labels():
    """The state a seeded walk reached (AppTest raised TypeError there): "sphere + linear" picked in Metric's Rules."""
    at = open_page("metric")
    pick(at.multiselect(key="ml.rules"), ["sphere", "sphere + linear"]).run()
    assert_clean(at)
    assert at.multiselect(key="ml.rules").value == ["sphere", "linear"]


def test_a_failed_run_says_what_to_change_not_the_exception_name():
    def page():
        from app.ui.runs import Job, LiveSpec, run_live

        def crash(callback):
            raise IndexError("index 60 is out of bounds for axis 0 with size 60")

        run_live([Job("APG", "fuzz-crash", crash)], LiveSpec(y="gap", y_title="gap"), key="fuzz", execute=True)

    at = AppTest.from_function(page).run()
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert message.startswith("APG failed on these settings. Change them"), message  # what to change comes first
    assert "failed: IndexError" not in message  # not the exception's name where the advice belongs


def test_npsvc_features_of_a_diverged_deep_run_say_what_to_change():
    """A state the walk reached: D-NPSVC++ at learning rate 1 and margin 14 diverges to NaN within two iterations,
    and PCA of its NaN features raised (the page showed "Something went wrong: ValueError")."""
    at = open_page("npsvc")
    pick(at.multiselect(key="np.methods"), ["D-NPSVC++"]).run()
    at.select_slider(key="np.m.dnpsvc.lr").set_value(1.0)
    at.slider(key="np.m.dnpsvc.margin").set_value(14.0).run()
    click_run(at)
    assert_clean(at)
    assert at.dataframe[0].value.set_index("method").loc["D-NPSVC++", "status"] == "diverged"
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert any("not finite" in t and "lower the learning rate" in t for t in titles), titles


def test_a_sweep_whose_cells_refuse_their_settings_says_why_not_failed(monkeypatch):
    """A state the walk reached: Sparse's tolerance sweep with APG's α_min above α_max, where every APG cell raised
    InputError and the page said "6 of 18 cells failed; first: InputError: …" (a bare exception name)."""
    monkeypatch.delenv("OPTLAB_SCHEDULER", raising=False)

    def page():
        from app.ui.sweep import run_grid
        from solvers.core import InputError
        from solvers.sweep import expand

        def refuses_above_two(config, data=None):
            if config["x"] > 2:
                raise InputError(f"x = {config['x']} exceeds 2; choose x ≤ 2")
            return {"value": float(config["x"])}

        run_grid(refuses_above_two, expand({"x": [1, 2, 3]}), key="t.grid", cache_key="t.refused")

    at = AppTest.from_function(page, default_timeout=60).run()
    at.button(key="t.grid_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == ["1 of 3 cells refused these settings: x = 3 exceeds 2; choose x ≤ 2"]

"""Page state: readable URL values, tolerant parsing of hand-edited links, sliders that return to
their default, plain-text labels, the open tab and loaded configurations surviving reruns.

Unit tests of the parser and the slider grids, then AppTest runs of the Foundations page (the cheapest page).
"""
from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

import solvers
from app.ui.page_state import (
    LinkValueError, PartialValue, match_choice, multi_choice_codec, parse_number, read_configuration,
    readable_number, slug,
)
from app.ui.params import admissible, inside_strict_bounds, label_of, linear_step, slider_options
from solvers import datasets
from solvers import foundations as fd
from solvers.core import InputError, Param, plain_symbol, validate_params
from tests.app_harness import assert_clean, errors, open_page, plotly_figures


def every_param() -> list[Param]:
    """Every Param a page can draw: problem, method, path and generator parameters of every family."""
    found = []
    for fam in (*solvers.FAMILIES, "foundations"):
        module = importlib.import_module(f"solvers.{fam}")
        for name in dir(module):
            value = getattr(module, name)
            if name.endswith("PARAMS") and isinstance(value, (list, tuple)):
                found += [p for p in value if isinstance(p, Param)]
        found += [p for m in module.METHODS.values() for p in m.params]
    found += [p for g in datasets.generators().values() for p in g.params]
    return list({(p.name, repr(p)): p for p in found}.values())


PARAMS = every_param()
NUMBERS = [p for p in PARAMS if p.type in (int, float) and p.choices is None and p.default is not None]


@pytest.mark.parametrize("value, text", [(2000, "2000"), (2000.0, "2000"), (0.001, "0.001"), (1e-8, "1e-8"),
                                         (0.5346, "0.5346"), (5e-5, "5e-5"), (1e20, "1e20"), (-3.5, "-3.5")])
def test_numbers_are_written_as_they_are(value, text):
    assert readable_number(value) == text


def test_readable_numbers_read_back_exactly():
    rng = np.random.default_rng(0)
    for v in np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-12, 12, 200), [0.1, 1 / 3, 2e-308]]):
        assert parse_number(readable_number(float(v))) == float(v)  # repr round-trips: exact by construction


@pytest.mark.parametrize("text", ["2000", "2e3", "2e+03", "2E3", " 2 000 ", "2_000", "2000.0"])
def test_hand_written_numbers_in_any_notation(text):
    assert parse_number(text) == 2000.0


@pytest.mark.parametrize("text", ["lots", "", "nan", "inf", "1,5"])
def test_text_that_is_not_a_number_is_refused(text):
    with pytest.raises(LinkValueError):
        parse_number(text)


def test_choices_by_key_or_label_in_any_case():
    labels = {m: fd.METHODS[m].label for m in fd.METHODS}
    for key, label in labels.items():
        for text in (key, label, label.upper(), key.replace("-", "_")):
            assert match_choice(text, list(labels), labels.get) == key
    assert match_choice("10", [1.0, 10.0, 100.0]) == 10.0  # numbers in any notation
    assert match_choice("1e2", [1.0, 10.0, 100.0]) == 100.0
    with pytest.raises(LinkValueError, match="allowed: gd, heavy-ball, nesterov"):
        match_choice("newton", list(labels), labels.get)


def test_lists_repeated_or_comma_separated_and_unknown_entries_reported():
    labels = {m: fd.METHODS[m].label for m in fd.METHODS}
    codec = multi_choice_codec(list(labels), labels.get)
    assert codec.parse(["gd,nesterov"]) == ["gd", "nesterov"]
    assert codec.parse(["gd", "Nesterov / FISTA"]) == ["gd", "nesterov"]
    assert codec.parse([""]) == []
    with pytest.raises(PartialValue) as info:
        codec.parse(["heavy-ball,bogus"])
    assert info.value.value == ["heavy-ball"] and "'bogus'" in str(info.value)
    assert codec.write(["gd", "nesterov"]) == ["gd", "nesterov"]


@pytest.mark.parametrize("p", NUMBERS, ids=[f"{p.name}={p.default}" for p in NUMBERS])
def test_every_slider_can_return_to_its_default(p):
    """A log grid, a 0-plus-log grid, or a linear step from the lower end: the default is one of the positions."""
    options = slider_options(p)
    lo, hi = p.widget_range()
    if options is not None:
        assert any(math.isclose(o, p.default, rel_tol=1e-12) for o in options)
        assert all(lo <= o <= hi * (1 + 1e-12) for o in options)
    elif p.type is float:
        step = linear_step(lo, hi, float(p.default))
        k = (p.default - lo) / step
        assert math.isclose(k, round(k), abs_tol=1e-6), (step, k)
        assert step <= (hi - lo) / 100 * (1 + 1e-9)


@pytest.mark.parametrize("p", NUMBERS, ids=[f"{p.name}={p.default}" for p in NUMBERS])
def test_no_slider_offers_a_value_its_bounds_refuse(p):
    """0 < β ≤ 1 must not slide to 0, ζ < (1 + √5)/2 not to (1 + √5)/2: the page refused the slider's own ends."""
    options = slider_options(p)
    lo, hi = p.widget_range()
    if options is not None:
        assert all(admissible(p, o) for o in options)
        return
    step = linear_step(lo, hi, float(p.default)) if p.type is float else 1
    start, end = inside_strict_bounds(p, math.ceil(lo) if p.type is int else lo, math.floor(hi) if p.type is int else hi,
                                      step)
    assert admissible(p, start) and admissible(p, end) and start <= p.default <= end
    k = (p.default - start) / step
    assert math.isclose(k, round(k), abs_tol=1e-6)  # still on the grid that holds the default


def test_strict_ends_move_one_step_inside():
    beta = Param("beta", 0.75, float, low=0, low_strict=True, high=1)
    assert inside_strict_bounds(beta, 0.0, 1.0, 0.01) == (0.01, 1.0)
    zeta = Param("zeta", 1.618, float, low=0, low_strict=True, high=(1 + 5**0.5) / 2, high_strict=True)
    start, end = inside_strict_bounds(zeta, 0.0, (1 + 5**0.5) / 2, 0.002)
    assert start == 0.002 and math.isclose(end, 1.618) and end < (1 + 5**0.5) / 2


def test_bound_messages_name_the_symbol_in_plain_text():
    beta = Param("beta", 0.75, float, low=0, low_strict=True, high=1, symbol=r"\beta")
    with pytest.raises(InputError, match=r"^beta \(β\) = 0.0 is out of range; it needs 0 < beta ≤ 1$"):
        validate_params([beta], {"beta": 0.0})


def test_tiny_linear_defaults_get_a_log_grid_that_reaches_them():
    mu = Param("mu", 1e-3, float, low=0, ui_range=(0.0, 10.0))
    options = slider_options(mu)
    assert options[0] == 0.0 and 1e-3 in options and 10.0 in options
    assert sum(1 for o in options if 0 < o <= 1) >= 6  # 1–2–5 steps, not a jump 0 → 0.1


@pytest.mark.parametrize("p", PARAMS, ids=[f"{p.name}" for p in PARAMS])
def test_labels_are_plain_text(p):
    label = label_of(p)
    assert "$" not in label and "\\" not in label and "{" not in label


@pytest.mark.parametrize("latex, text", [(r"\gamma_0", "γ₀"), (r"\hat\varepsilon", "ε̂"), (r"d_{\max}", "d_max"),
                                         (r"\\lambda", "λ"), (r"\alpha L", "α L"), ("r_2", "r₂"), ("C", "C")])
def test_paper_symbols_as_unicode(latex, text):
    assert plain_symbol(latex) == text


def test_view_slugs_are_readable():
    assert slug("Support & steps") == "support-steps" and slug("Eq. (14) explorer") == "eq-14-explorer"


def test_a_configuration_reads_from_json_or_a_link():
    exported = json.dumps({"link": {"fd.methods": ["gd"], "fd.stop.max_iter": "2000", "sp.other": "1"},
                           "config": {}, "histories": []})
    assert read_configuration(exported, "fd.") == {"fd.methods": ["gd"], "fd.stop.max_iter": "2000"}
    link = "http://localhost:8501/foundations?fd.methods=gd&fd.methods=nesterov&fd.view=convergence"
    assert read_configuration(link, "fd.") == {"fd.methods": ["gd", "nesterov"], "fd.view": "convergence"}
    for bad, why in (("{not json", "not JSON"), ('{"config": {}}', "no \"link\""),
                     ('{"link": {"sp.problem.s": "3"}}', "another page")):
        with pytest.raises(LinkValueError, match=why):
            read_configuration(bad, "fd.")


# ------------------------------------------------------------------------------------------------ AppTest
def url(at, key: str) -> list[str]:
    """The URL's values for ``key`` as a list (AppTest gives a single value as a string)."""
    value = at.query_params.get(key, [])
    return [value] if isinstance(value, str) else list(value)


def test_a_hand_written_link_reproduces_the_configuration():
    at = open_page("foundations", query={"fd.methods": "gd,nesterov", "fd.stop.max_iter": "2000",
                                         "fd.problem.kappa": "100", "fd.view": "convergence"})
    assert not at.exception and not errors(at), errors(at)
    assert at.multiselect(key="fd.methods").value == ["gd", "nesterov"]
    assert at.select_slider(key="fd.stop.max_iter").value == 2000
    assert at.select_slider(key="fd.problem.kappa").value == 100
    assert at.session_state["fd.view"] == "Convergence"
    # written back readable: method keys, plain numbers, the view's slug
    assert url(at, "fd.methods") == ["gd", "nesterov"]
    assert url(at, "fd.stop.max_iter") == ["2000"] and url(at, "fd.view") == ["convergence"]


def test_unusable_link_values_are_named_never_dropped_silently():
    at = open_page("foundations", query={"fd.methods": "gd,newton", "fd.stop.max_iter": "lots",
                                         "fd.problem.kappa": "123", "fd.view": "nowhere"})
    assert not at.exception
    shown = " ".join(errors(at))
    assert "fd.methods = 'gd,newton'" in shown and "'newton'" in shown
    assert "fd.stop.max_iter = 'lots'" in shown and "not a number" in shown
    assert "fd.problem.kappa = '123'" in shown and "nearest: 100, 200" in shown
    assert "fd.view = 'nowhere'" in shown and "iterates" in shown
    assert at.multiselect(key="fd.methods").value == ["gd"]  # the usable part is kept
    # the notice stays while the default is shown, and goes once the user changes that widget
    at.select_slider(key="fd.stop.max_iter").set_value(500).run()
    shown = " ".join(errors(at))
    assert "fd.stop.max_iter" not in shown and "fd.problem.kappa" in shown


def test_the_open_tab_and_the_widgets_survive_reruns():
    at = open_page("foundations")
    at.session_state["fd.view"] = "Convergence"  # what clicking the tab does
    at.run()
    at.select_slider(key="fd.problem.kappa").set_value(200).run()
    at.slider(key="fd.step").set_value(1.5).run()
    assert not at.exception and not errors(at)
    assert at.session_state["fd.view"] == "Convergence"
    assert url(at, "fd.view") == ["convergence"] and url(at, "fd.problem.kappa") == ["200"]
    assert url(at, "fd.step") == ["1.5"]


def test_the_exported_json_loads_back():
    at = open_page("foundations", query={"fd.methods": "heavy-ball", "fd.stop.max_iter": "500"})
    at.slider(key="fd.beta").set_value(0.9).run()
    exported = json.dumps({"link": {k: url(at, k) for k in at.query_params}})
    fresh = open_page("foundations")
    assert fresh.multiselect(key="fd.methods").value == list(fd.METHODS)
    fresh.file_uploader(key="fd.load_file").upload("foundations-run.json", exported.encode(), "application/json")
    fresh.run()
    assert not fresh.exception and not errors(fresh), errors(fresh)
    assert any("Loaded 3 setting(s)" in s.value for s in fresh.success)
    assert fresh.multiselect(key="fd.methods").value == ["heavy-ball"]
    assert fresh.select_slider(key="fd.stop.max_iter").value == 500
    assert fresh.slider(key="fd.beta").value == 0.9


def test_a_json_from_another_page_is_refused_with_a_message():
    at = open_page("foundations")
    at.file_uploader(key="fd.load_file").upload("sparse-run.json", b'{"link": {"sp.problem.s": "3"}}',
                                                "application/json")
    at.run()
    assert not at.exception
    assert any("another page" in e for e in errors(at)), errors(at)


def test_presentation_mode_enlarges_fonts_and_keeps_the_previous_run_as_a_ghost():
    at = open_page("foundations", query={"fd.view": "convergence"})
    gap = next(f for f in plotly_figures(at) if "gap" in f["layout"]["title"]["text"])
    assert gap["layout"]["xaxis"]["tickfont"]["size"] >= 14 and gap["layout"]["xaxis"]["title"]["font"]["size"] >= 16
    at.toggle(key="present").set_value(True).run()
    at.select_slider(key="fd.problem.kappa").set_value(200).run()  # a new run: the kappa = 20 curves become ghosts
    assert not at.exception and not errors(at), errors(at)
    gap = next(f for f in plotly_figures(at) if "gap" in f["layout"]["title"]["text"])
    assert gap["layout"]["xaxis"]["tickfont"]["size"] >= 16 and gap["layout"]["yaxis"]["tickfont"]["size"] >= 16
    names = [t.get("name", "") for t in gap["data"]]
    assert {f"before: {m.label}" for m in fd.METHODS.values()} <= set(names)
    assert url(at, "present") == ["true"]
    assert any(e.label == "About this page" for e in at.expander)  # the summary folds away: chart first


def test_a_toy_slider_is_in_the_link_and_a_value_beyond_its_range_is_named():
    at = open_page("sparse", query={"sp.toy_rho": "0.5", "sp.toy_steps": "20", "sp.view": "toy-2-d"})
    assert not at.exception and not errors(at), errors(at)
    assert at.slider(key="sp.toy_rho").value == 0.5 and at.slider(key="sp.toy_steps").value == 20
    at.slider(key="sp.toy_steps").set_value(30).run()
    assert url(at, "sp.toy_steps") == ["30"] and url(at, "sp.view") == ["toy-2-d"]
    at = open_page("sparse", query={"sp.toy_rho": "3"})
    assert any("sp.toy_rho = '3'" in e and "outside -0.95 … 0.95" in e for e in errors(at)), errors(at)
    assert at.slider(key="sp.toy_rho").value == 0.8


def test_back_restores_the_previous_configuration_and_tab():
    """Browser Back reruns the page with the previous URL (and the current widget values): the page follows the URL."""
    at = open_page("foundations")
    at.select_slider(key="fd.problem.kappa").set_value(200).run()
    before = {k: url(at, k) for k in at.query_params}
    at.session_state["fd.view"] = "Convergence"
    at.run()
    at.slider(key="fd.step").set_value(1.5).run()
    assert url(at, "fd.step") == ["1.5"] and url(at, "fd.view") == ["convergence"]
    at.query_params.clear()  # Back: the URL of the earlier state, the widgets as they are now
    at.query_params.update({k: v if len(v) != 1 else v[0] for k, v in before.items()})
    at.run()
    assert not at.exception and not errors(at), errors(at)
    assert at.slider(key="fd.step").value == 1.0 and at.session_state["fd.view"] == "Iterates"
    assert at.select_slider(key="fd.problem.kappa").value == 200
    assert {k: url(at, k) for k in at.query_params} == before
    at.slider(key="fd.beta").set_value(0.7).run()  # an ordinary change afterwards is not taken for a Back
    assert at.select_slider(key="fd.problem.kappa").value == 200 and url(at, "fd.beta") == ["0.7"]


def test_forward_after_a_back_that_was_cut_short_shows_the_forward_configuration(monkeypatch):
    """Back then Forward faster than a run: the Forward run interrupts the Back run before it sent its URL. The
    Forward run shows the Forward URL's values and leaves that URL as it is (a fresh-clone CI run under load
    showed the Back values and wrote the Back URL over the Forward one)."""
    from app.ui import layout

    at = open_page("foundations")
    at.slider(key="fd.step").set_value(1.5).run()
    forward = {k: url(at, k) for k in at.query_params}
    assert forward.get("fd.step") == ["1.5"]
    monkeypatch.setattr(layout, "flush_url", lambda: None)  # the Back run ends before its URL is sent
    at.query_params.clear()
    at.run()
    assert at.slider(key="fd.step").value == 1.0
    monkeypatch.undo()
    at.query_params.clear()  # Forward
    at.query_params.update({k: v if len(v) != 1 else v[0] for k, v in forward.items()})
    at.run()
    assert not at.exception and not errors(at), errors(at)
    assert at.slider(key="fd.step").value == 1.5
    assert {k: url(at, k) for k in at.query_params} == forward


def test_one_run_changes_the_url_once(monkeypatch):
    """A preset moves several widgets; the run sends its URL in one message (one browser-history entry)."""
    from streamlit.runtime.state.query_params import QueryParams

    at = open_page("foundations")
    sent = []
    original = QueryParams._send_query_param_msg
    monkeypatch.setattr(QueryParams, "_send_query_param_msg", lambda self: (sent.append(1), original(self)))
    at.button(key="fd.preset.heavy-ball-overshoots").click().run()
    assert not at.exception and not errors(at), errors(at)
    assert url(at, "fd.beta") == ["0.9"] and url(at, "fd.problem.kappa") == ["1000"] and url(at, "fd.methods")
    assert len(sent) == 1


def test_result_pickers_that_define_a_figure_are_in_the_link():
    at = open_page("multitask", query={"mt.view": "structure", "mt.structure_run": "bcd", "mt.ex.seed": "7"})
    assert not at.exception and not errors(at), errors(at)
    assert at.selectbox(key="mt.structure_run").value == "BCD"
    assert url(at, "mt.structure_run") == ["BCD"]
    at.multiselect(key="mt.methods").set_value(["apg"]).run()  # the picked run is gone: back to the first, no error
    assert not at.exception and not errors(at), errors(at)
    assert at.selectbox(key="mt.structure_run").value == "APG" and not url(at, "mt.structure_run")


def test_a_run_draws_the_open_tab_and_what_it_needs_and_every_tab_where_nobody_says_which_is_open():
    from types import SimpleNamespace

    from app.ui.page_state import tabs_to_draw

    def tabs(*opened):
        return [SimpleNamespace(open=o) for o in opened]

    assert tabs_to_draw(tabs(False, True, False, False)) == [False, True, False, False]
    assert tabs_to_draw(tabs(False, True, False, False), always=(0,)) == [True, True, False, False]
    assert tabs_to_draw(tabs(False, False, False, True), export=3) == [True] * 4  # the export needs every figure
    assert tabs_to_draw(tabs(None, None, None)) == [True] * 3  # AppTest: Streamlit does not say


def test_a_browser_run_draws_the_open_tab_only_and_the_other_tab_once_it_is_opened():
    at = open_page("foundations", every_tab=False)  # as a browser: Streamlit says which tab is open
    assert_clean(at)
    assert [f["layout"]["title"]["text"] for f in plotly_figures(at)] == [plotly_figures(open_page("foundations"))[0]
                                                                         ["layout"]["title"]["text"]]
    at.session_state["fd.view"] = "Convergence"  # what clicking the tab does
    at.run()
    assert_clean(at)
    titles = [f["layout"]["title"]["text"] for f in plotly_figures(at)]
    assert len(titles) == 3 and any("Gradient mapping" in t for t in titles)  # the iterates (its controls) too

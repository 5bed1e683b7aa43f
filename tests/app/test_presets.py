"""Presets of the Sparse and Multi-task pages and Home's lesson order: each preset, applied through the page,
produces what its name claims (checked from the drawn results). Foundations' presets: test_foundations_page.py.

Every preset of every page (those the SMM, Metric and NPSVC++ pages add too) applies cleanly, states its claim
and sets only widgets the page really has; every preset of the pages owned here has a test of its claim.
"""
import re
from pathlib import Path

import numpy as np
import pytest

from app.views._presets import LESSON, PRESETS
from tests.app_harness import WALK_KINDS, as_array, assert_clean, open_page, plotly_figures

PAGE_KEYS = {"foundations": "fd", "sparse": "sp", "multitask": "mt", "smm": "smm", "metric": "ml", "npsvc": "np"}
CLAIM_TESTED_HERE = ("foundations", "sparse", "multitask")


def figure(at, title_start: str) -> dict:
    return next(f for f in plotly_figures(at) if str(f["layout"]["title"]["text"]).startswith(title_start))


def press(page: str, slug: str):
    key = PAGE_KEYS[page]
    at = open_page(page)
    at.button(key=f"{key}.preset.{slug}").click().run()
    assert_clean(at)
    assert any(i.value.startswith("**") for i in at.info), "the applied preset states its claim"
    return at


def structure_eigenvalues(at) -> np.ndarray:
    return as_array(figure(at, "Structure of the solution")["data"][0]["y"])


def test_tight_relaxation_preset_gives_h_unit_eigenvalues():
    at = press("multitask", "tight-relaxation")
    eig, h = np.sort(structure_eigenvalues(at))[::-1], at.slider(key="mt.problem.h.d30").value
    assert np.allclose(eig[:h], 1, atol=1e-6) and np.allclose(eig[h:], 0, atol=1e-6)


def test_loose_relaxation_preset_leaves_fractional_eigenvalues():
    at = press("multitask", "loose-relaxation")
    eig = structure_eigenvalues(at)
    assert np.any((eig > 0.05) & (eig < 0.95)), eig
    assert any("not tight" in i.value for i in at.info)


def test_apg_plus_preset_identifies_the_support_early():
    at = press("sparse", "apg-plus-identifies")
    traces = {t["name"]: (as_array(t["x"]), as_array(t["y"])) for t in figure(at, "Support changes")["data"]}
    k_plus, changes_plus = traces["APG+"]
    k_pg, _ = traces["PG"]
    assert k_plus[changes_plus > 0].max() <= 5  # the support is fixed from the first few iterations on
    assert k_pg.max() >= 5 * k_plus.max()  # and PG needs many times more iterations to the same tolerance


def test_home_lesson_links_name_existing_presets():
    at = open_page("main")
    assert_clean(at)
    links = [el.proto for el in at.get("page_link")]
    lesson_links = [link for link in links if link.label[:1].isdigit()]
    assert len(lesson_links) == len(LESSON)
    for (page, slug, _, _), link in zip(LESSON, lesson_links):
        assert link.page == page
        if slug is not None:
            assert slug in {p.slug for p in PRESETS[page]}
            assert link.query_string == f"preset={slug}"
            assert next(p.title for p in PRESETS[page] if p.slug == slug) in link.label


def sparse_summary(at) -> dict:
    """The Convergence tab's summary table (status, GE, objective, ...), by method label."""
    table = next(d.value for d in at.dataframe if {"method", "GE", "objective"} <= set(d.value.columns))
    return table.set_index("method").to_dict("index")


def test_apg_extrapolation_preset_saves_gradient_evaluations():
    rows = sparse_summary(press("sparse", "apg-extrapolates"))
    assert rows["PG"]["status"] == "converged" and rows["APG"]["status"] == "converged"
    assert rows["PG"]["GE"] >= 3 * rows["APG"]["GE"]  # "a fraction": measured 141 against 20
    assert rows["APG"]["objective"] <= rows["PG"]["objective"] * (1 + 1e-6)  # the same point, not a worse one


def test_logistic_preset_pg_hits_its_cap_and_apg_plus_converges_fast():
    at = press("sparse", "logistic-newton")
    rows = sparse_summary(at)
    assert rows["PG"]["status"] == "* max_iter" and rows["PG"]["GE"] == at.select_slider(key="sp.stop.max_iter").value
    assert rows["APG"]["status"] == "converged" and rows["APG"]["GE"] < 100
    assert rows["APG+"]["status"] == "converged" and rows["APG+"]["GE"] <= 20


def test_correlated_preset_apg_plus_stops_at_a_worse_stationary_point():
    rows = sparse_summary(press("sparse", "correlated-stationary"))
    assert all(r["status"] == "converged" for r in rows.values()), rows  # each reached its tolerance …
    assert rows["APG+"]["objective"] > 2 * rows["PG"]["objective"]  # … at a point several times worse
    assert rows["APG+"]["GE"] < rows["PG"]["GE"] / 10  # and much sooner


def widget_keys(at) -> set[str]:
    return {str(w.key) for kind in WALK_KINDS for w in getattr(at, kind) if getattr(w, "key", None)}


@pytest.mark.parametrize("page, slug", [(page, p.slug) for page, presets in PRESETS.items() for p in presets])
def test_every_preset_applies_cleanly_and_sets_real_widgets(page, slug):
    """A preset key the page does not draw (a typo, a renamed widget) would set nothing and claim anyway."""
    at = press(page, slug)
    preset = next(p for p in PRESETS[page] if p.slug == slug)
    # A page's view (ui.view_tabs) is a keyed st.tabs, which AppTest lists without its key: check the label.
    tab_labels = {t.label for t in at.tabs}
    views = {k for k, v in preset.values.items() if k.endswith(".view") and v in tab_labels}
    missing = set(preset.values) - widget_keys(at) - views
    assert not missing, f"preset {slug} sets keys that are not widgets of {page}: {sorted(missing)}"
    for key, value in preset.values.items():
        assert at.session_state[key] == (list(value) if isinstance(value, tuple) else value), key


def test_every_preset_of_these_pages_has_a_test_of_its_claim():
    sources = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py") if path.name != Path(__file__).name)
    here = Path(__file__).read_text().split("def widget_keys")[0]  # the claim tests above, not this list
    untested = [(page, p.slug) for page in CLAIM_TESTED_HERE for p in PRESETS.get(page, [])
                if not re.search(rf"""["']{re.escape(p.slug)}["']""", sources + here)]
    assert not untested, f"presets without a test of their claim: {untested}"


def test_a_second_lesson_link_to_a_page_applies_its_preset():
    """Home → preset A → Home → preset B: B's link is not a history step, so B's values are not dropped with A's."""
    at = open_page("foundations", query={"preset": "gd-diverges"})
    assert at.slider(key="fd.step").value == 2.2
    at.query_params.clear()
    at.query_params["preset"] = "heavy-ball-overshoots"
    at.run()
    assert_clean(at)
    overshoot = next(p for p in PRESETS["foundations"] if p.slug == "heavy-ball-overshoots")
    assert at.slider(key="fd.beta").value == overshoot.values["fd.beta"]
    assert at.select_slider(key="fd.problem.kappa").value == overshoot.values["fd.problem.kappa"]
    assert at.query_params.get("fd.beta") == "0.9"  # and the page's link holds them

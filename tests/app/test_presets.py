"""Presets of the Sparse and Multi-task pages and Home's lesson order: each preset, applied through the page,
produces what its name claims (checked from the drawn results). Foundations' presets: test_foundations_page.py."""
import base64

import numpy as np

from app.views._presets import LESSON, PRESETS
from tests.app_harness import assert_clean, open_page, plotly_figures


def as_array(values) -> np.ndarray:
    """A trace's values: a list, or Plotly's typed array {"dtype", "bdata" (base64)}."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).astype(float)
    return np.array(values, float)


def figure(at, title_start: str) -> dict:
    return next(f for f in plotly_figures(at) if str(f["layout"]["title"]["text"]).startswith(title_start))


def press(page: str, slug: str):
    key = {"sparse": "sp", "multitask": "mt"}[page]
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

"""A stored run is shared by every session's script thread (forty students on one configuration read the same
Result), so no page may change a stored history in place. One that did (SMM's convergence figures added a column
to each stored history) made concurrent sessions read a frame whose columns were changing under them: pandas raised
"index 23 is out of bounds for axis 0 with size 20" on 40 of 200 page runs of a 40-student lecture."""
from __future__ import annotations

import pandas as pd
import pytest

import app.ui.runs as runs
from tests.app_harness import assert_clean, click_run, open_page

PAGES = ["foundations", "sparse", "multitask", "smm", "metric", "npsvc"]


@pytest.mark.parametrize("page", PAGES)
def test_drawing_a_page_never_changes_a_stored_run(page, monkeypatch):
    stored: list[tuple[object, pd.DataFrame]] = []
    put = runs.store_result

    def remember(key, result):
        stored.append((result, result.history.copy(deep=True)))
        put(key, result)

    monkeypatch.setattr(runs, "store_result", remember)
    runs._run_store().clear()  # every run of this page is computed (and stored) here
    at = open_page(page)
    if not stored:
        at = click_run(at)
    assert_clean(at)
    at.run()  # a cached rerun draws every figure and table from the stored runs again
    assert stored, f"{page}: its default view stored no run"
    for result, history_when_stored in stored:
        pd.testing.assert_frame_equal(result.history, history_when_stored)

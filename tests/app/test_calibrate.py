"""app/calibrate.py on the quickest page: a row per configuration with the page's estimate beside the measurement."""
import pytest

import app.ui as ui
import app.ui.sweep as ui_sweep
from app import calibrate
from app.views._presets import PRESETS


def test_foundations_rows_pair_each_configuration_with_its_estimate(capsys):
    helpers = (ui.run_controls, ui.run_live, ui.refused, ui_sweep.run_grid_result)
    assert calibrate.main(["foundations", "--jobs"]) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| foundations |")]
    expected = ["defaults"] + [p.slug for p in PRESETS["foundations"]]
    assert [r[1] for r in rows] == expected  # every preset computes something the defaults did not
    for row in rows:
        estimate, live, measured, ratio = row[3:7]
        assert float(estimate) > 0 and live == "live" and float(measured) >= 0 and float(ratio) >= 0
    assert "Gradient descent:" in out  # --jobs: each job's iterations and CPU seconds
    assert f"of {len(expected)} estimates within 2×" in out
    assert (ui.run_controls, ui.run_live, ui.refused, ui_sweep.run_grid_result) == helpers  # put back


def test_unknown_page_is_an_error_naming_the_pages(capsys):
    with pytest.raises(SystemExit):
        calibrate.main(["nopage"])
    assert "choose from foundations" in capsys.readouterr().err

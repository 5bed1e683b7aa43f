"""The docs show what the records hold: every record block of every page is the rendering of its JSON record,
every record is shown somewhere, and each says where its numbers came from."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from solvers.bench import figures as plots
from solvers.bench import records
from solvers.bench.__main__ import main as bench_main
from solvers.core import InputError


def test_every_page_matches_its_records():
    stale = records.report(check=True)
    assert not stale, (f"{[str(p) for p in stale]} differ from docs/benchmarks/records/; "
                       "run `python -m solvers.bench report` (and commit the pages with the records)")


def test_every_record_is_shown_on_a_page_and_says_where_it_came_from():
    shown = {m["name"] for page in records.pages() for m in records.BLOCK.finditer(page.read_text())}
    stored = records.load_records()
    assert stored, "no records in docs/benchmarks/records/"
    assert set(stored) <= shown, f"records no page shows: {sorted(set(stored) - shown)}"
    for name, record in stored.items():
        assert record.command.startswith("python -m solvers.bench "), name
        assert record.date and record.machine and record.clock and record.rows, name
        assert all(len(row) == len(record.columns) for row in record.rows), name
        measured = record.source == records.MEASURED
        assert measured or re.fullmatch(r"transcribed from docs at commit [0-9a-f]{7,40}( \(.+\))?", record.source), \
            f"{name}: source must be 'measured' or 'transcribed from docs at commit X', not {record.source!r}"
        if measured:
            assert "numpy" in record.versions, f"{name}: a measured record lists the versions it ran with"


def test_a_save_run_writes_a_record_and_report_renders_it(tmp_path):
    frame = pd.DataFrame({"method": ["apg", "pg"], "GE": [12, 10_000], "ratio": [0.25, float("nan")]})
    assert records.publish("demo", "t1", "a table", frame) is None  # not saving: nothing written
    with records.saving("python -m solvers.bench demo t1", notes=["tiny"], directory=tmp_path) as written:
        records.publish("demo", "t1", "a table", frame, clock="cpu")
    assert written == [tmp_path / "demo-t1.json"]
    record = records.load_records(tmp_path)["demo-t1"]
    assert record.rows == [["apg", 12, 0.25], ["pg", 10_000, None]]  # numbers stay numbers, NaN becomes empty
    assert record.clock == "cpu" and record.notes == ["tiny"] and record.source == records.MEASURED
    page = tmp_path / "page.md"
    page.write_text("intro\n<!-- record: demo-t1 -->\nold numbers\n<!-- /record -->\nafter\n")
    assert records.report(check=True, docs=tmp_path, directory=tmp_path) == [page]
    assert "old numbers" in page.read_text()  # --check writes nothing
    records.report(docs=tmp_path, directory=tmp_path)
    text = page.read_text()
    assert "| apg | 12 | 0.25 |" in text and "| pg | 10000 |  |" in text and "old numbers" not in text
    assert "`python -m solvers.bench demo t1`" in text and "CPU seconds" in text and text.endswith("after\n")
    assert records.report(check=True, docs=tmp_path, directory=tmp_path) == []


def test_a_block_naming_a_missing_record_is_refused(tmp_path):
    (tmp_path / "page.md").write_text("<!-- record: nowhere-t -->\n<!-- /record -->\n")
    with pytest.raises(InputError, match="nowhere-t"):
        records.report(check=True, docs=tmp_path, directory=tmp_path)


def test_a_record_file_named_after_another_record_is_refused(tmp_path):
    frame = pd.DataFrame({"a": [1]})
    with records.saving("python -m solvers.bench demo t", directory=tmp_path):
        path = records.publish("demo", "t", "t", frame)
    path.rename(tmp_path / "demo-other.json")
    with pytest.raises(InputError, match="rename"):
        records.load_records(tmp_path)


def test_the_command_line_report_check_passes_on_the_repository(capsys):
    assert bench_main(["report", "--check"]) == 0


def test_save_flag_reaches_the_family_bench(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "RECORDS", tmp_path)
    argv = ["sparse", "gradcost", "--m", "200", "--n", "200", "--density", "0.05", "--k", "5", "--reps", "2"]
    assert bench_main(argv + ["--save", "--note", "a test run"]) == 0
    data = json.loads((tmp_path / "sparse-gradcost.json").read_text())
    assert data["command"] == "python -m solvers.bench " + " ".join(argv)
    assert data["notes"] == ["a test run"] and data["source"] == "measured"
    columns, row = data["columns_and_rows"]
    assert columns[:2] == ["X", "s"] and row[1] == 2  # s = ⌊0.01·200⌋


def test_every_figure_was_drawn_from_its_record_as_it_is_now():
    stored = records.load_records()
    assert any(r.figure for r in stored.values()), "no record draws a figure"
    stale = records.stale_figures(stored)
    assert not stale, (f"figures drawn from other numbers than {[r.name for r in stale]} hold: "
                       "run `python -m solvers.bench report`")


def test_a_figure_stamp_round_trips_and_follows_the_numbers(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x00IEND\xaeB`\x82"
    assert plots.read_stamp(png) is None
    assert plots.read_stamp(plots.stamp(png, "abc123")) == "abc123"
    record = records.Record("demo", "f", "t", ["n", "ratio"], [[1200, 2.5]], "python -m solvers.bench demo", "d",
                            "m", "cpu", figure={"kind": "line", "x": "n", "y": ["ratio"]})
    before = plots.digest(record)
    record.rows[0][1] = 2.4
    assert plots.digest(record) != before
    (tmp_path / "demo-f.png").write_bytes(plots.stamp(png, before))  # drawn from the old numbers
    assert records.stale_figures({"demo-f": record}, tmp_path) == [record]
    (tmp_path / "demo-f.png").write_bytes(plots.stamp(png, plots.digest(record)))
    assert records.stale_figures({"demo-f": record}, tmp_path) == []
    assert render_link(record) in records.render(record, "figures/demo-f.png")


def render_link(record) -> str:
    return f"![{record.title}](figures/demo-f.png)"


@pytest.mark.parametrize("cell, value", [(12, 12.0), ("10000*", 10000.0), ("4.29 ± 0.61", 4.29), ("1 200", 1200.0),
                                         ("2.24 (3, 34)", 2.24), ("−0.28 (met)", -0.28), ("–", None), (None, None)])
def test_cells_read_as_numbers_for_a_figure(cell, value):
    assert plots.number(cell) == value

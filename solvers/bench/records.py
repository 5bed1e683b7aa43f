"""Benchmark results as data: one small JSON record per headline table, rendered into the docs.

``python -m solvers.bench FAMILY ... --save`` makes the family's bench hand its headline table to `publish`,
which writes ``docs/benchmarks/records/<family>-<table>.json``: the rows, the command that produced them,
the package versions, the machine, the clock, the date and a short list of notes. ``python -m solvers.bench
report`` rewrites every block of the docs that sits between

    <!-- record: sparse-tables -->
    ...
    <!-- /record -->

from the record of that name, so a page shows what was measured and nothing else (``--check`` only says
which blocks differ). Records made by reading numbers off an older page rather than by running the bench say
so in ``source`` ("transcribed from docs at commit X"), and the rendered caption repeats it.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterator

from ..core import InputError, clock_name
from . import figures as plots

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RECORDS = DOCS / "benchmarks" / "records"
FIGURES = DOCS / "benchmarks" / "figures"
MEASURED = "measured"
VERSIONED = ("numpy", "scipy", "pandas", "scikit-learn", "torch", "cvxpy")
BLOCK = re.compile(r"(<!-- record: (?P<name>[a-z0-9-]+) -->\n)(?P<body>.*?)(<!-- /record -->)", re.S)


@dataclass
class Record:
    """One headline table with what is needed to trust and re-make it."""

    family: str
    table: str
    title: str
    columns: list[str]
    rows: list[list]
    command: str
    date: str
    machine: str
    clock: str
    versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    source: str = MEASURED
    figure: dict | None = None  # a plot of the rows (solvers/bench/figures.py), drawn by `report`

    @property
    def name(self) -> str:
        return f"{self.family}-{self.table}"


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for package in VERSIONED:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def machine() -> str:
    """The processor, cores, thread setting and load, and the GPU where the bench has used torch with CUDA."""
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    torch = sys.modules.get("torch")  # only a bench that imported torch can have run on a GPU
    gpu = f"{torch.cuda.get_device_name()}, " if torch is not None and torch.cuda.is_initialized() else ""
    return (f"{gpu}{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}{load}")


def cell(value) -> str | int | float | None:
    """A JSON-safe cell: numbers stay numbers (NaN becomes empty), the rest becomes text."""
    if value is None:
        return None
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value if isinstance(value, (int, float, str)) else str(value)


_saving: list[dict] = []


@contextmanager
def saving(command: str, notes: list[str] | None = None, directory: Path | None = None) -> Iterator[list[Path]]:
    """Inside the block, `publish` writes records (the bench's ``--save``) to ``directory`` (default `RECORDS`);
    yields the paths written."""
    written: list[Path] = []
    _saving.append({"command": command, "notes": list(notes or ()), "directory": directory or RECORDS,
                    "written": written})
    try:
        yield written
    finally:
        _saving.pop()


def publish(family: str, table: str, title: str, frame, notes: list[str] | None = None,
            clock: str | None = None, figure: dict | None = None) -> Path | None:
    """Store ``frame`` (a pandas DataFrame) as the record ``<family>-<table>`` when a ``--save`` run is on;
    otherwise do nothing. ``clock``: the clock its seconds are on, when the bench did not switch `now` to it
    around this call; ``figure``: a plot of the rows (see solvers/bench/figures.py). Returns the path written."""
    if not _saving:
        return None
    context = _saving[-1]
    record = Record(family=family, table=table, title=title, columns=[str(c) for c in frame.columns],
                    rows=[[cell(v) for v in row] for row in frame.itertuples(index=False)],
                    command=context["command"], date=_dt.date.today().isoformat(), machine=machine(),
                    clock=clock or clock_name(), versions=versions(), notes=list(notes or ()) + context["notes"],
                    figure=figure)
    path = write(record, context["directory"])
    context["written"].append(path)
    return path


def write(record: Record, directory: Path | None = None) -> Path:
    directory = directory or RECORDS
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{record.name}.json"
    data = asdict(record)
    rows, columns = data.pop("rows"), data.pop("columns")  # one line per row: a record's diff reads as its table's
    head = json.dumps(data, indent=1, ensure_ascii=False)[:-2]
    body = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in [columns] + rows)
    path.write_text(f'{head},\n "columns_and_rows": [\n{body}\n ]\n}}\n')
    return path


def load_records(directory: Path | None = None) -> dict[str, Record]:
    directory = directory or RECORDS
    records = {}
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text())
        columns, *rows = data.pop("columns_and_rows")
        record = Record(**data, columns=columns, rows=rows)
        if record.name != path.stem:
            raise InputError(f"{path} holds the record {record.name!r}; rename the file to {record.name}.json")
        records[record.name] = record
    return records


def text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def render(record: Record, figure_link: str | None = None) -> str:
    """The Markdown a page shows for a record: its figure (when it has one), the table, then command, machine,
    clock, date and source."""
    lines = [f"![{text(record.title)}]({figure_link})", ""] if record.figure and figure_link else []
    lines += ["| " + " | ".join(text(c) for c in record.columns) + " |", "|" + "---|" * len(record.columns)]
    lines += ["| " + " | ".join(text(v) for v in row) + " |" for row in record.rows]
    clock = {"cpu": "CPU seconds of the process", "wall": "wall seconds"}.get(record.clock, record.clock)
    stamp = record.date if record.source == MEASURED else f"{record.date}, {record.source}"
    lines += ["", f"`{record.command}`  ", f"{record.machine}; {clock}; {stamp}."]
    if record.notes:
        lines += [""] + [f"- {note}" for note in record.notes]
    return "\n".join(lines) + "\n"


def pages(docs: Path = DOCS) -> list[Path]:
    """The Markdown files under ``docs`` that show at least one record."""
    return sorted(p for p in docs.rglob("*.md") if "<!-- record:" in p.read_text())


def figure_path(record: Record, figures: Path | None = None) -> Path:
    return (figures or FIGURES) / f"{record.name}.png"


def rebuilt(page_text: str, records: dict[str, Record], page: Path, figures: Path | None = None) -> str:
    """``page_text`` (of the file ``page``) with every record block re-rendered from its record."""
    def replace(match: re.Match) -> str:
        name = match["name"]
        if name not in records:
            raise InputError(f"{page.name} shows the record {name!r}, which is not in docs/benchmarks/records; "
                             f"run its bench with --save or remove the block")
        link = os.path.relpath(figure_path(records[name], figures), page.parent).replace(os.sep, "/")
        return match[1] + render(records[name], link) + match[4]
    return BLOCK.sub(replace, page_text)


def stale_figures(records: dict[str, Record], figures: Path | None = None) -> list[Record]:
    """Records whose figure is missing or was drawn from other numbers than the record holds now."""
    def current(record: Record) -> bool:
        path = figure_path(record, figures)
        return path.is_file() and plots.read_stamp(path.read_bytes()) == plots.digest(record)
    return [r for r in records.values() if r.figure and not current(r)]


def report(check: bool = False, docs: Path = DOCS, directory: Path | None = None,
           figures: Path | None = None) -> list[Path]:
    """Rewrite the record blocks of every page and redraw stale figures (``check``: write nothing); returns the
    pages and figures that differed."""
    records = load_records(directory)
    stale = []
    redraw = stale_figures(records, figures)
    if redraw:
        stale += [figure_path(r, figures) for r in redraw]
        if not check:
            (figures or FIGURES).mkdir(parents=True, exist_ok=True)
            for record, png in zip(redraw, plots.draw(redraw)):
                figure_path(record, figures).write_bytes(png)
    for page in pages(docs):
        old = page.read_text()
        new = rebuilt(old, records, page, figures)
        if new != old:
            stale.append(page)
            if not check:
                page.write_text(new)
    return stale


def report_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m solvers.bench report",
                                     description="Rebuild the docs' result tables from docs/benchmarks/records/.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is out of date")
    args = parser.parse_args(argv)
    stale = report(check=args.check)
    for page in stale:  # pages and figures
        print(f"{'out of date' if args.check else 'rebuilt'}: {page.relative_to(ROOT)}", file=sys.stderr)
    return 1 if (args.check and stale) else 0

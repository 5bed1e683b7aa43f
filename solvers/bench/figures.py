"""Figures drawn from benchmark records, as PNG files stamped with the record they came from.

A record may carry a ``figure`` spec (a dict), for a claim a figure says better than its table (a ratio against
size, ours against the paper's per row):

    {"kind": "line" | "bar" | "scatter", "x": "n_train" or ["τ", "C", "ε"] (joined as the label),
     "y": ["K-NPSVC++ / TWSVM", ...], "color": "dataset (K)", "where": {"method": "apg+"},
     "log_x": false, "log_y": false, "hlines": [{"y": 1.7, "label": "paper"}], "diagonal": [1, 2],
     "x_title": ..., "y_title": ...}

`report` (records.py) draws it with plotly and kaleido (the system Chromium, as the app's PNG export) and writes
the PNG with a text chunk holding `digest(record)`: a figure whose stamp differs from its record's digest is out of
date, which a test checks without drawing anything.
"""
from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib

STAMP_KEY = b"optlab-record"


def digest(record) -> str:
    """What a figure depends on: the record's columns, rows and figure spec."""
    payload = {"columns": record.columns, "rows": record.rows, "figure": record.figure}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def number(value) -> float | None:
    """A cell as a number: '10000*' (a cap hit) is 10000, '4.29 ± 0.61' is 4.29, '1 200' is 1200; else None."""
    if isinstance(value, (int, float)):
        return float(value)
    match = re.match(r"\s*([-+]?[\d  ,]*\.?\d+(?:e[-+]?\d+)?)", str(value or "").replace("−", "-"))
    if not match:
        return None
    try:
        return float(re.sub(r"[  ,]", "", match[1]))
    except ValueError:
        return None


def figure(record):
    """The plotly figure of ``record.figure``."""
    import plotly.graph_objects as go

    spec = record.figure
    rows = [dict(zip(record.columns, row)) for row in record.rows]
    rows = [r for r in rows if all(r.get(k) == v for k, v in spec.get("where", {}).items())]
    xs = spec["x"] if isinstance(spec["x"], list) else [spec["x"]]
    label = (lambda r: ", ".join(f"{k} {r[k]}" for k in xs)) if len(xs) > 1 else (
        lambda r: number(r[xs[0]]) if spec.get("kind") != "bar" else str(r[xs[0]]))
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(str(r[spec["color"]]) if spec.get("color") else "", []).append(r)
    fig = go.Figure()
    for group, members in groups.items():
        for y in spec["y"]:
            name = " ".join(part for part in (group, y if len(spec["y"]) > 1 or not group else "") if part)
            xv, yv = [label(r) for r in members], [number(r[y]) for r in members]
            if spec.get("kind") == "bar":
                fig.add_bar(x=xv, y=yv, name=name)
            else:
                fig.add_scatter(x=xv, y=yv, name=name, mode="lines+markers" if spec.get("kind") == "line" else "markers")
    for line in spec.get("hlines", []):
        fig.add_hline(y=line["y"], line_dash="dot", annotation_text=line.get("label", ""))
    for slope in spec.get("diagonal", []):
        values = [v for r in rows for v in (number(r[xs[0]]), *(number(r[y]) for y in spec["y"])) if v]
        lo, hi = min(values), max(values)
        fig.add_scatter(x=[lo, hi], y=[slope * lo, slope * hi], mode="lines", line_dash="dot",
                        name=f"y = {slope}x" if slope != 1 else "y = x")
    fig.update_layout(title=record.title, width=900, height=420, template="plotly_white", barmode="group",
                      xaxis_title=spec.get("x_title", " / ".join(xs)), yaxis_title=spec.get("y_title", ", ".join(spec["y"])),
                      xaxis_type="log" if spec.get("log_x") else None, yaxis_type="log" if spec.get("log_y") else None,
                      margin={"l": 70, "r": 20, "t": 60, "b": 60}, font={"size": 13})
    return fig


def stamp(png: bytes, value: str) -> bytes:
    """``png`` with a tEXt chunk ``optlab-record = value`` before its IEND chunk."""
    data = STAMP_KEY + b"\0" + value.encode()
    chunk = struct.pack(">I", len(data)) + b"tEXt" + data + struct.pack(">I", zlib.crc32(b"tEXt" + data))
    end = png.rindex(b"IEND") - 4
    return png[:end] + chunk + png[end:]


def read_stamp(png: bytes) -> str | None:
    """The ``optlab-record`` text of a PNG, or None."""
    position = 8
    while position + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[position:position + 8])
        body = png[position + 8:position + 8 + length]
        if kind == b"tEXt" and body.startswith(STAMP_KEY + b"\0"):
            return body[len(STAMP_KEY) + 1:].decode()
        position += 12 + length
    return None


def draw(records) -> list[bytes]:
    """PNG bytes of each record's figure, stamped; one browser session for all of them."""
    import plotly.io as pio

    from ..core import InputError

    figures = [figure(record) for record in records]
    try:
        images = [pio.to_image(fig, format="png", scale=1) for fig in figures]
    except (ImportError, ValueError, RuntimeError) as exc:
        raise InputError(f"drawing the docs' figures needs kaleido and Chromium (pip install -e \".[images]\", "
                         f"apt-get install chromium): {exc}") from exc
    return [stamp(png, digest(record)) for png, record in zip(images, records)]

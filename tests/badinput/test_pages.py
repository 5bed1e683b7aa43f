"""Bad input, pages layer: uploads, impossible URL values and oversized settings through AppTest.

Each case opens a page the way a user (or a link) would, and asserts that no exception element is rendered
and that an st.error says what to change. Files are generated here, never committed.
"""
from __future__ import annotations

import io
import re

import numpy as np
import pytest

from tests.app_harness import errors, open_page, upload


def csv_bytes(n: int, d: int, *, targets: int = 1, classes: int = 2, nan: bool = False, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if nan:
        X[1, 0] = np.nan
    if targets == 1:
        Y, names = rng.integers(0, classes, (n, 1)), ["y"]
    else:
        Y, names = rng.normal(size=(n, targets)), [f"y_{j}" for j in range(targets)]
    out = io.StringIO()
    out.write(",".join([f"x{i}" for i in range(d)] + names) + "\n")
    np.savetxt(out, np.hstack([X, Y]), delimiter=",", fmt="%.6g")
    return out.getvalue().encode()


# (id, page, URL values, upload (data key, file name, bytes) or None, pattern the error must match)
CASES = [
    ("metric-all-triplets-breast-cancer", "metric",
     {"ml.data.source": "bundled", "ml.data.bundled": "breast_cancer", "ml.problem.k": "0"}, None,
     r"would take about .*Use k ≥ 1 .*max_samples"),
    ("metric-40x3000-csv", "metric", {}, ("ml.data", "wide.csv", csv_bytes(40, 3000)),
     r"memory budget.*(diagonal M|PCA)"),
    # an eigendecomposition of the 3000 × 3000 M per step: ≈ 1.5 h estimated (d = 1500 is ≈ 12 min, under the limit)
    ("multitask-60x3000-csv", "multitask", {}, ("mt.data", "wide.csv", csv_bytes(60, 3000, targets=3)),
     r"would take about .*fewer features \(PCA\)"),
    ("sparse-url-negative-tol", "sparse", {"sp.stop.tol": "-1"}, None, r"sp\.stop\.tol = '-1'.*0 < tol"),
    ("sparse-url-zero-max-iter", "sparse", {"sp.stop.max_iter": "0"}, None, r"1 ≤ max_iter"),
    ("sparse-url-s-beyond-slider", "sparse", {"sp.problem.s": "100000"}, None, r"outside the widget's range 1 … 200"),
    ("npsvc-url-text-for-number", "npsvc", {"np.problem.max_train": "lots"}, None, r"not a number"),
    ("metric-url-rho-above-one", "metric", {"ml.path.rho": "1.5"}, None, r"rho"),
    ("sparse-upload-nan", "sparse", {}, ("sp.data", "nan.csv", csv_bytes(30, 4, nan=True)),
     r"Upload refused.*(NaN|nan|finite|missing)"),
    ("sparse-upload-not-a-zip", "sparse", {}, ("sp.data", "data.npz", b"this is not a zip archive" * 10),
     r"Upload refused"),
    ("sparse-upload-dotdot-name", "sparse", {}, ("sp.data", "../../../../etc/passwd.csv", b"\x00\x01garbage"),
     r"Upload refused"),
    ("metric-upload-one-class", "metric", {}, ("ml.data", "one.csv", csv_bytes(30, 3, classes=1)),
     r"at least 2 classes"),
    ("multitask-upload-single-target", "multitask", {},
     ("mt.data", "single.csv", csv_bytes(30, 3, targets=1, classes=2)), r"single target.*(several|task)"),
    ("smm-upload-vectors-not-matrices", "smm", {}, ("smm.data", "vectors.csv", csv_bytes(30, 5)),
     r"(matri|p × q|p×q|2-D|image)"),
]


@pytest.mark.slow
@pytest.mark.parametrize("page, query, upload_spec, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_on_a_page_is_an_actionable_error(page, query, upload_spec, pattern):
    at = open_page(page, query=query, timeout=60)
    if upload_spec is not None:
        upload(at, *upload_spec)
    assert not at.exception, [e.value for e in at.exception]
    shown = errors(at)
    assert any(re.search(pattern, e, re.S) for e in shown), shown
    assert not any("Traceback" in e or "root:" in e for e in shown)


def test_an_oversized_generator_request_is_refused_before_any_run(monkeypatch):
    monkeypatch.setenv("SOLVERS_MEMORY_BUDGET", str(2**20))  # 1 MiB: the 24 000-row default-width set exceeds it
    at = open_page("multitask", query={"mt.data.source": "synthetic",
                                       "mt.data.gen.multitask-subspace.n_per_task": "2000"}, timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    assert any(re.search(r"budget.*(fewer|SOLVERS_MEMORY_BUDGET)", e, re.S) for e in errors(at)), errors(at)


def test_a_manual_page_does_no_work_until_run():
    """Multi-task with 20 000 rows per task: the field change only shows the estimate and asks for Run."""
    at = open_page("multitask", query={"mt.data.source": "synthetic",
                                       "mt.data.gen.multitask-subspace.n_per_task": "20000"}, timeout=60)
    assert not at.exception and not errors(at), errors(at)
    assert any("press **Run**" in i.value for i in at.info)
    assert any(c.value.startswith("Estimated run: ≈") for c in at.caption)
    assert at.toggle(key="mt.live").proto.disabled  # live re-run is off for a run estimated over a few seconds

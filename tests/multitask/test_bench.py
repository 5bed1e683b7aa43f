"""The benchmark's command line parses and a tiny speed table prints (no timing is asserted)."""
from types import SimpleNamespace

import pytest

from solvers.core import InputError
from solvers.multitask import bench


def test_bad_sizes_are_refused():
    with pytest.raises(InputError, match="d×m pairs"):
        bench.main(["--only", "speed", "--sizes", "3"])
    assert bench.parse_sizes("20x10,50x20") == [(20, 10), (50, 20)]


def test_tiny_speed_table(monkeypatch, capsys):
    monkeypatch.setattr(bench, "REAL", {"school": SimpleNamespace(available=lambda: False)})
    bench.speed_table([(4, 3)], n_per_task=6, alpha=1.0, beta=1.0, h=1, cvxpy_max=100, time_limit=5.0, seed=0)
    out = capsys.readouterr().out
    assert "| 4 | 3 |" in out and "×" in out

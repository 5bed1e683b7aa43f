"""Benchmarks that reproduce the papers' tables: ``python -m solvers.bench <family> ...``.

Each family provides ``solvers/<family>/bench.py`` with ``main(argv) -> int``;
this package only dispatches to it, so a family's benchmark lives beside its code.
"""

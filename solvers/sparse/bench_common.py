"""What the sparse benchmarks share: the paper's training splits, the machine line, GitHub tables, planted problems.

`bench.py` (Tables 7–10, rcv1, gradient cost), `bench_peers.py` (beside OMP and abess) and `bench_setup.py`
(profile of one fit) all import from here, and this module imports none of them.
"""
from __future__ import annotations

import os
import platform

import numpy as np
import pandas as pd

from .. import datasets
from ..core import check_memory

# The paper trains on m = 50 (colon), 38 (duke), 38 (leukemia) rows; its split is not published.
TRAIN_ROWS = {"colon-cancer": 50, "duke": 38, "leukemia": 38}


def machine() -> str:
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, numpy {np.__version__}")


def split(name: str, seed: int):
    ds = datasets.load(name)
    m = TRAIN_ROWS[name]
    perm = np.random.default_rng(seed).permutation(ds.n_samples)
    train = ds.subset(np.sort(perm[:m]), name=f"{name} (train)")
    test = ds.subset(np.sort(perm[m:]), name=f"{name} (test)") if ds.n_samples > m else None
    return train, test


def available_splits(names, seed: int):
    """(name, train, test) for each named real dataset in the data directory; a missing one is skipped, said so."""
    for name in names:
        if not datasets.REAL[name].available():
            print(f"skip {name}: {datasets.REAL[name].files[0]} is not in the data directory")
            continue
        yield (name, *split(name, seed))


def markdown(table: pd.DataFrame) -> str:
    """A GitHub table (pandas' to_markdown needs tabulate, which the project does not ship)."""
    cells = [[("" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)) for v in row]
             for row in table.itertuples(index=False)]
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def planted(m: int, n: int, loss: str, seed: int, k: int = 10, snr: float = 100.0):
    """Gaussian X (beyond the page generator's dense-size limit), ±1 truth on k columns, SNR 100."""
    check_memory(2 * m * n * 8, f"a dense {m} × {n} benchmark X and its scaled copy")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    truth = np.sort(rng.choice(n, k, replace=False))
    signal = X[:, truth] @ rng.choice([-1.0, 1.0], k)
    y = signal + rng.standard_normal(m) * signal.std() / np.sqrt(snr)
    return X, (y if loss == "ls" else np.where(y >= 0, 1.0, -1.0)), truth

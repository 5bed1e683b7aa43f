"""Seed 001 Tables 7–10 (GE beside the paper's) on colon/duke/leukemia, an rcv1-shaped run, gradient cost.

    python -m solvers.bench sparse tables   [--datasets ...] [--losses ls logistic] [--kappas 0.01 0.05 0.1 1]
    python -m solvers.bench sparse rcv1     [--m 20000 --n 50000 --density 0.001]
    python -m solvers.bench sparse gradcost [--m 20000 --n 50000 --density 0.001]
    python -m solvers.bench sparse peers    [--datasets ... --s-values 1 3 5 10 --n-random 20 --large-ls 2000 20000]

Every ratio is measured side by side in one run on this machine. Splits: the paper trains on
m = 50 (colon), 38 (duke), 38 (leukemia) rows; its split is not published, so we draw a seeded
random split of that size (leukemia's 34-row test file is absent here: no test metric for it).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from ..bench.records import publish
from ..core import InputError
from . import make_problem, prediction_score, solve, sparsity_from_ratio
from .bench_common import TRAIN_ROWS, available_splits, machine, markdown
from .bench_common import split  # noqa: F401 (solvers/sweep/tables.py reads it from here)
from .bench_peers import add_arguments as add_peer_arguments
from .bench_peers import run_peers
from .bench_setup import add_arguments as add_setup_arguments
from .bench_setup import run_setup
from .synthetic import make_sparse_classification

METHODS = ("pg", "apg", "apg+", "pg-ll", "apg-ll+")
# The paper's GE (PG, APG, APG+, PG-LL, APG-LL+) from Tables 7–10; None where the OCR lost the cell.
# PG's 10000 and PG-LL's 20000 are the iteration caps (marked * in the paper). κ = 1 means s = m.
PAPER_GE = {
    ("colon-cancer", "ls", 0.01): (2081, 5, 5, 664, 10), ("colon-cancer", "ls", 0.05): (3162, 185, 8, 768, 16),
    ("colon-cancer", "ls", 0.1): (6951, 320, 10, 2990, 24), ("colon-cancer", "ls", 1.0): (10000, 3272, 39, 5614, 192),
    ("duke", "ls", 0.01): (10000, 5, 5, 382, 10), ("duke", "ls", 0.05): (10000, 8, 8, 1514, 16),
    ("duke", "ls", 0.1): (10000, 23, 9, 1670, 19), ("duke", "ls", 1.0): (10000, 1945, 13, 3782, 101),
    ("leukemia", "ls", 0.01): (8768, 5, 5, 302, 10), ("leukemia", "ls", 0.05): (6726, 8, 8, 1632, 16),
    ("leukemia", "ls", 0.1): (10000, 1263, 9, None, None), ("leukemia", "ls", 1.0): (10000, 1202, 15, 20000, 118),
    ("colon-cancer", "logistic", 0.01): (7560, 12, 9, 226, 16),
    ("colon-cancer", "logistic", 0.05): (10000, 1526, 10, 1728, 22),
    ("colon-cancer", "logistic", 1.0): (10000, 369, 14, 1336, 73),
    ("duke", "logistic", 0.01): (10000, 11, 8, 958, 15), ("duke", "logistic", 0.05): (10000, 12, 8, 1038, 16),
    ("duke", "logistic", 1.0): (10000, 31, 11, 1558, 23),
    ("leukemia", "logistic", 0.01): (10000, 9, 9, 1612, 16), ("leukemia", "logistic", 0.05): (10000, 46, 10, 2278, 20),
    ("leukemia", "logistic", 1.0): (10000, 439, 11, 1538, 22),
}
TITLES = {"tables": "Tables 7–10: gradient evaluations (GE) beside the paper's",
          "rcv1": "Table 1, rcv1-shaped logistic problem: PG / APG / APG+ time",
          "gradcost": "one LS gradient step against two raw sparse products",
          "peers": "beside the field's best-subset solvers", "setup": "where one estimator fit's time goes"}
FIGURES = {"tables": {"kind": "scatter", "where": {"method": "apg+"}, "x": "paper GE", "y": ["GE"], "color": "loss",
                      "log_x": True, "log_y": True, "diagonal": [1, 2], "x_title": "the paper's GE (APG+)",
                      "y_title": "our GE (APG+)"}}
# Table 1, rcv1 (LR) at s1 = ⌊0.01m⌋: time PG / APG / APG+ = 58.4* / 12.6 / 0.3 s, GE 10000* / 1120 / 21.
PAPER_RCV1 = {"pg": (58.4, 10000), "apg": (12.6, 1120), "apg+": (0.3, 21)}


def run_tables(args) -> pd.DataFrame:
    rows = []
    for name, train, test in available_splits(args.datasets, args.seed):
        for loss in args.losses:
            for kappa in args.kappas:
                for method in METHODS:
                    if method in args.methods:
                        rows.append(table_row(name, train, test, loss, kappa, method, args))
                        print(" ".join(f"{v}" for v in rows[-1].values()), flush=True)
    return pd.DataFrame(rows)


def table_row(name: str, train, test, loss: str, kappa: float, method: str, args) -> dict:
    """One cell of Tables 7–10 (also a job of ``--workers N``: solvers/sweep/tables.py)."""
    s = sparsity_from_ratio(kappa, train.n_samples)
    problem = make_problem(train, loss=loss, s=s)
    paper_ge = dict(zip(METHODS, PAPER_GE.get((name, loss, kappa), (None,) * len(METHODS))))[method]
    extra = {"alpha_scale": args.alpha_scale} if method in ("apg", "apg+", "apg-ll+") else {}
    r = solve(problem, method, tol=args.tol, max_iter=args.max_iter, **extra)
    metric, score = prediction_score(problem, test, r.solution["w"])
    return {"data": name, "loss": loss, "s": s, "method": method, "time [s]": round(r.info["time"], 3),
            "GE": f"{r.info['grad_evals']}{'*' if r.status != 'converged' else ''}",
            "CG": r.info["hess_vec"], "paper GE": "–" if paper_ge is None else paper_ge,
            "GE / paper": (round(r.info["grad_evals"] / paper_ge, 2) if paper_ge else None),
            "objective": f"{r.history['objective'].iloc[-1]:.5g}", metric: round(score, 3)}


def rcv1_like(args):
    """A logistic problem shaped like rcv1.binary (Table 2: 20,242 × 47,236, about 0.16% dense)."""
    ds = make_sparse_classification(m=args.m, n=args.n, k=args.k, snr=args.snr, rho=0.0, density=args.density,
                                    m_test=0, seed=args.seed)
    return make_problem(ds, loss="logistic", s=sparsity_from_ratio(0.01, args.m, "floor"))


def run_rcv1(args) -> pd.DataFrame:
    t0 = time.perf_counter()
    problem = rcv1_like(args)
    print(f"rcv1-like: {problem.m} × {problem.n}, nnz {problem.X.nnz}, s = {problem.s} "
          f"(built in {time.perf_counter() - t0:.1f} s)", flush=True)
    rows, times = [], {}
    for method in args.methods:
        r = solve(problem, method, tol=args.tol, max_iter=args.max_iter)
        times[method] = r.info["time"]
        paper_t, paper_ge = PAPER_RCV1.get(method, (None, None))
        rows.append({"method": method, "time [s]": round(r.info["time"], 2),
                     "GE": f"{r.info['grad_evals']}{'*' if r.status != 'converged' else ''}", "CG": r.info["hess_vec"],
                     "objective": f"{r.history['objective'].iloc[-1]:.6g}", "paper time [s]": paper_t, "paper GE": paper_ge})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    if "pg" in times:
        table["time PG / method"] = [round(times["pg"] / times[m], 1) for m in table["method"]]
        table["paper PG / method"] = [round(PAPER_RCV1["pg"][0] / PAPER_RCV1[m][0], 1) if m in PAPER_RCV1 else None
                                      for m in table["method"]]
    return table


def run_gradcost(args) -> pd.DataFrame:
    """One LS PG step's products (Xᵀ∇g(u) over all of X, X_J w_J over s columns) vs two raw products Xw, Xᵀr."""
    ds = make_sparse_classification(m=args.m, n=args.n, k=args.k, snr=args.snr, rho=0.0, density=args.density,
                                    m_test=0, seed=args.seed)
    problem = make_problem(ds, loss="ls", s=sparsity_from_ratio(0.01, args.m, "floor"))
    rng = np.random.default_rng(0)
    w = np.zeros(problem.n)
    J = np.sort(rng.choice(problem.n, problem.s, replace=False))
    w[J] = rng.standard_normal(problem.s)
    w_dense = rng.standard_normal(problem.n)
    u = problem.margin(w, J)
    X, XT, r = problem.X, problem.X.T, rng.standard_normal(problem.m)

    def ours():
        problem.full_gradient(u, w)
        problem.margin(w, J)

    def raw():
        X @ w_dense
        XT @ r

    times = {"ours": [], "raw": []}
    for _ in range(args.reps):  # interleaved, so load from other processes hits both alike
        for name, fn in (("ours", ours), ("raw", raw)):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    (o_min, o_med), (r_min, r_med) = ((min(v), float(np.median(v))) for v in (times["ours"], times["raw"]))
    return pd.DataFrame([{"X": f"{problem.m} × {problem.n}, nnz {X.nnz}", "s": problem.s,
                          "ours: Xᵀ∇g + X_J w_J [ms] (min / median)": f"{1e3 * o_min:.2f} / {1e3 * o_med:.2f}",
                          "raw Xw + Xᵀr [ms] (min / median)": f"{1e3 * r_min:.2f} / {1e3 * r_med:.2f}",
                          "ratio (median)": round(o_med / r_med, 2), "target": "≤ 1.3"}])


def build_parser() -> argparse.ArgumentParser:
    """The command line (also read by ``--workers N``, which runs the tables' cells as jobs)."""
    parser = argparse.ArgumentParser(prog="python -m solvers.bench sparse", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    tables = sub.add_parser("tables", help="Tables 7–10 protocol on the gene-expression sets (GE beside the paper's)")
    tables.add_argument("--datasets", nargs="+", default=list(TRAIN_ROWS), choices=list(TRAIN_ROWS))
    tables.add_argument("--losses", nargs="+", default=["ls", "logistic"], choices=["ls", "logistic"])
    tables.add_argument("--kappas", nargs="+", type=float, default=[0.01, 0.05, 0.1, 1.0],
                        help="s = ⌈κm⌉ (κ = 1 is the s = m column of Tables 8 and 10)")
    tables.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    tables.add_argument("--alpha-scale", dest="alpha_scale", default="absolute", choices=["absolute", "lambda"],
                        help="read α_min, α_max of (19) as absolute (App. B, default) or as multiples of λ")
    peers = sub.add_parser("peers", help="objective, support recovery and time beside OMP and abess")
    add_peer_arguments(peers)
    setup = sub.add_parser("setup", help="profile of one estimator fit: validation, design, L, iterations, polish")
    add_setup_arguments(setup)
    for p in (tables, sub.add_parser("rcv1", help="rcv1-shaped sparse logistic problem: PG / APG / APG+ times"),
              sub.add_parser("gradcost", help="cost of one gradient step against two raw sparse products"), peers,
              setup):
        p.add_argument("--tol", type=float, default=1e-6, help="residual (24) tolerance (paper 1e-6)")
        p.add_argument("--max-iter", dest="max_iter", type=int, default=10_000, help="iteration cap (paper 10000)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--csv", help="also write the table to this CSV file")
    for name in ("rcv1", "gradcost"):
        p = sub.choices[name]
        p.add_argument("--m", type=int, default=20_000)
        p.add_argument("--n", type=int, default=50_000)
        p.add_argument("--density", type=float, default=0.001)
        p.add_argument("--k", type=int, default=100, help="nonzeros of the planted w*")
        p.add_argument("--snr", type=float, default=5.0)
    sub.choices["rcv1"].add_argument("--methods", nargs="+", default=["pg", "apg", "apg+"], choices=list(METHODS))
    sub.choices["gradcost"].add_argument("--reps", type=int, default=30)
    return parser


def parse(argv: list[str] | None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    if args.tol <= 0 or args.max_iter < 1:
        raise InputError("--tol must be > 0 and --max-iter >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    print(f"# machine: {machine()}")
    table = {"tables": run_tables, "rcv1": run_rcv1, "gradcost": run_gradcost, "peers": run_peers,
             "setup": run_setup}[args.what](args)
    print(markdown(table))
    publish("sparse", args.what, TITLES[args.what], table, figure=FIGURES.get(args.what))
    if args.csv:
        table.to_csv(args.csv, index=False)
    return 0

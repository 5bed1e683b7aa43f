"""`python -m solvers.bench sparse peers`: our solvers beside the field's best-subset solvers.

Same objective for everyone, no intercept, same s; each objective is recomputed from the returned
coefficients (LS: ½‖y − Xw‖², logistic: Σ log(1 + exp(−yᵢxᵢᵀw))). Times are end to end (set-up,
L, solve, polish), on whatever machine runs it. Methods:
  APG+ paper   Algorithm 2 from w⁰ = 0 on the raw X (SparseProblem + solve, the paper's tables)
  APG+ ours    the default estimator (unit-norm columns; starts 0, warm path over s, greedy; swap polish),
               no intercept
  APG+ fast    the same with warm_path=False, greedy=False (one solve from 0 and its polish)
  PG, GraSP    paper baselines (GraSP now refits on its support)
  OMP, OMP-n   scikit-learn's OrthogonalMatchingPursuit on raw / unit-norm columns (LS only)
  best-1       the exact best single feature (s = 1, LS only)
  abess        when installed (pip install -e ".[peers]")
  skscope      when installed (same extra; pulls jax)
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from . import SparseLinearRegression, SparseLogisticRegression, SparseProblem, solve
from .bench_common import TRAIN_ROWS, available_splits, markdown, planted
from .peers import abess_fit, available, omp, skscope_fit
from .synthetic import make_sparse_regression

ALL_METHODS = ("apg+ paper", "apg+ ours", "apg+ fast", "pg", "grasp", "omp", "omp-n", "best-1", "abess", "skscope")
PEERS = ("abess", "skscope")


def objective(X, y, loss: str, w: np.ndarray) -> float:
    u = np.asarray(X @ w).ravel()
    if loss == "ls":
        return 0.5 * float((u - y) @ (u - y))
    return float(np.logaddexp(0.0, -y * u).sum())


def best_single(X, y) -> np.ndarray:
    """argmin_j min_c ½‖y − c x_j‖²: the j maximising (x_jᵀy)²/‖x_j‖² (exact, one product)."""
    Xty = np.asarray(X.T @ y).ravel()
    sq = np.asarray(X.multiply(X).sum(axis=0)).ravel() if hasattr(X, "multiply") else np.einsum("ij,ij->j", X, X)
    gain = np.where(sq > 0, Xty**2 / np.where(sq > 0, sq, 1.0), -np.inf)
    j = int(np.argmax(gain))
    w = np.zeros(X.shape[1])
    w[j] = Xty[j] / sq[j]
    return w


def run_method(method: str, X, y, loss: str, s: int, tol: float, max_iter: int) -> tuple[np.ndarray, str]:
    """Coefficients and a status mark ('' or '*' when the iteration cap was hit)."""
    if method in ("apg+ paper", "pg", "grasp"):
        r = solve(SparseProblem(X, y, loss=loss, s=s), method.split()[0], tol=tol, max_iter=max_iter)
        return r.solution["w"], "" if r.status == "converged" else "*"
    if method in ("apg+ ours", "apg+ fast"):
        cls = SparseLinearRegression if loss == "ls" else SparseLogisticRegression
        extra = method == "apg+ ours"
        est = cls(s=s, fit_intercept=False, warm_path=extra, greedy=extra, tol=tol, max_iter=max_iter).fit(X, y)
        sign = 1.0 if loss == "ls" or est.classes_[1] == 1 else -1.0
        return sign * est.coef_, "" if est.status_ == "converged" else "*"
    if method in ("omp", "omp-n"):
        return omp(X, y, loss, s, normalize=method == "omp-n"), ""
    if method == "best-1":
        return best_single(X, y), ""
    fit = {"abess": abess_fit, "skscope": skscope_fit}[method]
    return fit(X, y, loss, s), ""


def applicable(method: str, loss: str, s: int) -> bool:
    if method in ("omp", "omp-n") and loss != "ls":
        return False
    if method == "best-1" and (loss != "ls" or s != 1):
        return False
    return method not in PEERS or available()[method]


def compare(name: str, X, y, loss: str, s: int, methods, args, truth=None) -> list[dict]:
    rows = []
    for method in methods:
        if not applicable(method, loss, s):
            continue
        t = time.perf_counter()
        w, mark = run_method(method, X, y, loss, s, args.tol, args.max_iter)
        seconds = time.perf_counter() - t
        row = {"data": name, "loss": loss, "s": s, "method": method,
               "objective": objective(X, y, loss, w), "time [s]": round(seconds, 3), "capped": mark}
        if truth is not None:
            row["support recovered"] = bool(np.array_equal(np.flatnonzero(w), truth))
        rows.append(row)
        print(f"  {name} {loss} s={s} {method}: f = {row['objective']:.6g}{mark}  {seconds:.2f} s", flush=True)
    best = min(r["objective"] for r in rows)
    for r in rows:
        r["gap to best [%]"] = round(100 * (r["objective"] - best) / max(abs(best), 1e-300), 2)
    return rows


def real_rows(args) -> list[dict]:
    rows = []
    for name, train, _ in available_splits(args.datasets, args.seed):
        X = train.as_vectors()
        y = np.where(np.asarray(train.y) == np.unique(train.y)[-1], 1.0, -1.0)
        for s in args.s_values:
            rows += compare(f"{name} ({TRAIN_ROWS[name]} rows)", X, y, "ls", s, args.methods, args)
    return rows


def recovery_rows(args) -> list[dict]:
    rows = []
    for seed in range(args.n_random):
        ds = make_sparse_regression(m=100, n=1000, k=10, snr=100.0, rho=0.0, density=1.0, m_test=0, seed=seed)
        rows += compare(f"random 100×1000 #{seed}", ds.X, ds.y, "ls", 10, args.methods, args,
                        truth=ds.meta["support_true"])
    return rows


def large_rows(args) -> list[dict]:
    rows = []
    for loss, (m, n) in (("ls", args.large_ls), ("logistic", args.large_logistic)):
        if not m:
            continue
        X, y, truth = planted(m, n, loss, args.seed)
        rows += compare(f"synthetic {m}×{n}", X, y, loss, 10, args.large_methods, args, truth=truth)
    return rows


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method: instances, mean gap to the best, how often within 1 % of the best peer, mean time."""
    peer = table[table["method"].isin(PEERS)].groupby(["data", "loss", "s"])["objective"].min()
    out = []
    for method, g in table.groupby("method", sort=False):
        row = {"method": method, "instances": len(g), "mean gap to best [%]": round(g["gap to best [%]"].mean(), 2),
               "worst gap [%]": g["gap to best [%]"].max(), "mean time [s]": round(g["time [s]"].mean(), 3)}
        if len(peer):
            ref = peer.reindex(pd.MultiIndex.from_frame(g[["data", "loss", "s"]])).to_numpy()
            ok = g["objective"].to_numpy() <= ref + 0.01 * np.abs(ref)
            row["within 1 % of best peer"] = f"{int(ok[~np.isnan(ref)].sum())}/{int((~np.isnan(ref)).sum())}"
        if "support recovered" in g:
            rec = g["support recovered"].dropna()
            row["supports recovered"] = f"{int(rec.sum())}/{len(rec)}" if len(rec) else ""
        out.append(row)
    return pd.DataFrame(out)


def add_arguments(p) -> None:
    p.add_argument("--datasets", nargs="*", default=["colon-cancer", "leukemia", "duke"])
    p.add_argument("--s-values", dest="s_values", nargs="+", type=int, default=[1, 3, 5, 10])
    p.add_argument("--methods", nargs="+", default=list(ALL_METHODS), choices=list(ALL_METHODS))
    p.add_argument("--n-random", dest="n_random", type=int, default=20, help="random 100×1000 recovery problems")
    p.add_argument("--large-ls", dest="large_ls", nargs=2, type=int, default=[2000, 20000], metavar=("M", "N"),
                   help="dense synthetic LS size (0 0 to skip)")
    p.add_argument("--large-logistic", dest="large_logistic", nargs=2, type=int, default=[2000, 10000],
                   metavar=("M", "N"), help="dense synthetic logistic size (0 0 to skip)")
    p.add_argument("--large-methods", dest="large_methods", nargs="+", default=["apg+ paper", "apg+ ours", "apg+ fast", "abess"],
                   choices=list(ALL_METHODS), help="PG and GraSP take minutes there on a loaded 2-core machine")


def run_peers(args) -> pd.DataFrame:
    print(f"# peers installed: {available()}", flush=True)
    groups = {"real": real_rows(args), "recovery": recovery_rows(args), "large": large_rows(args)}
    table = pd.DataFrame([r for rows in groups.values() for r in rows])
    if table.empty:
        return table
    for name, rows in groups.items():
        if rows:
            print(f"\n## summary: {name}\n" + markdown(summary(pd.DataFrame(rows))), flush=True)
    table["objective"] = table["objective"].map(lambda v: f"{v:.6g}")
    return table

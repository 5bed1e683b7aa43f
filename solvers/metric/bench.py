"""Tables 4 and 2 of Yoshida et al.: whole λ-path time, naive vs safe triplet screening, side by side.

    python -m solvers.bench metric --table 4 --datasets iris,wine --fraction 0.9
    python -m solvers.bench metric --table 2 --datasets phishing --max-samples 600 --rho 0.9
    python -m solvers.bench metric --profile-screening --datasets segment --methods RRPB,DGB,PGB

Every configuration runs the same projected-gradient solver over the same λ grid in one process; the
speedup is naive time / screened time, printed next to the paper's. Screening time (bound + rule work,
path and dynamic) is shown in parentheses as in Table 4. The last column checks safety: the largest
‖M_screened − M_naive‖_F / ‖M_naive‖_F over the path (a few × sqrt(tol) at most).
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from ..bench.records import publish
from ..core import InputError, use_clock
from ..datasets import REAL, load
from . import kernels, make_problem
from .device import DEVICES
from .path import regularization_path

#: Table 3's k (0 = all triplets) and the stand-in data when the LIBSVM file is absent.
K_OF = {"iris": 0, "wine": 0, "segment": 20, "satimage": 15, "phishing": 7, "a9a": 5, "mnist_test": 5,
        "breast_cancer": 5, "digits": 3}
LIBSVM_NAME = {"iris": "iris.scale", "wine": "wine.scale"}

CONFIGS = {
    "4": [("GB", ("gb",)), ("PGB", ("pgb",)), ("DGB", ("dgb",)), ("RRPB", ("rrpb",)), ("RRPB+PGB", ("rrpb", "pgb"))],
    "2": [("+RRPB", ("rrpb",)), ("+RRPB+PGB", ("rrpb", "pgb"))],
}
#: Table 2's CPU seconds (ActiveSet, +RRPB, +RRPB+PGB) on the paper's machine: phishing, a9a*1 (AutoEncoder to 16
#: dimensions; ours: --pca 16) and mnist*1 (60,000 images to 32; ours: the data directory's 10,000, --pca 32).
PAPER_SECONDS_T2 = {"phishing": (7989.5, 2126.2, 2133.2), "a9a": (758.7, 70.1, 72.1),
                    "mnist_test": (3788.1, 871.1, 897.9)}
#: Paper speedups (naive or ActiveSet time / method time), Tables 4 and 2 (digest §6.3).
PAPER_SPEEDUP = {
    "4": {"iris": {"GB": 1.55, "PGB": 3.51, "DGB": 4.68, "RRPB": 5.54, "RRPB+PGB": 5.33},
          "wine": {"GB": 1.03, "PGB": 4.36, "DGB": 3.68, "RRPB": 5.39, "RRPB+PGB": 5.37},
          "segment": {"GB": 1.09, "PGB": 5.64, "DGB": 4.41, "RRPB": 6.44, "RRPB+PGB": 7.06},
          "satimage": {"GB": 1.14, "PGB": 3.02, "DGB": 2.46, "RRPB": 3.03, "RRPB+PGB": 3.46},
          "phishing": {"GB": 1.78, "PGB": 4.29, "DGB": 3.19, "RRPB": 4.00, "RRPB+PGB": 4.48}},
    "2": {name: {"+RRPB": base / rrpb, "+RRPB+PGB": base / both}
          for name, (base, rrpb, both) in PAPER_SECONDS_T2.items()},
}


def load_for_bench(name: str):
    real = LIBSVM_NAME.get(name, name)
    if real in REAL:
        if not REAL[real].available():
            return None
        return load(real)
    return load(name)


def run_dataset(name: str, args) -> list[dict]:
    """Naive and every screened configuration on ``args.trials`` subsamples (seeds seed, seed + 1, ...)."""
    ds = load_for_bench(name)
    if ds is None:
        return [{"dataset": name, "method": "(skipped: data file not found)"}]
    return summarize_trials(name, [run_trial(ds, name, trial, args) for trial in range(args.trials)], args)


def run_trial(ds, name: str, trial: int, args) -> tuple[dict, dict[str, dict]]:
    """One subsample (seed = args.seed + trial): the naive path and every configuration, side by side in this
    process, timed on ``args.clock``. Returns the problem's sizes and {label: time, screening time, speedup,
    ΔM/M, #λ}.

    With ``--repeats R`` the rows take turns R times (the order rotated each round, so that no row always runs
    first) and each row's time is its median: a machine whose speed drifts during the run moves every row alike.
    """
    with use_clock(args.clock):
        problem, sizes = trial_problem(ds, name, trial, args)
        labels = method_labels(args)
        runs: dict[str, list[dict]] = {label: [] for label in labels}
        for round_ in range(args.repeats):
            turn = round_ % len(labels)
            for label in labels[turn:] + labels[:turn]:
                path = run_method(problem, label, args)
                _progress(args, name, trial, label, path, problem)
                runs[label].append(path if not runs[label] else {"time": path["time"], "screen": path["screen"]})
        paths = {label: median_path(repeats) for label, repeats in runs.items()}
    return sizes, compare_paths(paths, baseline_label(args))


def median_path(repeats: list[dict]) -> dict:
    """A row's repeats as one path: the median time and screening time, the first run's λ count and solutions (a
    path is deterministic, so every repeat computes the same ones)."""
    return {**repeats[0], "time": float(np.median([r["time"] for r in repeats])),
            "screen": float(np.median([r["screen"] for r in repeats]))}


def trial_problem(ds, name: str, trial: int, args):
    """The subsample of trial ``trial`` (seed = args.seed + trial) as a problem, and its sizes for the table."""
    n = ds.n_samples
    n_sub = args.max_samples or int(math.floor(args.fraction * n)) + 1
    k = K_OF.get(name, 5) if args.k is None else args.k
    ds = reduce_dimension(ds, args.pca, args.seed + trial)
    problem = make_problem(ds, k=k, gamma=args.gamma, max_samples=min(n_sub, n), seed=args.seed + trial,
                           backend=args.backend, device=args.device)
    return problem, {"n": problem.X.shape[0], "d": problem.dim, "k": k or "∞", "triplets": problem.n_triplets}


def method_labels(args) -> list[str]:
    """The table's rows in order: the baseline (naive or active set), then the screened configurations."""
    return [baseline_label(args), *(label for label, _ in selected_configs(args))]


def range_screening(args) -> bool | None:
    """RRPB's ranges: always for Table 2 and ``--range``; otherwise the path's default (``path.uses_ranges``)."""
    return True if args.table == "2" or args.range else None


def run_method(problem, label: str, args) -> dict:
    """One row's path on ``problem``: {time, screen, lambdas, solutions} (a job of ``--workers N``: one method ×
    trial, solvers/sweep/tables.py; ``time`` on the clock in use)."""
    common = dict(rho=args.rho, tol=args.tol, max_iter=args.max_iter, max_steps=args.max_steps, analysis=False,
                  active_set=args.table == "2")
    kernels.USE_NUMBA = args.kernels == "numba"  # (a job of ``--workers N`` runs in its own process)
    if label == baseline_label(args):
        res = regularization_path(problem, bounds=(), **common)
    else:
        res = regularization_path(problem, bounds=dict(CONFIGS[args.table])[label], rule=args.rule,
                                  range_screening=range_screening(args),
                                  paid_screening=not args.every_lambda, **common)
    return {"time": float(res.table["time"].sum()), "screen": float(res.table["screen_time"].sum()),
            "lambdas": len(res.table) - 1, "solutions": res.solutions}


def compare_paths(paths: dict[str, dict], baseline: str) -> dict[str, dict]:
    """{label: time, screen, speedup, rel, lambdas}: speedup = baseline time / time, rel = the largest
    ‖M − M_baseline‖_F / ‖M_baseline‖_F over the λ both paths reached (the safety check)."""
    base = paths[baseline]
    out = {}
    for label, path in paths.items():
        steps = min(len(path["solutions"]), len(base["solutions"]))
        rel = max(np.linalg.norm(path["solutions"][s] - base["solutions"][s])
                  / max(np.linalg.norm(base["solutions"][s]), 1e-300) for s in range(steps))
        out[label] = {"time": path["time"], "screen": path["screen"], "speedup": base["time"] / path["time"],
                      "rel": rel, "lambdas": path["lambdas"]}
    return out


def _progress(args, name, trial, label, path, problem) -> None:
    """With --verbose, one line on stderr per finished path (the table prints only at the end)."""
    if args.verbose:
        print(f"# {name} trial {trial} n={problem.X.shape[0]} d={problem.dim} triplets={problem.n_triplets} "
              f"device={problem.device} {label}: {path['time']:.2f} s ({path['screen']:.2f} screening)",
              file=sys.stderr, flush=True)


def selected_configs(args) -> list[tuple[str, tuple[str, ...]]]:
    """The table's screened configurations, or those named by ``--methods``."""
    if not args.methods:
        return CONFIGS[args.table]
    wanted = [m.strip() for m in args.methods.split(",")]
    known = dict(CONFIGS[args.table])
    bad = [m for m in wanted if m not in known]
    if bad:
        raise InputError(f"--methods {','.join(bad)}: table {args.table} has {', '.join(known)}")
    return [(m, known[m]) for m in wanted]


def reduce_dimension(ds, components: int, seed: int):
    """The paper's preprocessing for a9a*1 and mnist*1 (Table 2): PCA to ``components`` dimensions (0: none)."""
    if not components:
        return ds
    from sklearn.decomposition import PCA

    X = ds.as_vectors()
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, float)
    if components >= X.shape[1]:
        raise InputError(f"--pca {components} must be below the data's {X.shape[1]} dimensions")
    Z = PCA(components, random_state=seed).fit_transform(X)
    return replace(ds, X=Z, image_shape=None)


def baseline_label(args) -> str:
    return "ActiveSet" if args.table == "2" else "Naive"


def summarize_trials(name: str, trials: list[tuple[dict, dict[str, dict]]], args) -> list[dict]:
    """One row per configuration: mean ± std over the trials, the paper's speedup beside ours."""
    base = {"dataset": name, **trials[-1][0], "trials": len(trials)}
    rows = []
    for label in trials[0][1]:
        col = {key: np.array([runs[label][key] for _, runs in trials]) for key in trials[0][1][label]}
        rows.append({**base, "method": label, "lambdas": int(col["lambdas"].mean()),
                     "time": col["time"].mean(), "time_std": col["time"].std(), "screen": col["screen"].mean(),
                     "speedup": col["speedup"].mean(), "speedup_std": col["speedup"].std(),
                     "paper": (1.0 if label == baseline_label(args)
                               else PAPER_SPEEDUP[args.table].get(name, {}).get(label, math.nan)),
                     "max_rel_dM": col["rel"].max()})
    return rows


RECORD_COLUMNS = ["dataset", "n", "d", "k", "triplets", "lambdas", "method", "trials", "time", "time_std", "screen",
                  "speedup", "speedup_std", "paper", "max_rel_dM"]


def format_table(rows: list[dict]) -> str:
    """Mean ± standard deviation over the trials; screening time (mean) in parentheses."""
    head = (f"{'dataset':<10} {'n':>5} {'d':>3} {'k':>3} {'triplets':>9} {'#λ':>4} {'method':<10} "
            f"{'time [s] (screening)':>28} {'speedup':>12} {'paper':>6} {'max ΔM/M':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "time" not in r:
            lines.append(f"{r['dataset']:<10} {r['method']}")
            continue
        paper = "" if math.isnan(r["paper"]) else f"{r['paper']:.2f}"
        lines.append(f"{r['dataset']:<10} {r['n']:>5} {r['d']:>3} {r['k']!s:>3} {r['triplets']:>9,} {r['lambdas']:>4} "
                     f"{r['method']:<10} {r['time']:>9.2f} ± {r['time_std']:>6.2f} ({r['screen']:>6.2f}) "
                     f"{r['speedup']:>5.2f} ± {r['speedup_std']:>4.2f} {paper:>6} {r['max_rel_dM']:>9.1e}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    kernels.USE_NUMBA = args.kernels == "numba"
    compile_seconds = kernels.warm_up()
    names = dataset_names(args)
    if args.profile_screening:
        return profile_main(names, args)
    rows = []
    for name in names:
        rows.extend(run_dataset(name, args))
    print(protocol(args))
    print(f"numba kernels (screening, pair products) compiled or loaded in {compile_seconds:.2f} CPU s before the "
          f"timings ({'on' if kernels.USE_NUMBA else 'off'}; not included in any time below)")
    print(format_table(rows))
    publish("metric", f"table{args.table}", f"Table {args.table}: whole λ-path time, naive vs safe screening "
            f"({protocol(args)})", pd.DataFrame(rows).reindex(columns=RECORD_COLUMNS), clock=args.clock)
    return 0


def profile_main(names: list[str], args) -> int:
    """``--profile-screening``: each screened row's screening split into parts, beside its floor (one path each,
    CPU seconds; ``screening_profile``)."""
    from .screening_profile import profile_rows

    print(protocol(args) + "; one path per row, CPU seconds, timers around the parts of screening")
    for name in names:
        ds = load_for_bench(name)
        if ds is None:
            print(f"{name}: skipped, data file not found")
            continue
        problem, sizes = trial_problem(ds, name, 0, args)
        print(f"{name}: {sizes}", flush=True)
        for text in profile_rows(problem, name, selected_configs(args), rule=args.rule, rho=args.rho, tol=args.tol,
                                 max_iter=args.max_iter, max_steps=args.max_steps, active_set=args.table == "2",
                                 range_screening=range_screening(args),
                                 paid_screening=not args.every_lambda):
            print(text, flush=True)
    return 0


def dataset_names(args) -> list[str]:
    return [n.strip() for n in (args.datasets or ("iris,wine,segment" if args.table == "4" else "phishing")).split(",")]


def protocol(args) -> str:
    return (f"Table {args.table} protocol: rho={args.rho}, tol={args.tol} (relative gap), gamma={args.gamma}, "
            f"rule={args.rule}, backend={args.backend}, device={args.device}, kernels={args.kernels}, seeds={args.seed}..{args.seed + args.trials - 1}, "
            f"{args.clock} seconds" + (f", PCA to {args.pca} dimensions" if args.pca else "")
            + (f", median of {args.repeats} repeats taking turns" if args.repeats > 1 else ""))


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line (also read by ``--workers N``, which runs each dataset × trial × method as a job)."""
    parser = argparse.ArgumentParser(prog="python -m solvers.bench metric", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", choices=("4", "2"), default="4",
                        help="4: plain PG, ρ = 0.9; 2: active set + RRPB range screening, ρ = 0.99")
    parser.add_argument("--datasets", default=None, help="comma list (default iris,wine,segment for 4; phishing for 2)")
    parser.add_argument("--fraction", type=float, default=0.9, help="n_sub = ⌊fraction·n⌋ + 1 (paper: 0.9)")
    parser.add_argument("--max-samples", type=int, default=0, help="override n_sub (0: use --fraction)")
    parser.add_argument("--k", type=int, default=None, help="neighbours per side (default Table 3's; 0 = all)")
    parser.add_argument("--gamma", type=float, default=0.05, help="smoothed-hinge γ (paper 0.05)")
    parser.add_argument("--rho", type=float, default=None, help="λ ratio (default 0.9 for table 4, 0.99 for 2)")
    parser.add_argument("--tol", type=float, default=1e-6, help="relative duality-gap tolerance per λ")
    parser.add_argument("--max-iter", type=int, default=20_000, help="iteration cap per λ")
    parser.add_argument("--max-steps", type=int, default=3000,
                        help="cap on the number of λ (the path stops by the loss elasticity, Sec. 5; Table 2's "
                             "phishing path has ≈ 1,000 λ at ρ = 0.99)")
    parser.add_argument("--rule", default="sphere", choices=("sphere", "linear", "sdp"))
    parser.add_argument("--range", action="store_true",
                        help="RRPB as ranges across λ in table 4 (default: on the triplets backend only, where a "
                             "margin costs O(d²); table 2 always)")
    parser.add_argument("--every-lambda", action="store_true",
                        help="run PGB after RRPB at every λ, as the paper does (default: only where it pays)")
    parser.add_argument("--backend", choices=("pairs", "triplets"), default="pairs",
                        help="pairs: O(1) per triplet from cached pair distances (ours); triplets: O(d²) per triplet "
                             "as the paper's cost model")
    parser.add_argument("--methods", default="", help="comma list of the table's screened rows to run (default all)")
    parser.add_argument("--pca", type=int, default=0, help="PCA to this many dimensions first (paper: a9a*1 16, mnist*1 32)")
    parser.add_argument("--device", choices=DEVICES, default="numpy",
                        help="numpy (default) or PyTorch on cpu / cuda (auto: cuda if visible, else numpy)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: seconds waited; cpu: this process's CPU seconds (use on a loaded machine, with "
                             "OMP_NUM_THREADS=1)")
    parser.add_argument("--kernels", choices=("numba", "numpy"), default="numba",
                        help="screening's per-triplet passes and the solver's pair products compiled (numba, default) "
                             "or in numpy (the reference)")
    parser.add_argument("--profile-screening", action="store_true",
                        help="instead of the table: each screened row's screening split into parts beside its floor "
                             "(the least work its rule must do per λ), one path per row, CPU seconds")
    parser.add_argument("--verbose", action="store_true", help="print each finished path's time on stderr")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first subsample")
    parser.add_argument("--trials", type=int, default=3, help="subsamples (seeds seed, seed + 1, ...), mean ± std")
    parser.add_argument("--repeats", type=int, default=1,
                        help="each row's path this many times, the rows taking turns; its time is the median")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise InputError(f"--repeats {args.repeats}: give at least 1")
    args.rho = args.rho if args.rho is not None else (0.9 if args.table == "4" else 0.99)
    return args

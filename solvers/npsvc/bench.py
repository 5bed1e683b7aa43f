"""NPSVC++ (seed 004): Table 2 accuracy protocol, K-NPSVC++ vs SVC/TWSVM training time, D-NPSVC++ on digits.

    python -m solvers.bench npsvc --part accuracy --splits 10
    python -m solvers.bench npsvc --part time
    python -m solvers.bench npsvc --part deep --epochs 15 --seeds 3 --priors mlp,cnn
    python -m solvers.bench npsvc --part ablation --betas 0.85,0.3,0.1,0.03 --priors cnn
    python -m solvers.bench npsvc --part kernel-gpu --datasets a9a --train 20000 --device cuda --out a9a.json
"""
from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
import pandas as pd

from ..bench.records import publish
from ..core import InputError, use_clock
from ..core.device import device_name, resolve_device
from ..datasets import REAL, load
from .experiments import PAPER_TABLE2, accuracy_splits, fit_svc, summarize, timed_solve, with_paper
from .knpsvc import OFFICIAL_MAX_ITER
from .problem import make_problem

BUNDLED = ("iris", "wine", "breast_cancer", "digits")
KERNEL_METHODS = {"TWSVM": ("twsvm", {}), "NPSVM": ("npsvm", {}), "pinball TWSVM": ("pin-twsvm", {}),
                  "LSTSVM": ("lstsvm", {}), "K-NPSVC++": ("knpsvc", {})}
# Iterations each method may take in the accuracy part: 200 for the QP-based baselines; NPSVM more, since its
# lockstep dual over [λ; α⁺; α⁻] (BB steps, a Newton step every tenth; its Hessian BBᵀ/r₁ has no own-class term to
# condition it) needed 340–430 iterations on DNA and stopped at a relative gap of 0.99 after 200 (80.7 ± 14.8 %);
# K-NPSVC++ the official code's MAX_ITER = 10 outer iterations, with which the paper's Table 2 was made and at which
# the estimator stops by default. Run on to its stopping test (≤ 200 iterations, the gap and max J's relative
# change ≤ 1e-6) it lost 0.64 points on BinAlpha (70.78 vs 71.42 %) and gained none elsewhere: the Chebyshev
# objective max_l J_l is not the accuracy (docs/benchmarks/npsvc.md, notes under Table 2).
ITERATIONS = 200
TOP_KERNELS = 12  # kernels listed by name in the kernels part
BUDGETS = {"NPSVM": 5000, "K-NPSVC++": OFFICIAL_MAX_ITER}


def markdown(df: pd.DataFrame) -> str:
    """A Markdown table (pandas' to_markdown needs the tabulate package, which is not installed)."""
    def cell(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def default_datasets() -> list[str]:
    return list(BUNDLED) + [n for n in PAPER_TABLE2 if n in REAL and REAL[n].available()]


def accuracy_part(names: list[str], splits: int, max_train: int) -> None:
    print(f"\n## Table 2 protocol: {splits} random stratified 60/40 splits, RBF t = mean pairwise squared "
          f"distance, at most {max_train} training rows, defaults c = 1, r1 = r2 = 0.1 (no tuning)\n")
    shown = ["method", "ours", "paper (Table 2)", "p vs K-NPSVC++", "seconds", "converged"]
    record = []
    for name in names:
        ds = load(name)
        start = time.perf_counter()
        runs = accuracy_splits(ds, KERNEL_METHODS, n_splits=splits, problem_params={"max_train": max_train},
                               max_iter=ITERATIONS, budgets=BUDGETS)
        table = with_paper(summarize(runs), name)
        problem = make_problem(ds, max_train=max_train)
        print(f"### {name}: n_train = {problem.n_train}, n_test = {len(problem.y_test)}, m = {ds.n_features}, "
              f"K = {problem.n_classes} ({time.perf_counter() - start:.1f} s)")
        print(markdown(table[shown]))
        print()
        record.append(table[shown].assign(dataset=name, n_train=problem.n_train)[["dataset", "n_train", *shown]])
    if record:
        publish("npsvc", "table2", f"Table 2 protocol: accuracy % over {splits} random stratified 60/40 splits",
                pd.concat(record, ignore_index=True))


def time_part(names: list[str], repeats: int, max_train: int, clock: str = "wall") -> None:
    print(f"\n## Training time on the same kernel ({clock} seconds, fastest of {repeats}: on a shared machine the "
          f"least disturbed run is the closest to the work done; kernel + Cholesky included for ours)\n")
    rows = []
    for name in names:
        with use_clock(clock):
            rows.append(time_one(name, repeats, max_train))
    print(markdown(pd.DataFrame(rows)))
    publish("npsvc", "time", f"Training time on the same kernel ({clock} seconds, fastest of {repeats}, kernel and "
            f"Cholesky included)", pd.DataFrame(rows).round(4), clock=clock)
    print(f"\n(load average {os.getloadavg()[0]:.1f} at the end)")
    print("\nPaper (Table A.1, MATLAB, CPU): K-NPSVC++ / TWSVM = 1.58 (DTD), 1.60 (FLW-102), 1.70 (Cifar-10); "
          "target here: K-NPSVC++ ≤ 3 × SVC.")


# K-NPSVC++ is timed as it fits by default (the estimator's tol = 1e-6 on the relative duality gap and on the
# relative change of max J, at most the official code's MAX_ITER = 10 outer iterations: all 10 on digits, DNA and
# USPS), and once more stopped at tol = 1e-3, the paper's "converges within 5 iterations" (Fig. 2a, primal meets
# dual), reported beside the default fit, not instead of it (docs/benchmarks/npsvc.md, training time). TWSVM is
# timed at its default as well (its duals' relative gaps ≤ 1e-6).
KNPSVC_TIMED = {"K-NPSVC++ (default)": 1e-6, "K-NPSVC++ (tol 1e-3)": 1e-3}
TIMED_DATASETS = ("digits", "dna", "usps")  # the three the K-NPSVC++ / TWSVM time target was set on


def time_one(name: str, repeats: int, max_train: int) -> dict:
    problem = make_problem(load(name), max_train=max_train)
    seconds = {"SVC": [], "TWSVM": [], **{label: [] for label in KNPSVC_TIMED}}
    accuracy, iterations = {}, {}
    for _ in range(repeats):
        seconds["SVC"].append(fit_svc(problem)[2])
        # TWSVM as the page runs it, which is as fast as our QP allows: its duals one after another
        # (baselines.run_twsvm; solving all K duals in lockstep measured 1.2-1.7 x slower)
        runs = [("TWSVM", "twsvm", 1e-6, 200)] + [(label, "knpsvc", tol, OFFICIAL_MAX_ITER)
                                                  for label, tol in KNPSVC_TIMED.items()]
        for label, method, tol, max_iter in runs:
            fresh = make_problem(load(name), max_train=max_train)  # no cached kernel between repeats
            result, sec = timed_solve(fresh, method, tol=tol, max_iter=max_iter)
            accuracy[label], iterations[label] = float(result.history["test_acc"].iloc[-1]), result.info["n_iter"]
            seconds[label].append(sec)
    fastest = {k: float(np.min(v)) for k, v in seconds.items()}
    ours, early = KNPSVC_TIMED
    return {"dataset": name, "n_train": problem.n_train, **{f"{k} [s]": v for k, v in fastest.items()},
            "K-NPSVC++ / SVC": fastest[ours] / fastest["SVC"],
            "K-NPSVC++ / TWSVM": fastest[ours] / fastest["TWSVM"],
            "tol 1e-3 / TWSVM": fastest[early] / fastest["TWSVM"],
            "outer it. (default / tol 1e-3)": f"{iterations[ours]} / {iterations[early]}",
            "test acc % (default / tol 1e-3)": f"{100 * accuracy[ours]:.2f} / {100 * accuracy[early]:.2f}"}


DEEP_METHODS = {"D-NPSVC++": "dnpsvc", "DTWSVN (τ = 1/K)": "fixed-tau", "cross-entropy": "cross-entropy"}


def deep_problem(name: str, n_train: int, validation: bool):
    """Split seed 7, 30 % test (the D-NPSVC++ protocol); capped at ``n_train`` training rows (MNIST-6k: 6000 of
    the 10 000-image file, 4000 test). With ``validation`` the test rows are left out entirely and a
    stratified 25 % of the training part (seed 0) is scored instead: defaults are chosen there."""
    from sklearn.model_selection import train_test_split

    from .problem import problem_from_arrays

    ds = load(name)
    test_size = 0.3 if n_train >= ds.n_samples else 1.0 - n_train / ds.n_samples
    problem = make_problem(ds, test_size=test_size, seed=7, max_train=n_train, kernel="linear")
    if not validation:
        return problem
    fit, val = train_test_split(np.arange(problem.n_train), test_size=0.25, stratify=problem.y_train, random_state=0)
    return problem_from_arrays(problem.X_train[fit], problem.y_train[fit], kernel="linear",
                               X_test=problem.X_train[val], y_test=problem.y_train[val],
                               image_shape=problem.image_shape, kernel_memory=False)


def deep_runs(problem, configs: dict[str, tuple[str, dict]], seeds: int, first_seed: int = 0, warmup: bool = False,
              print_epochs: bool = False, **common) -> pd.DataFrame:
    """One row per configuration: mean ± std accuracy over seeds, the per-seed accuracies, min_l τ_l at the
    end, seconds per epoch. ``warmup``: one untimed 1-epoch run of each configuration first (CUDA context,
    cuDNN and kernel caches), so that no method's time carries the process's start-up. ``print_epochs``
    prints one line per run as it finishes, with each epoch's seconds and test accuracy."""
    if warmup:
        for method, params in configs.values():
            solve_deep(problem, method, seed=first_seed, **{**common, **params, "epochs": 1})
    rows = []
    for label, (method, params) in configs.items():
        accs, per_epoch, min_tau = [], [], []
        for seed in range(first_seed, first_seed + seeds):
            result = solve_deep(problem, method, seed=seed, **common, **params)
            h = result.history
            if print_epochs:
                seconds = np.diff(h["time"].to_numpy())
                print(f"{label}, seed {seed}: s/epoch " + " ".join(f"{t:.3f}" for t in seconds)
                      + " | test % " + " ".join(f"{100 * a:.2f}" for a in h["test_acc"].iloc[1:]), flush=True)
            accs.append(100 * float(h["test_acc"].iloc[-1]))
            per_epoch.append(float(result.info["time"]) / max(int(result.info["n_iter"]), 1))
            min_tau.append(float(h[[c for c in h.columns if c.startswith("tau_")]].iloc[-1].min()))
        rows.append({"model": label, "accuracy %": f"{np.mean(accs):.2f} ± {np.std(accs):.2f}",
                     "per seed": " / ".join(f"{a:.2f}" for a in accs), "mean": float(np.mean(accs)), "min τ_l (end)": float(np.min(min_tau)),
                     "s / epoch": float(np.mean(per_epoch)), "device": result.info["device"],
                     "graphs": result.info["cuda_graphs"]})
    return pd.DataFrame(rows)


def solve_deep(problem, method: str, **params):
    from . import solve

    return solve(problem, method, tol=1e-12, max_iter=params["epochs"], **params)


def deep_part(datasets: list[str], priors: list[str], epochs: int, seeds: int, n_train: int, first_seed: int = 0,
              methods: list[str] | None = None, warmup: bool = False, per_epoch: bool = False,
              batch_sizes: tuple[int, ...] = (64,), graphs: tuple[bool, ...] = (True,), **common) -> None:
    """Test accuracy of D-NPSVC++ and its same-network baselines (identical encoder, epochs, optimiser);
    ``methods`` picks some of them (method names of DEEP_METHODS). Over several batch sizes or launch modes
    (``graphs``: CUDA graphs on/off) it ends with one table of seconds per epoch, each against cross-entropy's in
    the same setting and against eager cross-entropy's at the same batch size."""
    chosen = {k: m for k, m in DEEP_METHODS.items() if methods is None or m in methods}
    on_gpu = common["device"] != "cpu"
    for name in datasets:
        problem = deep_problem(name, n_train, validation=False)
        for prior in priors:
            tables = {}
            for batch, graphed in itertools.product(batch_sizes, graphs):
                print(f"\n### {name} ({problem.n_train} train / {len(problem.y_test)} test), {prior} prior, "
                      f"{epochs} epochs, seeds {first_seed}–{first_seed + seeds - 1}, device {common['device']}, "
                      f"threads {common['threads']}, batch {batch}{', CUDA graphs' if graphed and on_gpu else ''}"
                      f"{', bf16 autocast' if common.get('bf16') else ''}{', after a warm-up run' if warmup else ''}\n")
                table = deep_runs(problem, {k: (m, {"prior": prior}) for k, m in chosen.items()}, seeds, first_seed,
                                  warmup=warmup, print_epochs=per_epoch, epochs=epochs, batch_size=batch,
                                  cuda_graphs=graphed, **common)
                if "cross-entropy" in chosen:
                    table["time / CE"] = table["s / epoch"] / ce_seconds(table)
                print(markdown(table.drop(columns="mean")), flush=True)
                tables[batch, graphed] = table
            if len(tables) > 1:
                launch_table(tables, f"{name}, {prior} prior, {problem.n_train} training rows, {epochs} epochs, "
                                     f"device {common['device']}")
            elif on_gpu:
                where = device_name(resolve_device(common["device"]))
                publish("npsvc", "deep-gpu", f"D-NPSVC++ on {where}: {name}, {prior} prior, {problem.n_train} "
                        f"training rows, batch {batch_sizes[0]}", table.drop(columns="mean"), clock="wall")


def ce_seconds(table: pd.DataFrame) -> float:
    return float(table.loc[table["model"] == "cross-entropy", "s / epoch"].iloc[0])


def launch_table(tables: dict[tuple[int, bool], pd.DataFrame], what: str) -> None:
    """Seconds per epoch over batch sizes and launch modes, against CE in the same setting and eager CE."""
    def ce(table: pd.DataFrame | None) -> float:
        return ce_seconds(table) if table is not None and "cross-entropy" in set(table["model"]) else np.nan

    rows = [{"batch": batch, "CUDA graphs": run["graphs"], "model": run["model"], "s / epoch": run["s / epoch"],
             "time / CE (same launches)": run["s / epoch"] / ce(table),
             "time / eager CE": run["s / epoch"] / ce(tables.get((batch, False)))}
            for (batch, _), table in tables.items() for run in table.to_dict("records")]
    frame = pd.DataFrame(rows)
    print(f"\n### seconds per epoch by batch size and launch mode: {what}\n")
    print(markdown(frame), flush=True)
    publish("npsvc", "deep-gpu-time", f"D-NPSVC++ and cross-entropy per epoch: {what}", frame, clock="wall")


def kernel_census(problem, criterion: str, steps: int = 20, **common) -> dict:
    """Per mini-batch step of a trained-prior epoch (the prior frozen, as in all epochs after fine-tuning): how many
    device kernels it launches and their summed device time, read by torch.profiler over ``steps`` eager steps after
    three warm-up steps. Under a CUDA graph the launches are free, so the summed kernel time is what one replay
    costs at least."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from ..core import validate_params
    from .deep_params import DNPSVC_PARAMS
    from .dnpsvc import Trainer, deterministic_torch

    params = validate_params(DNPSVC_PARAMS, {**common, "criterion": criterion, "prior": "cnn", "cuda_graphs": False})
    device = resolve_device(params["device"])
    with deterministic_torch(0, params["threads"], device):
        trainer = Trainer(problem, params, device)
        trainer.net.prior.requires_grad_(False)
        trainer.net.train()
        batches = torch.randperm(problem.n_train).to(device).split(params["batch_size"])[:steps + 3]
        for idx in batches[:3]:
            trainer.batch_step(idx, gamma=trainer.gamma_at(0), reuse_phi=True)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for idx in batches[3:]:
                trainer.batch_step(idx, gamma=trainer.gamma_at(0), reuse_phi=True)
            torch.cuda.synchronize(device)
    on_device = [e for e in prof.events()  # kernels: not the ranges (the optimiser's step) that span some of them
                 if e.device_type == torch.autograd.DeviceType.CUDA and not e.is_user_annotation]
    n = len(batches) - 3
    by_name = pd.DataFrame({"kernel": [e.name[:70] for e in on_device],
                            "µs": [e.device_time_total for e in on_device]}).groupby("kernel")["µs"]
    top = pd.DataFrame({"per step": by_name.size() / n, "µs / step": by_name.sum() / n})
    return {"criterion": criterion, "kernels / step": len(on_device) / n,
            "kernel µs / step": sum(e.device_time_total for e in on_device) / n,
            "top": top.sort_values("µs / step", ascending=False).head(TOP_KERNELS).reset_index()}


def kernels_part(datasets: list[str], n_train: int, **common) -> None:
    """``kernel_census`` for each criterion on the CNN prior (CUDA only: main refuses another device)."""
    for name in datasets:
        problem = deep_problem(name, n_train, validation=False)
        rows = [kernel_census(problem, criterion, **common) for criterion in ("npsvc++", "fixed", "ce")]
        print(f"\n### device kernels per mini-batch step: {name}, cnn prior (frozen), batch {common['batch_size']}, "
              f"device {common['device']}\n")
        print(markdown(pd.DataFrame(rows).drop(columns="top")), flush=True)
        for row in rows:
            print(f"\n{row['criterion']}: the {TOP_KERNELS} kernels with the most device time per step\n")
            print(markdown(row["top"]), flush=True)


def ablation_part(datasets: list[str], priors: list[str], epochs: int, seeds: int, n_train: int, betas: list[float],
                  gammas: list[float], second_steps: list[bool], first_seed: int = 0,
                  vary: dict[str, list] | None = None, **common) -> None:
    """Validation accuracy (test rows untouched) over the τ momentum β, γ_max and Alg. 2's second step,
    then one more D-NPSVC++ parameter at a time (``vary``, the others at their defaults), with DTWSVN and CE
    beside."""
    for name in datasets:
        problem = deep_problem(name, n_train, validation=True)
        for prior in priors:
            configs = {f"D-NPSVC++ β = {b:g}, γ = {g:g}{'' if on else ', no second step'}":
                       ("dnpsvc", {"prior": prior, "beta": b, "gamma": g, "shared_step": on})
                       for b in betas for g in gammas for on in second_steps}
            configs |= {f"D-NPSVC++ {param} = {v}": ("dnpsvc", {"prior": prior, param: v})
                        for param, values in (vary or {}).items() for v in values}
            configs |= {k: (m, {"prior": prior}) for k, m in DEEP_METHODS.items() if m != "dnpsvc"}
            print(f"\n### validation: {name} ({problem.n_train} fit / {len(problem.y_test)} validation rows), "
                  f"{prior} prior, {epochs} epochs, seeds {first_seed}–{first_seed + seeds - 1}\n")
            print(markdown(deep_runs(problem, configs, seeds, first_seed, epochs=epochs, **common).drop(columns="mean")))


def parse_vary(items: list[str]) -> dict[str, list]:
    """``["margin=1,2", "tau_bn=eval"]`` → {"margin": [1.0, 2.0], "tau_bn": ["eval"]}, each value checked against
    its Param declaration."""
    from .dnpsvc import DNPSVC_PARAMS

    specs = {p.name: p for p in DNPSVC_PARAMS}
    vary = {}
    for item in items:
        name, _, values = item.partition("=")
        if name not in specs or not values:
            raise InputError(f"--vary {item!r}: expected PARAM=V1,V2 with PARAM one of {', '.join(specs)}")
        try:
            vary[name] = [specs[name].check(v) for v in values.split(",")]
        except InputError as exc:
            raise InputError(f"--vary {item!r}: {exc}") from None
    return vary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m solvers.bench npsvc", description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("accuracy", "time", "deep", "kernels", "ablation", "kernel-gpu", "all"),
                        default="all",
                        help="kernels: device kernels and their time per D-NPSVC++ / DTWSVN / CE mini-batch step; "
                             "kernel-gpu: K-NPSVC++ and TWSVM in torch on --device at --train rows (bench_device.py)")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated dataset names (bundled, or real ones in the data directory); default: "
                             "the bundled ones and Table 2's for the accuracy part, " + ",".join(TIMED_DATASETS)
                             + " for the time part")
    parser.add_argument("--splits", type=int, default=10, help="random 60/40 splits (paper: 10)")
    parser.add_argument("--max-train", type=int, default=1000, help="cap on training rows (the kernel is n×n)")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="time and deep parts: wall seconds, or this process's CPU seconds (robust on a loaded machine)")
    parser.add_argument("--epochs", type=int, default=15, help="D-NPSVC++ epochs")
    parser.add_argument("--seeds", type=int, default=3, help="D-NPSVC++ seeds")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="first seed of the deep parts (seeds first..first+seeds−1), to split runs across processes")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu", help="torch device for the deep runs")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast in the deep runs (meant for CUDA)")
    parser.add_argument("--batch-size", default="64",
                        help="deep parts: mini-batch size; the deep part also takes a list (64,256)")
    parser.add_argument("--cuda-graphs", default="on",
                        help="deep parts on CUDA: on (replay each epoch's batches from a CUDA graph), off (eager "
                             "launches) or on,off; with several settings the deep part ends with a time table")
    parser.add_argument("--methods", default=",".join(DEEP_METHODS.values()),
                        help="deep part: which of dnpsvc, fixed-tau, cross-entropy to run")
    parser.add_argument("--warmup", action="store_true",
                        help="deep part: an untimed 1-epoch run of each method first (GPU start-up out of the times)")
    parser.add_argument("--per-epoch", action="store_true", help="deep part: print each run's per-epoch seconds")
    parser.add_argument("--deep-datasets", default="digits", help="image sets for the deep parts (digits, mnist_test)")
    parser.add_argument("--deep-train", type=int, default=6000, help="cap on training rows for the deep parts")
    parser.add_argument("--priors", default="mlp,cnn", help="prior encoders for the deep parts")
    parser.add_argument("--betas", default="0.1", help="τ momenta β for --part ablation (e.g. 0.85,0.3,0.1,0.03)")
    parser.add_argument("--gammas", default="0.01", help="γ_max values for --part ablation")
    parser.add_argument("--second-step", default="on", help="on, off or on,off: Alg. 2's second step (ablation)")
    parser.add_argument("--vary", action="append", default=[], metavar="PARAM=V1,V2",
                        help="ablation: one more D-NPSVC++ parameter over these values, the others at their defaults "
                             "(repeatable), e.g. --vary margin=1,2,8 --vary tau_bn=eval --vary second_lr=0.5")
    parser.add_argument("--train", type=int, default=20000,
                        help="kernel-gpu: stratified training rows (tested on the rest)")
    parser.add_argument("--time-limit", type=float, default=300.0, help="kernel-gpu: wall-second cap per fit")
    parser.add_argument("--fits", default="knpsvc,twsvm",
                        help="kernel-gpu: which of knpsvc, twsvm, svc (scikit-learn's, on the CPU) to run")
    parser.add_argument("--numpy", action="store_true", help="kernel-gpu: also the numpy path (a trial on the CPU)")
    parser.add_argument("--out", default=None, help="kernel-gpu: write the record as JSON to this file")
    args = parser.parse_args(argv)
    if args.part == "kernel-gpu":  # torch only for this part
        from .bench_device import kernel_device_part

        kernel_device_part((args.datasets or "a9a").split(",")[0], args.train, args.device,
                           args.time_limit, [f for f in args.fits.split(",") if f], args.numpy, args.out)
        return 0
    try:
        vary = parse_vary(args.vary)
    except InputError as exc:
        parser.error(str(exc))
    methods = [m for m in args.methods.split(",") if m]
    if not methods or set(methods) - set(DEEP_METHODS.values()):
        parser.error(f"--methods {args.methods!r}: expected a comma-separated subset of {', '.join(DEEP_METHODS.values())}")
    names = [n for n in args.datasets.split(",") if n] if args.datasets else None
    print(f"# npsvc benchmark (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.part in ("accuracy", "all"):
        accuracy_part(names or default_datasets(), args.splits, args.max_train)
    if args.part in ("time", "all"):
        time_part(names or list(TIMED_DATASETS), args.repeats, args.max_train, args.clock)
    deep = {"datasets": [n for n in args.deep_datasets.split(",") if n], "priors": args.priors.split(","),
            "epochs": args.epochs, "seeds": args.seeds, "first_seed": args.first_seed, "n_train": args.deep_train, "threads": args.threads,
            "device": args.device, "bf16": args.bf16}
    if args.part == "kernels" and args.device != "cuda":
        parser.error("--part kernels counts CUDA kernels: run it with --device cuda")
    try:
        batch_sizes = tuple(int(b) for b in args.batch_size.split(","))
        graphs = tuple({"on": True, "off": False}[g] for g in args.cuda_graphs.split(","))
    except (ValueError, KeyError):
        parser.error(f"--batch-size {args.batch_size!r} / --cuda-graphs {args.cuda_graphs!r}: expected integers "
                     "and on/off, comma-separated")
    if any(b < 2 for b in batch_sizes):
        parser.error("--batch-size: BatchNorm needs batches of at least 2")
    with use_clock(args.clock):  # s / epoch in CPU seconds with --clock cpu
        if args.part in ("deep", "all"):
            deep_part(**deep, methods=methods, warmup=args.warmup, per_epoch=args.per_epoch, batch_sizes=batch_sizes,
                      graphs=graphs)
        if args.part == "kernels":
            kernels_part(deep["datasets"], deep["n_train"], threads=args.threads, device=args.device,
                         bf16=args.bf16, batch_size=batch_sizes[0])
        if args.part == "ablation":
            ablation_part(**deep, betas=[float(b) for b in args.betas.split(",")],
                          gammas=[float(g) for g in args.gammas.split(",")],
                          second_steps=[v == "on" for v in args.second_step.split(",")], vary=vary)
    return 0

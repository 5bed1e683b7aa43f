"""K-NPSVC++ and TWSVM on one torch device at a size the CPU path cannot reach (``--part kernel-gpu``).

    python -m solvers.bench npsvc --part kernel-gpu --datasets a9a --train 20000 --device cuda --out a9a-gpu.json
    python -m solvers.bench npsvc --part kernel-gpu --datasets a9a --train 2000 --device cpu --numpy  # a CPU trial

Table 2's protocol (RBF width t = mean pairwise squared distance of the standardised training rows, bias, c = 1, r₁
= r₂ = 0.1, K-NPSVC++ at the official 10 outer iterations, TWSVM's duals to a relative gap of 1e-6 in at most 200 QP
iterations each, as the time part), on ``--train`` stratified training rows, tested on all the other rows (at most
90 % of the data). Both methods run the torch path (knpsvc_torch.py) on ``--device``; on "cpu" that is the same
torch code on the host (a trial), and ``--numpy`` adds the numpy path beside it. Seconds are wall seconds of the
whole fit — kernel, Cholesky, blocks, iterations and the accuracy evaluations of the history rows — between two
device synchronisations, after an untimed warm-up fit on 200 rows (CUDA context, cuBLAS/cuSOLVER handles).
``--time-limit`` caps each fit: the solver stops at its next history row past it, and an alarm 60 s later interrupts
whatever is still running, so a slow fit cannot hold the device; the JSON is rewritten after every fit, so a run
killed from outside keeps the fits it finished.
"""
from __future__ import annotations

import json
import time

import torch

from ..bench.limits import hard_cap
from ..core import InputError, validate_params
from ..core.device import device_name, resolve_device, synchronize
from ..datasets import load
from . import kernel_params
from .baselines import solve_twin_duals
from .experiments import fit_svc
from .knpsvc import OFFICIAL_MAX_ITER, STATE_PARAMS, iterate_knpsvc
from .knpsvc_torch import DeviceFeatures, DeviceKNPSVCState, DeviceTwinDuals
from .problem import make_problem

FITS = ("knpsvc", "twsvm", "svc")
LABELS = {"knpsvc": "K-NPSVC++", "twsvm": "TWSVM", "svc": "SVC"}
BUDGETS = {"knpsvc": (1e-6, OFFICIAL_MAX_ITER), "twsvm": (1e-6, 200)}  # (tol, max_iter), as the time part
C, R1 = kernel_params.C.default, kernel_params.R1.default  # Table 2's c and r₁: K-NPSVC++'s fit takes its defaults
WARMUP_ROWS = 200
HARD_CAP_MARGIN = 60.0  # seconds past --time-limit at which the alarm interrupts a fit


def fit(problem, method: str, device: torch.device | None, time_limit: float):
    """One fit; ``device`` None runs the numpy path (the solvers' default)."""
    from . import solve

    tol, max_iter = BUDGETS[method]
    if device is None:
        return solve(problem, method, tol=tol, max_iter=max_iter, time_limit=time_limit)
    features = DeviceFeatures(problem, device)  # kernel and Cholesky: timed by the caller
    if method == "knpsvc":
        params = validate_params(STATE_PARAMS, {})
        return iterate_knpsvc(problem, lambda: DeviceKNPSVCState(problem, features, **params), tol=tol,
                              max_iter=max_iter, time_limit=time_limit)
    return solve_twin_duals(problem, lambda: DeviceTwinDuals(problem, features, R1), tol=tol, max_iter=max_iter,
                            time_limit=time_limit, c=C)


def timed_fit(problem, method: str, device: torch.device | None, time_limit: float) -> dict:
    """Wall seconds between two synchronisations, with the fit's iterations, status, accuracy and peak memory."""
    on = device if device is not None else torch.device("cpu")
    if on.type == "cuda":
        torch.cuda.reset_peak_memory_stats(on)
    synchronize(on)
    start = time.perf_counter()
    try:
        with hard_cap(time_limit + HARD_CAP_MARGIN):
            result = fit(problem, method, device, time_limit)
        synchronize(on)
    except TimeoutError as exc:
        return {"wall [s]": time.perf_counter() - start, "status": str(exc)}
    seconds = time.perf_counter() - start
    h = result.history
    row = {"wall [s]": seconds, "solver clock [s]": float(result.info["time"]), "status": result.status,
           "iterations": int(result.info["n_iter"]),
           # K-NPSVC++'s rows count each U-step's QP iterations, TWSVM's the running total
           "QP iterations": int(h["qp_iters"].sum() if method == "knpsvc" else h["qp_iters"].iloc[-1]),
           "train acc %": 100 * float(h["train_acc"].iloc[-1]), "test acc %": 100 * float(h["test_acc"].iloc[-1])}
    if on.type == "cuda":
        row["peak device memory [GiB]"] = torch.cuda.max_memory_allocated(on) / 2**30
    return row


def kernel_device_part(name: str, n_train: int, device: str, time_limit: float, fits: list[str],
                       numpy_too: bool = False, out: str | None = None) -> dict:
    """Fit ``fits`` on ``n_train`` rows of ``name``; print a table last, write the JSON to ``out``."""
    if set(fits) - set(FITS) or not fits:
        raise InputError(f"--fits {','.join(fits)!r}: expected a comma-separated subset of {', '.join(FITS)}")
    if time_limit <= 0:
        raise InputError(f"--time-limit must be positive, got {time_limit:g}")
    on = resolve_device(device)
    ds = load(name)
    if not 2 <= n_train < ds.n_samples:
        raise InputError(f"--train {n_train}: {name} has {ds.n_samples} rows; choose 2 ≤ train < {ds.n_samples}")

    def fresh():  # a problem per fit: the numpy path caches its kernel on the problem
        return split(ds, n_train)

    problem = fresh()
    header = {"dataset": name, "n_train": problem.n_train, "n_test": len(problem.y_test),
              "classes": problem.n_classes, "device": device_name(on), "torch": torch.__version__,
              "kernel": f"rbf, t = {problem.kernel.width:.6g}, bias", "c": C, "r1": R1,
              "time limit per fit [s]": time_limit}
    print(f"\n## {LABELS['knpsvc']} and {LABELS['twsvm']} on {header['device']}: {name}, "
          f"{header['n_train']} training / {header['n_test']} test rows, {header['kernel']}\n", flush=True)
    warmup = split(ds, WARMUP_ROWS)
    runs = []
    for method in [m for m in ("knpsvc", "twsvm") if m in fits]:
        timed_fit(warmup, method, on, time_limit)
        paths = [("torch", on)] + ([("numpy", None)] if numpy_too else [])
        for path, where in paths:
            row = {"method": LABELS[method], "path": path, **timed_fit(fresh(), method, where, time_limit)}
            print(json.dumps(row), flush=True)
            runs.append(row)
            write(out, header, runs)
    if "svc" in fits:
        _, accuracy, seconds = fit_svc(problem, C)
        runs.append({"method": "SVC", "path": "scikit-learn (CPU)", "wall [s]": seconds,
                     "test acc %": 100 * accuracy})
    record = write(out, header, runs)
    print(table(runs))
    for key, value in ratios(runs).items():
        print(f"{key}: {value:.3f}")
    return record


def write(out: str | None, header: dict, runs: list[dict]) -> dict:
    """The record so far, also written to ``out`` when given."""
    record = {**header, "runs": runs, **ratios(runs)}
    if out:
        with open(out, "w") as fh:
            json.dump(record, fh, indent=1)
    return record


def split(ds, n_train: int):
    """``n_train`` stratified training rows and all the others as test rows (at most 90 % of the data, the largest
    test share make_problem takes: below 10 % of the rows, the training rows are a subsample of that 10 %)."""
    return make_problem(ds, test_size=min(0.9, 1.0 - n_train / ds.n_samples), max_train=n_train, seed=0)


def ratios(runs: list[dict]) -> dict:
    """K-NPSVC++ / TWSVM wall seconds for each path that ran both to completion."""
    found = {}
    for path in dict.fromkeys(r["path"] for r in runs):
        wall = {r["method"]: r["wall [s]"] for r in runs if r["path"] == path and "iterations" in r}
        if {"K-NPSVC++", "TWSVM"} <= set(wall):
            found[f"K-NPSVC++ / TWSVM ({path})"] = wall["K-NPSVC++"] / wall["TWSVM"]
    return found


def table(runs: list[dict]) -> str:
    columns = list(dict.fromkeys(k for r in runs for k in r))
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in runs:
        cells = [r.get(c, "") for c in columns]
        lines.append("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in cells) + " |")
    return "\n".join(lines)

"""Bad input at the library layer: generators, loaders, each family's make_problem / solve and estimators.

Each case must raise `InputError` (a ValueError) before any work starts, with a message that says what to
change. The upload layer has its own module (test_uploads.py), as do the command line and the pages.
"""
import numpy as np
import pytest

from solvers import datasets, foundations, metric, multitask, npsvc, smm, sparse
from solvers.core import InputError
from solvers.datasets import Dataset

RNG = np.random.default_rng(0)
X = RNG.standard_normal((30, 6))
X_NAN = X.copy()
X_NAN[3, 2] = np.nan
X_INF = X.copy()
X_INF[0, 0] = np.inf
Y3 = np.repeat([0, 1, 2], 10)
Y2 = np.where(np.arange(30) % 2, 1, -1)
T = RNG.standard_normal(30)
MATS = RNG.standard_normal((30, 3, 4))


def data(X, y, task="classification"):
    return Dataset("test data", X, y, task)


def tiny_tasks():
    return datasets.generate("multitask-subspace", d=5, m=3, n_per_task=6, n_test=0, h_true=1)


def quadratic():
    return foundations.make_problem(None)


CASES = {
    # -- generators and loaders ------------------------------------------------------------------------------
    "generator: tasks × rows × features beyond memory":
        (lambda: datasets.generate("multitask-subspace", n_per_task=100_000, m=1000, d=2000), "budget"),
    "generator: subspace larger than the space":
        (lambda: datasets.generate("multitask-subspace", d=5, h_true=7), "cannot exceed"),
    "generator: dense sparse-regression beyond memory":
        (lambda: datasets.generate("sparse-regression", m=10**6, n=10**7), "lower m or n"),
    "generator: more true nonzeros than features":
        (lambda: datasets.generate("sparse-regression", m=20, n=5, k=10), "k = 10"),
    "generator: SMM set beyond memory":
        (lambda: datasets.generate("smm-synthetic", n_train=2 * 10**6, p=2000, q=2000), "budget"),
    "generator: unknown setting": (lambda: datasets.generate("blobs-2d", n=50, width=3), "unknown parameter"),
    "generator: negative seed": (lambda: datasets.generate("blobs-2d", seed=-1), "out of range"),
    "generator: below the smallest size": (lambda: datasets.generate("blobs-2d", n=2), "out of range"),
    "generator: unknown name": (lambda: datasets.generate("no-such-generator"), "known:"),
    "generator: a number that is not one": (lambda: datasets.generate("blobs-2d", n="many"), "must be a int"),
    "loader: unknown dataset": (lambda: datasets.load("no-such-set"), "available:"),
    # -- foundations and the shared solve() contract ---------------------------------------------------------
    "solve: tol < 0": (lambda: foundations.solve(quadratic(), "gd", tol=-1.0), "0 < tol"),
    "solve: max_iter = 0": (lambda: foundations.solve(quadratic(), "gd", max_iter=0), "1 ≤ max_iter"),
    "solve: unknown method": (lambda: foundations.solve(quadratic(), "newton"), "choose one of"),
    "solve: unknown parameter": (lambda: foundations.solve(quadratic(), "gd", momentum=0.9), "unknown parameter"),
    "solve: step beyond 3/L": (lambda: foundations.solve(quadratic(), "gd", step=7.0), "out of range"),
    "solve: momentum β = 1": (lambda: foundations.solve(quadratic(), "heavy-ball", beta=1.0), "beta < 1"),
    "solve: NaN step": (lambda: foundations.solve(quadratic(), "gd", step=float("nan")), "finite"),
    "foundations: unknown problem": (lambda: foundations.make_problem(None, problem="cubic"), "choose"),
    "foundations: κ < 1": (lambda: foundations.make_problem(None, kappa=0.5), "out of range"),
    # -- sparse ----------------------------------------------------------------------------------------------
    "sparse: NaN in X": (lambda: sparse.make_problem(data(X_NAN, T, "regression"), s=2), "impute"),
    "sparse: inf in X": (lambda: sparse.make_problem(data(X_INF, T, "regression"), s=2), "impute"),
    "sparse: complex X": (lambda: sparse.make_problem(data(X + 1j, T, "regression"), s=2), "real numbers"),
    "sparse: text X": (lambda: sparse.make_problem(data(np.full((30, 6), "a"), T, "regression"), s=2),
                       "encode text"),
    "sparse: no rows": (lambda: sparse.make_problem(data(np.empty((0, 6)), np.empty(0), "regression"), s=2),
                        "at least 1 row"),
    "sparse: X and y lengths differ": (lambda: sparse.make_problem(data(X, T[:29], "regression"), s=2),
                                       "must match"),
    "sparse: logistic with 3 classes": (lambda: sparse.make_problem(data(X, Y3), loss="logistic", s=2), "class"),
    "sparse: s = 0": (lambda: sparse.make_problem(data(X, T, "regression"), s=0), "between 1 and"),
    "sparse: μ < 0": (lambda: sparse.make_problem(data(X, T, "regression"), s=2, mu=-1.0), ">= 0"),
    "sparse: all-zero X": (lambda: sparse.make_problem(data(np.zeros((30, 6)), T, "regression"), s=2),
                           "all zeros"),
    # -- multitask -------------------------------------------------------------------------------------------
    "multitask: h > d": (lambda: multitask.make_problem(tiny_tasks(), h=7), "between 0 and d"),
    "multitask: α = 0": (lambda: multitask.make_problem(tiny_tasks(), alpha=0.0), "positive"),
    "multitask: one target only": (lambda: multitask.make_problem(data(X, T, "regression")), "several tasks"),
    "multitask: unknown loss": (lambda: multitask.make_problem(tiny_tasks(), loss="huber"), "loss"),
    # -- smm ---------------------------------------------------------------------------------------------------
    "smm: three classes": (lambda: smm.make_problem(data(MATS, Y3)), "positive_class"),
    "smm: one class": (lambda: smm.make_problem(data(MATS, np.ones(30))), "exactly 2"),
    "smm: C = 0": (lambda: smm.make_problem(data(MATS, Y2), C=0.0), "C > 0"),
    "smm: τ < 0": (lambda: smm.make_problem(data(MATS, Y2), tau=-1.0), "tau"),
    "smm: NaN in a sample": (lambda: smm.make_problem(data(np.where(MATS > 2, np.nan, MATS), Y2)), "impute"),
    "smm: F-ADMM η = 1": (lambda: smm.solve(smm.make_problem(data(MATS, Y2)), "fadmm", eta=1.0), "eta < 1"),
    "smm: estimator on three classes": (lambda: smm.SupportMatrixMachine().fit(MATS, Y3), "one-vs-rest"),
    # -- metric ------------------------------------------------------------------------------------------------
    "metric: one class": (lambda: metric.make_problem(data(X, np.zeros(30))), "at least 2"),
    "metric: one sample per class": (lambda: metric.make_problem(data(X[:3], np.array([0, 1, 2]))),
                                     "at least 2 per class"),
    "metric: NaN": (lambda: metric.make_problem(data(X_NAN, Y3)), "impute"),
    "metric: γ = 1": (lambda: metric.make_problem(data(X, Y3), gamma=1.0), "gamma < 1"),
    "metric: regression targets": (lambda: metric.make_problem(data(X, T, "regression")), "class labels"),
    "metric: transform with other features":
        (lambda: metric.TripletMetricLearner().fit(X, Y3).transform(X[:, :3]), "features"),
    # -- npsvc -------------------------------------------------------------------------------------------------
    "npsvc: one class": (lambda: npsvc.make_problem(data(X, np.zeros(30))), "at least 2"),
    "npsvc: NaN": (lambda: npsvc.make_problem(data(X_NAN, Y3)), "impute"),
    "npsvc: test part of 95 %": (lambda: npsvc.make_problem(data(X, Y3), test_size=0.95), "out of range"),
    "npsvc: unknown kernel": (lambda: npsvc.make_problem(data(X, Y3), kernel="sigmoid"), "choose"),
    "npsvc: predefined split without one": (lambda: npsvc.make_problem(data(X, Y3), split="predefined"),
                                            "split='random'"),
    "npsvc: predict with other features": (lambda: npsvc.KNPSVC().fit(X, Y3).predict(X[:, :3]), "features"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused_with_what_to_change(case):
    make, advice = CASES[case]
    with pytest.raises(InputError) as refused:
        make()
    assert advice in str(refused.value), f"{case}: the message {str(refused.value)!r} does not say {advice!r}"


def test_the_suite_covers_every_layer_it_claims():
    assert len(CASES) >= 50
    families = {name.split(":")[0] for name in CASES}
    assert {"generator", "loader", "solve", "sparse", "multitask", "smm", "metric", "npsvc"} <= families

"""The screening profile (``--profile-screening``): its floor kernel, its counts, and a path it leaves unchanged."""
import numpy as np
import pytest

from solvers.datasets import REAL
from solvers.metric import bench, kernels, screening_profile
from solvers.metric import path as path_module
from solvers.metric.path import regularization_path
from solvers.metric.problem import TripletProblem, TripletSubset
from solvers.metric.ranges import RangeLedger
from solvers.metric.screening_profile import profile_path

PATH = dict(rho=0.7, tol=1e-6, max_steps=8)


def test_floor_kernel_gathers_the_margins_of_the_candidates_in_order():
    rng = np.random.default_rng(0)
    n, pairs = 500, 40
    candidates = np.sort(rng.choice(n, 120, replace=False))
    diff, same = rng.integers(0, pairs, n).astype(np.int32), rng.integers(0, pairs, n).astype(np.int32)
    q = rng.standard_normal(pairs)
    out = np.empty(candidates.size)
    kernels.compiled().floor_margins(candidates, diff, same, q, out)
    np.testing.assert_array_equal(out, q[diff[candidates]] - q[same[candidates]])


def test_profile_counts_the_ledgers_candidates_and_leaves_the_path_as_it_was(iris_tiny, monkeypatch):
    """The candidates per λ equal a count taken by hand on an unprofiled path (the floor's timing changes nothing
    of the ledger), the ledger's parts fit inside it, and the solver's functions are restored afterwards."""
    before = (RangeLedger.step, TripletProblem.subset, TripletProblem.pair_values_where, TripletSubset.pair_values,
              TripletProblem.weighted_pairs, path_module._path_screen)
    row = profile_path(iris_tiny, ("rrpb",), range_screening=True, **PATH)
    assert (RangeLedger.step, TripletProblem.subset, TripletProblem.pair_values_where, TripletSubset.pair_values,
            TripletProblem.weighted_pairs, path_module._path_screen) == before

    counted = []
    step = RangeLedger.step

    def counting(self, t, lam, reference):
        if reference is not None:
            counted.append(int(np.count_nonzero(self.release <= t)))
        return step(self, t, lam, reference)
    monkeypatch.setattr(RangeLedger, "step", counting)
    plain = regularization_path(iris_tiny, bounds=("rrpb",), analysis=False, range_screening=True, **PATH)
    assert len(plain.table) - 1 == row["lambdas"]
    assert row["candidates"] == pytest.approx(sum(counted) / row["lambdas"])
    assert row["candidates"] >= row["left active"] > 0
    assert row["compiled pass"] >= 0 and row["ledger"] <= row["screening"] + 1e-9
    assert row["pair values"] > 0  # the ledger's, timed once whichever way it takes them
    assert 0 < row["share at floor"] < 1


@pytest.mark.parametrize("bounds", [("dgb",), ("pgb",)])
def test_profile_of_a_path_step_times_its_floor_from_whole_evaluations(iris_tiny, bounds, monkeypatch):
    """Every timed evaluation of the floor is a whole pass over all triplets, none read from an earlier one
    (RRPB over all of T has no evaluation in its floor: its test is below)."""
    passes = []
    terms = TripletSubset.loss_terms

    def counting(self, M, margins=None):
        passes.append(len(self))
        return terms(self, M, margins)
    monkeypatch.setattr(TripletSubset, "loss_terms", counting)
    row = profile_path(iris_tiny, bounds, **PATH)
    repeats = screening_profile._EVALUATION_REPEATS
    assert passes[-repeats:] == [iris_tiny.n_triplets] * repeats
    assert row["ledger"] == 0 and row["candidates"] == 0
    assert row["path step"] > 0 and row["floor"] > 0
    assert row["path step"] <= row["screening"] + 1e-9  # the path step is timed inside the path's screening


def test_profile_of_rrpb_over_all_triplets_times_a_margins_pass_and_no_evaluation(iris_tiny, monkeypatch):
    """Without ranges RRPB is a path step over all of T; its floor is one margins pass over every triplet at the
    last solution (its centre is a multiple of M_{t−1}), timed on copies so that nothing is read from a cache."""
    passes = []
    margins = TripletProblem.margins

    def counting(self, M, idx=None):
        passes.append(self.n_triplets if idx is None else len(idx))
        return margins(self, M, idx)
    evaluations = []
    terms = TripletSubset.loss_terms
    monkeypatch.setattr(TripletSubset, "loss_terms", lambda self, *a: evaluations.append(1) or terms(self, *a))
    regularization_path(iris_tiny, bounds=("rrpb",), analysis=False, **PATH)
    on_the_path = len(evaluations)
    evaluations.clear()
    monkeypatch.setattr(TripletProblem, "margins", counting)
    row = profile_path(iris_tiny, ("rrpb",), **PATH)
    assert len(evaluations) == on_the_path  # the floor made no evaluation of its own
    repeats = screening_profile._EVALUATION_REPEATS
    assert passes[-repeats:] == [iris_tiny.n_triplets] * repeats
    assert row["ledger"] == 0 and row["candidates"] == 0 and row["path step"] > 0 and row["floor"] > 0


def test_bench_prints_the_profile(capsys):
    if not REAL["iris.scale"].available():
        pytest.skip("iris.scale (the paper's LIBSVM iris) is not in the data directory")
    assert bench.main(["--profile-screening", "--datasets", "iris", "--max-samples", "18", "--rho", "0.6",
                       "--max-steps", "5", "--methods", "RRPB,PGB", "--clock", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "iris RRPB:" in out and "iris PGB:" in out and "share at the floor" in out

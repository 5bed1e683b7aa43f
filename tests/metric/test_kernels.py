"""The compiled screening kernels (solvers/metric/kernels.py) against the numpy code they replace, on every bound
and rule: the same screened sets, ranges, H_L̂ and subsets; whole screened paths safe and equal to the naive one."""
import math
from dataclasses import replace

import numpy as np
import pytest

from solvers.metric import kernels
from solvers.metric.bounds import DYNAMIC_BOUNDS, dynamic_sphere, relaxed_regularization_path_bound
from solvers.metric.path import regularization_path
from solvers.metric.problem import ReducedProblem, lambda_max
from solvers.metric.ranges import RangeLedger, steps_covered
from solvers.metric.rules import screen
from tests.metric.conftest import tiny
from tests.metric.test_safety import assert_safe

RHO = 0.6


@pytest.fixture(scope="module")
def problem():
    return tiny("iris", 6)


@pytest.fixture(scope="module")
def naive(problem):
    return regularization_path(problem, bounds=(), rho=RHO, tol=1e-10, max_iter=50_000, analysis=False)


def with_kernels(monkeypatch, on: bool) -> None:
    monkeypatch.setattr(kernels, "USE_NUMBA", on)


def test_walked_steps_equal_the_logarithm(monkeypatch):
    """The kernel counts a range's grid steps by walking down the grid; ``steps_covered`` by a logarithm: the
    same counts (ends drawn off the slack-shifted grid points, where rounding could tip either), and the cases
    λ_a ≤ 0 (to the end of the path), ∞ and NaN (no step)."""
    rng = np.random.default_rng(1)
    lam, rho = 2.5, 0.9
    ends = np.concatenate([lam * rho ** rng.uniform(-3, 80, 5_000), [0.0, -1.0, np.inf, np.nan, lam, 1e-300]])
    with np.errstate(invalid="ignore"):  # NaN has no step count in numpy's cast; the kernel says 0
        want = steps_covered(ends.copy(), lam, rho)
    k = kernels.compiled()
    scale = math.exp(-k._STEP_SLACK * math.log(rho))
    got = np.array([k._steps_covered(e, lam, rho, scale) for e in ends])
    want[np.isnan(ends)] = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.log(ends / lam) / math.log(rho) - k._STEP_SLACK
        near_tie = np.abs(z - np.round(z)) < 1e-9
    assert np.array_equal(got[~near_tie], want[~near_tie])
    assert (got > k._WALKED_STEPS).any() and (got < k._WALKED_STEPS).any()  # both branches ran


#: (_TO_BUCKETS, _SETTLE_STEPS, _TO_SCAN) of ``ranges``: the compiled ledger's pass over T only, buckets from
#: step 2 on, and a move at each crossing of half of T.
LEDGER_MODES = {"scan": (0.0, 1, 2.0), "buckets": (2.0, 1, 2.0), "moving": (0.5, 1, 0.5)}


def with_ledger_mode(monkeypatch, mode: str) -> None:
    for name, value in zip(("_TO_BUCKETS", "_SETTLE_STEPS", "_TO_SCAN"), LEDGER_MODES[mode]):
        monkeypatch.setattr(f"solvers.metric.ranges.{name}", value)


@pytest.mark.parametrize("mode", LEDGER_MODES)
@pytest.mark.parametrize("gather_share", [0.0, 1.0], ids=["all-pairs", "gathered"])
def test_ledger_kernel_keeps_the_numpy_ledgers_sets_ranges_and_H_L(problem, naive, gather_share, mode, monkeypatch):
    """Step by step along a path, the compiled ledger and the numpy one screen the same triplets to the same
    side until the same step, leave the same active set with the same margins at M_{t−1}, and keep the same
    H_L̂, up to rounding: the compiled ledger may take its pair values through the samples where numpy reads the
    pair table, and sums H_L̂ in another order. ``gather_share``: the pair values at M_{t−1} over all pairs, or
    only over the pairs the candidates use (``TripletProblem.pair_values_where``); ``mode``: the compiled
    ledger's pass over T, its buckets, or both in turns."""
    monkeypatch.setattr("solvers.metric.problem._GATHER_SHARE", gather_share)
    with_ledger_mode(monkeypatch, mode)
    lams, gaps = naive.table["lam"].to_numpy(), naive.table["gap"].to_numpy()
    ledgers = {on: RangeLedger(problem, RHO, keep_masks=True) for on in (True, False)}
    moved, modes = 0, set()
    for t in range(1, len(lams)):
        reference = None if t == 4 else (naive.solutions[t - 1], lams[t - 1],
                                         math.sqrt(2 * max(gaps[t - 1], 0.0) / lams[t - 1]))
        reduced = {}
        for on, ledger in ledgers.items():
            with_kernels(monkeypatch, on)
            if on:
                modes.add(ledger._records is not None)
            reduced[on] = ledger.step(t, lams[t], reference)
        fast, slow = reduced[True], reduced[False]
        assert np.array_equal(ledgers[True].release, ledgers[False].release), f"step {t}"
        assert np.array_equal(fast.in_L, slow.in_L) and np.array_equal(fast.in_R, slow.in_R)
        assert (fast.n_L, fast.n_R, ledgers[True].n_range) == (slow.n_L, slow.n_R, ledgers[False].n_range)
        order = np.argsort(slow.active.idx)  # numpy appends the released ones; compiled keeps T's order
        assert np.array_equal(fast.active.idx, slow.active.idx[order])
        at_M = slow.active.margins(naive.solutions[t])[order]  # the active sets' own pair indices, used by the solver
        np.testing.assert_allclose(fast.active.margins(naive.solutions[t]), at_M, rtol=1e-12,
                                   atol=1e-12 * max(1.0, np.abs(at_M).max(initial=0.0)))
        if reference is not None:
            margins = slow.known[1][order]
            np.testing.assert_allclose(fast.known[1], margins, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(margins).max()))
        np.testing.assert_allclose(fast.H_L, slow.H_L, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(slow.H_L).max()))
        moved += ledgers[True].n_range
    assert moved > 0  # older ranges covered some steps
    assert modes == {"scan": {False}, "buckets": {False, True}, "moving": {False, True}}[mode]


@pytest.mark.parametrize("mode", ["scan", "buckets"])
@pytest.mark.parametrize("case", [("iris", 6, {}), ("iris", 6, {"diagonal": True})], ids=["full", "diagonal"])
def test_ledger_ranges_are_inside_the_rrpb_rule(case, mode, monkeypatch):
    """At every step of the compiled ledger, every triplet still covered by a range is screened to its side by the
    RRPB sphere rule (Thm 3.10, eq. (4)) at the current λ from the reference its range was computed from; and with
    buckets they hold exactly the covered triplets, each in the bucket of the step its range ends at."""
    with_ledger_mode(monkeypatch, mode)
    name, per_class, params = case
    problem = tiny(name, per_class, **params)
    naive = regularization_path(problem, bounds=(), rho=RHO, tol=1e-10, max_iter=50_000, analysis=False)
    lams, gaps = naive.table["lam"].to_numpy(), naive.table["gap"].to_numpy()
    ledger = RangeLedger(problem, RHO, last_step=len(lams))
    assigned, references = np.zeros(problem.n_triplets, int), {}
    for t in range(1, len(lams)):
        references[t] = (naive.solutions[t - 1], lams[t - 1], math.sqrt(2 * max(gaps[t - 1], 0.0) / lams[t - 1]))
        before = ledger.release.copy()
        ledger.step(t, lams[t], references[t])
        assigned[ledger.release != before] = t
        covered = np.flatnonzero(ledger.release > t)
        for s in np.unique(assigned[covered]):
            idx = covered[assigned[covered] == s]
            M0, lam0, eps = references[s]
            to_L, to_R = screen(problem, relaxed_regularization_path_bound(M0, lam0, lams[t], eps), idx, "sphere")
            assert np.all(np.where(ledger.side_L[idx], to_L, to_R)), f"step {t}: a range from step {s} is unsafe"
        bucketed, b = [], ledger._buckets
        if b is None:
            continue
        for end in range(t + 1, ledger.last_step + 1):
            chunk, records = b["head"][end], []
            while chunk >= 0:
                records.extend(range(chunk * kernels.LEDGER_CHUNK, chunk * kernels.LEDGER_CHUNK + b["fill"][chunk]))
                chunk = b["next_chunk"][chunk]
            idx = b["pool"][records, 0]
            assert len(records) == b["sizes"][end] and np.all(ledger.release[idx] == end), f"bucket {end}"
            assert np.array_equal(b["pool"][records, 3].astype(bool), ledger.side_L[idx])
            assert np.array_equal(b["pool_nu"][records], problem.h_norm[idx])
            bucketed.extend(idx)
        in_horizon = covered[ledger.release[covered] <= ledger.last_step]
        assert np.array_equal(np.sort(bucketed), in_horizon), f"step {t}"
    assert len(covered) > 0 and (ledger._buckets is not None) == (mode == "buckets")


def test_ledger_refuses_a_step_it_has_no_bucket_for(problem):
    ledger = RangeLedger(problem, RHO, last_step=3)
    with pytest.raises(ValueError, match="outside"):
        ledger.step(4, 1.0, None)


@pytest.mark.parametrize("rule", ["sphere", "linear", "sdp"])
@pytest.mark.parametrize("bound", [*DYNAMIC_BOUNDS, "rrpb"])
def test_rule_kernel_gives_the_numpy_verdicts(problem, naive, bound, rule, monkeypatch):
    """Every bound × rule at several points of the path, with a supporting normal for the linear rule where
    the bound has none: the compiled sphere/linear pass and the numpy rules return identical masks; given masks
    an earlier bound filled (``into``), both decide exactly the triplets those leave and add to them; given the
    centre's pair values (``pairs``) in place of its margins, both return the same masks."""
    rp = ReducedProblem.unscreened(problem)
    idx = np.arange(problem.n_triplets)
    lams, gaps = naive.table["lam"].to_numpy(), naive.table["gap"].to_numpy()
    screened = 0
    for s in (2, 6, 12):
        M0, lam0, lam = naive.solutions[s], lams[s], lams[s] * RHO
        if bound == "rrpb":
            sphere = relaxed_regularization_path_bound(M0, lam0, lam, math.sqrt(2 * gaps[s] / lam0))
        else:
            ev = rp.evaluate(M0, lam)
            sphere = dynamic_sphere(bound, rp, ev, lam, rp.gap(ev, lam))
        if sphere.normal is None:
            sphere = replace(sphere, normal=problem.supporting_normal(sphere.center - 0.1 * np.eye(problem.dim)))
        earlier = np.random.default_rng(s).integers(0, 3, idx.size)  # 0: undecided, 1: in L̂, 2: in R̂
        verdicts = {}
        for on in (True, False):
            with_kernels(monkeypatch, on)
            verdicts[on] = screen(problem, sphere, idx, rule)
            into = (earlier == 1, earlier == 2)
            added = screen(problem, sphere, idx, rule, into=into)
            assert added[0] is into[0] and added[1] is into[1]
            undecided = earlier == 0
            assert np.array_equal(added[0], (earlier == 1) | (undecided & verdicts[on][0]))
            assert np.array_equal(added[1], (earlier == 2) | (undecided & verdicts[on][1]))
            everything = problem.everything
            pairs = (everything.pair_values(sphere.center), everything.diff, everything.same)
            from_pairs = screen(problem, sphere, idx, rule, pairs=pairs)
            assert np.array_equal(from_pairs[0], verdicts[on][0]) and np.array_equal(from_pairs[1], verdicts[on][1])
        assert np.array_equal(verdicts[True][0], verdicts[False][0])
        assert np.array_equal(verdicts[True][1], verdicts[False][1])
        screened += int(verdicts[True][0].sum() + verdicts[True][1].sum())
    assert screened > 0


@pytest.mark.parametrize("diagonal", [False, True])
def test_subset_kernel_builds_the_numpy_subset(diagonal, monkeypatch):
    """``TripletSubset.part`` compiled and in numpy: the same triplets, pair table and sums, with and without a
    renumbering of the pairs, from masks and from positions."""
    problem = tiny("wine", 5, diagonal=diagonal)
    rng = np.random.default_rng(2)
    M = np.abs(rng.standard_normal(problem.dim)) if diagonal else np.cov(rng.standard_normal((problem.dim, 50)))
    for share in (1.0, 0.5, 0.02, 0.0):
        keep = rng.uniform(size=problem.n_triplets) < share
        inner_keep = rng.uniform(size=int(keep.sum())) < 0.3
        for selector in (keep, np.flatnonzero(keep)):
            parts = {}
            for on in (True, False):  # a part, and a part of that part (a narrowed active set)
                with_kernels(monkeypatch, on)
                first = problem.everything.part(selector)
                parts[on] = (first, first.part(inner_keep))
            for fast, slow in zip(parts[True], parts[False]):
                assert np.array_equal(fast.idx, slow.idx) and np.array_equal(fast.pair_rows, slow.pair_rows)
                assert np.array_equal(fast.same, slow.same) and np.array_equal(fast.diff, slow.diff)
                np.testing.assert_allclose(fast.margins(M), problem.margins(M, slow.idx), rtol=1e-12, atol=1e-12)
                w = rng.uniform(size=len(fast))
                np.testing.assert_allclose(fast.combine(w), slow.combine(w), rtol=1e-12, atol=1e-10)
    renumbered = problem.everything.part(np.arange(3))
    assert renumbered.pair_rows.size < len(problem.triplets.pairs)  # the renumbering branch ran


@pytest.mark.parametrize("known", [False, True])
def test_narrowing_kernel_builds_the_numpy_reduced_problem(problem, naive, known, monkeypatch):
    """``ReducedProblem.narrowed`` compiled (one pass splits the active triplets and sums the pair weights of the
    change in L̂) and in numpy: the same active set, counts, margins carried over and masks over T, and H_L̂ equal
    up to rounding, from a problem some of whose triplets are screened already, narrowed three times (the
    second and third H_L̂ sum only the triplets that changed sides since the one before)."""
    rng = np.random.default_rng(5)
    M = naive.solutions[6]
    lam = naive.table["lam"].iloc[6]
    first = rng.integers(0, 3, problem.n_triplets)  # 0: active, 1: in L̂, 2: in R̂
    problems = {}
    for on in (True, False):
        with_kernels(monkeypatch, on)
        problems[on] = ReducedProblem(problem, first == 1, first == 2)
        if known:
            problems[on].evaluate(M, lam)
    n_active = len(problems[True].active)
    for stay in (0.0, 0.9, 0.99):  # the share of triplets whose verdict stays as it was
        verdict = rng.integers(0, 3, n_active) if stay == 0 else np.where(
            rng.uniform(size=n_active) < stay, verdict, rng.integers(0, 3, n_active))
        narrowed = {}
        for on in (True, False):
            with_kernels(monkeypatch, on)
            narrowed[on] = problems[on].narrowed(verdict == 1, verdict == 2)
        fast, slow = narrowed[True], narrowed[False]
        assert np.array_equal(fast.active.idx, slow.active.idx)
        assert np.array_equal(fast.active.same, slow.active.same)
        assert (fast.n_L, fast.n_R) == (slow.n_L, slow.n_R) == (int((first == 1).sum() + (verdict == 1).sum()),
                                                              int((first == 2).sum() + (verdict == 2).sum()))
        assert np.array_equal(fast.in_L, slow.in_L) and np.array_equal(fast.in_R, slow.in_R)
        scale = np.abs(slow.H_L).max() * problem.n_triplets
        np.testing.assert_allclose(fast.H_L, slow.H_L, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(fast.H_L, problem.sum_over(fast.in_L, fast.n_L), rtol=0, atol=1e-12 * scale)
        assert (fast.known is None) == (slow.known is None) == (not known)
        if known:
            assert fast.known[0] is M and np.array_equal(fast.known[1], slow.known[1])
            np.testing.assert_allclose(fast.known[1], problem.margins(M, fast.active.idx), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rule", ["sphere", "linear"])
@pytest.mark.parametrize("bounds", [("gb",), ("pgb",), ("dgb",), ("cdgb",), ("rrpb",), ("rrpb", "pgb")], ids="+".join)
def test_numpy_path_is_safe_and_equals_the_compiled_path(problem, naive, bounds, rule, monkeypatch):
    """The safety suite's check on the numpy code (the default runs the compiled kernels): every screened
    triplet is on its side at the naive solution, and both paths reach the naive solutions."""
    tol = 1e-8
    paths = {}
    for on in (False, True):
        with_kernels(monkeypatch, on)
        paths[on] = regularization_path(problem, bounds=bounds, rule=rule, rho=RHO, tol=tol, max_iter=50_000,
                                        keep_masks=True, analysis=False, range_screening="rrpb" in bounds)
    assert_safe(problem, paths[False], naive, tol)
    for s in range(1, min(len(paths[True].solutions), len(naive.solutions))):
        lam = naive.table["lam"].iloc[s]
        bound = sum(math.sqrt(2 * p.table["gap"].iloc[s] / lam) for p in paths.values())
        assert np.linalg.norm(paths[True].solutions[s] - paths[False].solutions[s]) <= bound + 1e-9


@pytest.mark.parametrize("gamma", [0.05, 0.0])
@pytest.mark.parametrize("known", [False, True])
def test_one_pass_loss_terms_equal_numpys(gamma, known, monkeypatch):
    """``triplet_terms`` (margins, α, Σ ℓ and Σ αH in one pass) against numpy's margins, ``dual_alpha``, ``loss``
    and ``combine``, at a point whose margins fall on every piece of the loss (γ = 0: the hinge), and a NaN
    iterate stays NaN (the solver's divergence test reads it)."""
    problem = tiny("iris", 8, gamma=gamma)
    lam_L, K = lambda_max(problem)
    M = K / (0.3 * lam_L)
    subset = problem.everything.part(np.arange(0, problem.n_triplets, 3))
    x = subset.margins(M)
    assert (x < 1 - gamma).any() and (x > 1).any()
    out = {}
    for on in (False, True):
        with_kernels(monkeypatch, on)
        out[on] = subset.loss_terms(M, x.copy() if known else None)
    (x0, a0, l0, S0), (x1, a1, l1, S1) = out[False], out[True]
    scale = np.abs(x0).max()
    np.testing.assert_allclose(x1, x0, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(a1, a0, rtol=0, atol=1e-9)
    assert l1 == pytest.approx(l0, rel=1e-12)
    np.testing.assert_allclose(S1, S0, rtol=0, atol=1e-12 * np.abs(S0).max() * len(subset))
    nan = {}
    for on in (False, True):
        with_kernels(monkeypatch, on)
        nan[on] = subset.loss_terms(M, np.full(len(subset), np.nan))
    assert math.isnan(nan[True][2]) and math.isnan(nan[False][2])
    np.testing.assert_array_equal(nan[True][1], nan[False][1])  # NaN for γ > 0, 0 for the hinge, as numpy


def test_warm_up_compiles_every_kernel(monkeypatch):
    monkeypatch.setattr(kernels, "_warm", False)
    assert kernels.warm_up() > 0
    k = kernels.compiled()
    for kernel in (k.ledger_step, k.candidate_pairs, k.sphere_linear_verdicts, k.split_screened,
                   k.gather_renumber, k.sample_pair_values, k.laplacian_product, k.triplet_terms):
        assert kernel.signatures, kernel
    assert kernels.warm_up() == 0.0  # once per process

"""Property-based checks (hypothesis) of the descent inequalities every iteration must satisfy."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers.sparse import solve

from .conftest import random_problem

problems = st.builds(random_problem, loss=st.sampled_from(["ls", "logistic"]), m=st.integers(5, 30),
                     n=st.integers(3, 25), s=st.integers(1, 3), seed=st.integers(0, 10_000),
                     sparse=st.booleans(), mu=st.sampled_from([1e-10, 1e-2]))


@settings(max_examples=40, deadline=None)
@given(pb=problems, seed=st.integers(0, 10_000))
def test_one_pg_step_satisfies_the_descent_inequality_31(pb, seed):
    """f(w⁺) ≤ f(w) − (1 − λL)/(2λ)‖w⁺ − w‖² for w⁺ = T_PG(w), from any feasible w."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(pb.n) * rng.choice([0.1, 1.0, 10.0])
    w, J = pb.project(z)
    p = pb.point(w, J)
    nxt, res = pb.pg_step(p, pb.full_gradient(p.u, p.w))
    drop = (1 - pb.lam * pb.L) / (2 * pb.lam) * np.sum((nxt.w - w) ** 2)
    assert nxt.f <= p.f - drop + 1e-9 * max(1.0, abs(p.f))
    assert np.count_nonzero(nxt.w) <= pb.s and res >= 0
    assert abs(nxt.f - pb.objective(nxt.w)) <= 1e-9 * max(1.0, abs(nxt.f))  # cached f = direct f


@settings(max_examples=25, deadline=None)
@given(pb=problems, method=st.sampled_from(["apg", "apg+", "apg-ll+"]))
def test_accepted_extrapolations_and_newton_steps_never_increase_f(pb, method):
    h = solve(pb, method, tol=1e-9, max_iter=200).history
    f = h["objective"].to_numpy()
    assert np.all(np.diff(f) <= 1e-9 * np.maximum(1.0, np.abs(f[:-1])))
    acc = h[h["extrapolated"]]
    assert (acc["t_step"] > 0).all() and (acc["t_step"] <= acc["t_hat"] * (1 + 1e-12)).all()

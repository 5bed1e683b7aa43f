"""The path's status says how it ended: converged only when every λ met its gap test and the elasticity test ended
the path (Sec. 5)."""
from solvers.metric.path import regularization_path
from tests.metric.conftest import tiny


def test_a_path_whose_lambdas_hit_max_iter_is_not_converged():
    p = tiny("iris", 6)
    capped = regularization_path(p, bounds=("pgb",), rho=0.6, tol=1e-10, max_iter=5, analysis=False)
    assert capped.status == "max_iter"
    assert capped.n_capped == (capped.table["status"] == "max_iter").sum() > 0
    assert capped.table["iters"].max() == 5  # it ran out of iterations, not of λ steps
    assert len(capped.table) - 1 < 200


def test_a_path_whose_lambdas_all_meet_tol_is_converged():
    p = tiny("iris", 6)
    res = regularization_path(p, bounds=("pgb",), rho=0.6, tol=1e-6, max_iter=10_000, analysis=False)
    assert res.status == "converged" and res.n_capped == 0
    assert (res.table["rel_gap"].iloc[1:] <= 1e-6).all()


def test_a_path_out_of_lambda_steps_is_max_iter_with_every_lambda_solved():
    p = tiny("iris", 6)
    res = regularization_path(p, bounds=("pgb",), rho=0.9, tol=1e-6, max_iter=10_000, max_steps=2, analysis=False)
    assert res.status == "max_iter" and res.n_capped == 0

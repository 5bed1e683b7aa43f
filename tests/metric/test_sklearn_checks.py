"""TripletMetricLearner where scikit-learn's checks (tests/test_sklearn_checks.py runs them for every estimator)
do not reach: a Pipeline with a scaler and a k-NN classifier, and data where K/λ is optimal at every λ
(λ_max = 0).
"""
import numpy as np
from sklearn.datasets import load_iris
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from solvers.metric import TripletMetricLearner
from solvers.metric.problem import ReducedProblem, lambda_max, make_triplet_problem


def test_pipeline_with_scaler_and_knn():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), TripletMetricLearner(), KNeighborsClassifier(3)).fit(X, y)
    assert pipe.score(X, y) >= 0.9


def test_no_positive_margin_gives_the_closed_form_at_every_lambda():
    # Two classes on a line, each spread wider than the gap between them: Σ_t H_t = −392 < 0, so K = 0, every
    # margin is 0 < 1 − γ, α_t = 1 and M* = [Σ_t H_t]_+/λ = 0 at every λ (eq. (9)).
    X = np.array([[0.0], [10.0], [1.0], [11.0]])
    y = np.array([0, 0, 1, 1])
    problem = make_triplet_problem(X, y, k=None, scale=False)
    lam_L, K = lambda_max(problem)
    assert problem.margins(K).max() <= 0 and lam_L == 0.0
    est = TripletMetricLearner(lam=2.0, k=None).fit(X, y)
    np.testing.assert_allclose(est.metric_, K / 2.0, rtol=1e-12, atol=0)
    # K/λ is optimal: the duality gap there is zero up to rounding
    rp = ReducedProblem.unscreened(problem)
    ev = rp.evaluate(K / 2.0, 2.0)
    assert rp.gap(ev, 2.0) <= 1e-12 * max(1.0, abs(ev.primal))

"""scikit-learn's own estimator checks on the sparse estimators built with their defaults (issue 18)."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from solvers.sparse import SparseLinearRegression, SparseLinearRegressionPath, SparseLogisticRegression


@parametrize_with_checks([SparseLinearRegression(), SparseLogisticRegression(), SparseLinearRegressionPath()])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)

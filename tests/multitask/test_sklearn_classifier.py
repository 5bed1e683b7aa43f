"""MultiTaskSubspace with a classification loss declares itself a classifier with binary tasks (its tags
change with ``loss``); scikit-learn's classifier checks hold for it too. The defaults (least squares, a
regressor) are checked with every other estimator in tests/test_sklearn_checks.py."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from solvers.multitask import MultiTaskSubspace


@parametrize_with_checks([MultiTaskSubspace(loss="logistic")])
def test_logistic_multitask_classifier(estimator, check):
    check(estimator)

"""scikit-learn's own estimator checks (the suite it runs on its estimators) for every public npsvc estimator.

No ``expected_failed_checks``: every check must pass. The kernel estimators run with their defaults.
DNPSVC runs with ``epochs=3`` instead of its default 15: with the defaults the 61 checks take about six
minutes on a loaded 2-core machine (and pass, checked by hand: see docs/benchmarks/npsvc.md), with 3 epochs
about two, and the checks exercise the API, not how far training goes.
"""
from sklearn.utils.estimator_checks import parametrize_with_checks

from solvers.npsvc import DNPSVC, KNPSVC, LSTSVM, TWSVM


@parametrize_with_checks([TWSVM(), LSTSVM(), KNPSVC(), DNPSVC(epochs=3)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)

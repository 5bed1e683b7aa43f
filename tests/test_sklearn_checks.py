"""Every public estimator of every family passes scikit-learn's own estimator checks.

The estimators are discovered from each family's ``__all__`` (a new estimator is picked up without editing
this file) and built with their defaults. No check is marked as an expected failure: a check that truly
cannot apply to an estimator is switched off by a tag on that estimator, with the reason written beside it.
"""
from __future__ import annotations

import importlib
import inspect

import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from solvers import FAMILIES

pytestmark = pytest.mark.slow  # about 500 checks; the deep and kernel classifiers take most of the time

MIN_CHECKS = 30  # an estimator that runs fewer checks is not really checked


def public_estimators() -> list[type]:
    """The scikit-learn estimator classes that the families export."""
    found = []
    for family in FAMILIES:
        module = importlib.import_module(f"solvers.{family}")
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found.append(obj)
    return found


ESTIMATORS = [cls() for cls in public_estimators()]


def test_every_family_exports_an_estimator():
    families = {type(est).__module__.split(".")[1] for est in ESTIMATORS}
    assert families == set(FAMILIES)


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_check(estimator, check):
    check(estimator)


def _name(check) -> str:
    return getattr(check, "func", check).__name__


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda est: type(est).__name__)
def test_enough_checks_apply(estimator):
    """Counts the checks that parametrize_with_checks runs above, leaving out the array-API ones: they skip
    unless SCIPY_ARRAY_API=1 is set, so they are not counted as run."""
    names = [_name(check) for _, check in estimator_checks_generator(estimator, legacy=True, mark=None)]
    run = [name for name in names if not name.startswith("check_array_api")]
    assert len(run) >= MIN_CHECKS, f"{type(estimator).__name__} runs only {len(run)} checks: {sorted(set(run))}"

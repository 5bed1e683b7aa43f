"""The one exception type for bad input, raised before any work starts."""


class InputError(ValueError):
    """Input that a solver, loader or page cannot use.

    The message says what is wrong and what to do about it, e.g.
    ``"y has 3 classes; SMM needs exactly 2 (pick a binary task)"``.
    It subclasses ValueError so scikit-learn's conventions (and its estimator
    checks) recognise it.
    """

"""Small pure jobs for the sweep tests (shipped to the workers by value, so the tests need no install)."""
import os
import time

import numpy as np


def noisy_square(config, data=None):
    """x² plus noise drawn from the configuration's seed: same configuration, same number, anywhere."""
    time.sleep(config.get("sleep", 0.0))
    noise = np.random.default_rng(config.get("seed", 0)).standard_normal()
    return {"value": config["x"] ** 2 + noise, "pid": os.getpid()}


def fails_on_three(config, data=None):
    if config["x"] == 3:
        raise ValueError("x = 3 is refused by this job")
    return {"value": float(config["x"])}


def weighted_sum(config, data):
    """Uses the array shipped with the sweep."""
    return {"value": float(np.dot(data, np.arange(len(data)) ** config["power"]))}


def returns_a_config_name(config, data=None):
    return {"x": 1.0}

"""K-NPSVC++ and TWSVM where their ``device`` parameter puts them: the numpy code (knpsvc.py, baselines.py) on
"cpu", the torch path (knpsvc_torch.py, imported only then) on "cuda", and "auto" whichever torch finds. The
numpy modules do not know the torch path, which builds on them, so neither imports the other both ways."""
from __future__ import annotations

from ..core import Result, validate_params
from . import baselines, knpsvc
from .problem import NPSVCProblem


def _device_features(problem: NPSVCProblem, device: str):
    """The kernel features on the device, or None where ``device`` means the numpy code."""
    if device == "cpu":
        return None
    from .knpsvc_torch import device_features

    return device_features(problem, device)  # None: "auto" found no GPU


def run_knpsvc(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, **params) -> Result:
    """Algorithm 1 with numpy, or in torch on a GPU (kernel and Cholesky there: set-up, outside the solver clock)."""
    params = validate_params(knpsvc.KNPSVC_PARAMS, params)
    features = _device_features(problem, params.pop("device"))
    if features is None:
        return knpsvc.run_knpsvc(problem, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                                 **params)
    from .knpsvc_torch import DeviceKNPSVCState

    return knpsvc.iterate_knpsvc(problem, lambda: DeviceKNPSVCState(problem, features, **params), tol=tol,
                                 max_iter=max_iter, time_limit=time_limit, callback=callback)


def run_twsvm(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, c=1.0, r1=0.1,
              tau_p=0.0, device="cpu") -> Result:
    """TWSVM (and pinball TWSVM) with numpy, or in torch on a GPU."""
    features = _device_features(problem, device)
    if features is None:
        return baselines.run_twsvm(problem, tol=tol, max_iter=max_iter, time_limit=time_limit, callback=callback,
                                   c=c, r1=r1, tau_p=tau_p)
    from .knpsvc_torch import DeviceTwinDuals

    return baselines.solve_twin_duals(problem, lambda: DeviceTwinDuals(problem, features, r1), tol=tol,
                                      max_iter=max_iter, time_limit=time_limit, callback=callback, c=c, tau_p=tau_p)

"""The kernel methods' shared parameters (eqs. 5 and 13), apart from their solvers, so that K-NPSVC++ (knpsvc.py)
and the baselines (baselines.py) declare them once and neither imports the other."""
from __future__ import annotations

from ..core import Param
from .deep_params import DEVICES
from .problem import MAX_WEIGHT

C = Param("c", 1.0, float, low=0, low_strict=True, high=MAX_WEIGHT, log=True, ui_range=(1e-3, 1e3),
          help="weight of the dissimilarity loss on the other classes (eq. 5)", symbol="c")
R1 = Param("r1", 0.1, float, low=0, low_strict=True, high=MAX_WEIGHT, log=True, ui_range=(1e-4, 1e3),
           help="ridge on the hyperplane normal w_l (eq. 13)", symbol="r_1")
DEVICE = Param("device", "cpu", str, choices=DEVICES,
               help="cpu: the numpy code (the tested default); cuda: kernel, factorisations, blocks and QPs in torch "
                    "on the GPU (float64; knpsvc_torch.py); auto: cuda when torch sees a GPU, else cpu")

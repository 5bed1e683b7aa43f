"""The method table: each algorithm of seed 001 with its Param specs (the paper's defaults, App. B)."""
from __future__ import annotations

from functools import partial

from ..core import Method
from .accelerated import run_accelerated
from .extrapolation import EXTRAPOLATION_PARAMS
from .grasp import GRASP_PARAMS, run_grasp
from .newton import NEWTON_PARAMS

METHODS: dict[str, Method] = {m.name: m for m in (
    Method("pg", "PG", partial(run_accelerated, base="pg"), (),
           "projected gradient (IHT) with the constant step λ = 0.999/L", "eq. (5), Bertsimas et al. 2016"),
    Method("apg", "APG", partial(run_accelerated, base="pg", extrapolation=True), EXTRAPOLATION_PARAMS,
           "PG plus same-subspace extrapolation with the curvature step (18) and backtracking (12)", "Algorithm 1"),
    Method("pg+", "PG+", partial(run_accelerated, base="pg", newton=True), NEWTON_PARAMS,
           "PG plus subspace identification and Newton-CG steps on the identified subspace", "Algorithm 2"),
    Method("apg+", "APG+", partial(run_accelerated, base="pg", extrapolation=True, newton=True),
           EXTRAPOLATION_PARAMS + NEWTON_PARAMS,
           "Algorithm 2 with Algorithm 1's extrapolation before identification (the paper's main method)",
           "Algorithm 2 + footnote 4"),
    Method("pg-ll", "PG-LL", partial(run_accelerated, base="lilin"), (),
           "Li & Lin's monotone accelerated proximal gradient (2 gradients per iteration)", "Li & Lin 2015, Alg. 1"),
    Method("apg-ll+", "APG-LL+", partial(run_accelerated, base="lilin", extrapolation=True, newton=True),
           EXTRAPOLATION_PARAMS + NEWTON_PARAMS,
           "PG-LL's map inside Algorithms 1 and 2 (our reading of Sec. 4; the paper gives no details)",
           "Sec. 4, Table 1"),
    Method("grasp", "GraSP", run_grasp, GRASP_PARAMS,
           "greedy: restricted minimisation on supp ∪ top-2s gradient entries, then prune to s",
           "Bahmani et al. 2013; App. C.4"),
)}

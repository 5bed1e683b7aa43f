"""Every page's named scenarios, in one place so that Home's lesson order can link to them.

Each preset sets the widgets its claim depends on (keys are the pages' widget keys, values the widgets' own
value types); tests apply each one and check the claim from the page's results.
"""
from __future__ import annotations

from app.ui.presets import Preset

FOUNDATIONS = [
    Preset("heavy-ball-overshoots", "Ill-conditioned quadratic: heavy ball overshoots",
           {"fd.problem.problem": "quadratic", "fd.problem.constraint": "none", "fd.problem.kappa": 1000.0,
            "fd.methods": ["gd", "heavy-ball"], "fd.step": 1.0, "fd.beta": 0.9, "fd.stop.max_iter": 200},
           "With β = 0.9 heavy ball swings past the minimiser x* and back; gradient descent creeps towards it "
           "without ever crossing (press ▶ Play to watch).",),
    Preset("gd-diverges", "Step above 2/L: gradient descent diverges",
           {"fd.problem.problem": "quadratic", "fd.problem.constraint": "none", "fd.problem.kappa": 20.0,
            "fd.methods": ["gd"], "fd.step": 2.2, "fd.stop.max_iter": 200},
           "At α = 2.2/L the steepest direction is multiplied by |1 − αL| = 1.2 > 1 every step: the gap grows "
           "geometrically and the run stops as diverged."),
    Preset("nesterov-beats-gd", "κ = 1000: Nesterov's momentum beats gradient descent",
           {"fd.problem.problem": "quadratic", "fd.problem.constraint": "none", "fd.problem.kappa": 1000.0,
            "fd.methods": ["gd", "nesterov"], "fd.step": 1.0, "fd.stop.max_iter": 500},
           "After 500 iterations Nesterov/FISTA's gap is orders of magnitude below gradient descent's "
           "(Convergence tab): the O(1/k²) against the O(1/k) guide."),
    Preset("rosenbrock-valley", "Rosenbrock: momentum walks the banana valley",
           {"fd.problem.problem": "rosenbrock", "fd.problem.constraint": "none",
            "fd.methods": ["gd", "heavy-ball", "nesterov"], "fd.step": 1.0, "fd.beta": 0.9,
            "fd.stop.max_iter": 2000},
           "In 2000 steps of α = 1/L gradient descent barely enters the curved valley while heavy ball and "
           "Nesterov follow it to within 0.1 of f*."),
]


_MT_DATA = {"mt.data.source": "synthetic", "mt.data.generator": "multitask-subspace",
            "mt.data.gen.multitask-subspace.d": 30, "mt.data.gen.multitask-subspace.h_true": 3}
MULTITASK = [
    Preset("tight-relaxation", "η = 10: M* has exactly h unit eigenvalues",
           {**_MT_DATA, "mt.problem.alpha": 0.1, "mt.problem.beta": 1.0, "mt.problem.h.d30": 3,
            "mt.methods": ["apg", "bcd"]},
           "Structure tab: the eigenvalues of M* are h ones and zeros, σ_h/σ_{h+1} of U* clears the threshold "
           "1 + 1/η, so the convex solution also solves the non-convex problem."),
    Preset("loose-relaxation", "η = 0.1, h below the truth: the relaxation is not tight",
           {**_MT_DATA, "mt.problem.alpha": 0.1, "mt.problem.beta": 0.01, "mt.problem.h.d30": 2,
            "mt.methods": ["apg", "bcd"]},
           "Structure tab: M* keeps fractional eigenvalues strictly between 0 and 1 (the threshold 1 + 1/η = 11 "
           "is not reached), the case the Eq. (14) explorer dissects."),
]
SPARSE = [
    Preset("apg-plus-identifies", "APG+ identifies the support in a few steps",
           {"sp.data.source": "synthetic", "sp.data.generator": "sparse-regression", "sp.problem.loss": "ls",
            "sp.methods": ["pg", "apg+"]},
           "Support & steps tab: APG+'s support stops changing within the first iterations and its Newton phase "
           "finishes in a handful of steps, while PG needs many times more iterations to the same tolerance."),
    Preset("apg-extrapolates", "Extrapolation: APG needs a fraction of PG's gradient evaluations",
           {"sp.data.source": "synthetic", "sp.data.generator": "sparse-regression", "sp.problem.loss": "ls",
            "sp.methods": ["pg", "apg"]},
           "Convergence tab, “GE PG / method” column: APG reaches the same tolerance with several times fewer "
           "gradient evaluations than PG, on the same ℓ0-constrained least squares."),
    Preset("logistic-newton", "Logistic loss: PG hits its cap, APG+ converges in about ten steps",
           {"sp.data.source": "synthetic", "sp.data.generator": "sparse-classification",
            "sp.problem.loss": "logistic", "sp.methods": ["pg", "apg", "apg+"], "sp.stop.max_iter": 2000},
           "The residual (24) of PG is still above ε̂ after 2000 iterations (marked ‘*’), APG needs under a hundred, "
           "and APG+ switches to Newton steps on the identified support and stops within about ten."),
    Preset("correlated-stationary", "Correlated features: fast is not best (ℓ0 is not convex)",
           {"sp.data.source": "synthetic", "sp.data.generator": "sparse-regression",
            "sp.data.gen.sparse-regression.rho": 0.8, "sp.problem.loss": "ls", "sp.methods": ["pg", "apg+", "grasp"]},
           "With feature correlation ρ = 0.8, APG+ stops in a few steps at a stationary point whose objective is "
           "several times PG's: every method finds *a* stationary point of the non-convex problem, not the best one "
           "(Solution tab: true features found)."),
]
PRESETS = {"foundations": FOUNDATIONS, "multitask": MULTITASK, "sparse": SPARSE}

# Home's suggested order for a 50-minute class: (page, preset slug or None, minutes, what to point at)
LESSON = [
    ("foundations", "gd-diverges", 5, "The step size: 2/L is the line between converging and diverging."),
    ("foundations", "heavy-ball-overshoots", 7, "Momentum: heavy ball overshoots on an ill-conditioned "
                                                "quadratic; press “Use β*” for the optimal momentum."),
    ("foundations", "nesterov-beats-gd", 5, "Acceleration: O(1/k²) against O(1/k) on the Convergence tab."),
    ("foundations", "rosenbrock-valley", 3, "Non-convex: momentum follows the curved valley."),
    ("sparse", "apg-plus-identifies", 7, "Projection onto the ℓ0 ball, extrapolation and Newton steps once "
                                         "the support is found."),
    ("sparse", "correlated-stationary", 3, "Non-convex again: the fastest method can stop at a worse support."),
    ("multitask", "tight-relaxation", 7, "A convex relaxation that is exact: the spectrum of M*."),
    ("multitask", "loose-relaxation", 3, "…and when it is not."),
    ("smm", "as-beats-warm", 4, "Nuclear-norm classifiers: ALM-SNCG against ADMMs."),
    ("metric", None, 3, "Safe screening: triplets removed before solving."),
    ("npsvc", "pareto-worst-class", 3, "Several objectives at once: Pareto weights per class."),
]

SMM = [
    Preset("as-beats-warm", "Adaptive sieving beats warm start on the C path",
           {"smm.data.source": "synthetic", "smm.data_limits.n_max": 3000, "smm.path.points": 10,
            "smm.path.C_low": 0.1, "smm.path.C_high": 100.0, "smm.path.path_tol": 1e-4, "smm.view": "Path"},
           "Path tab, press **Compute the path**: after the first C, AS+ALM solves each C on a subset of the "
           "samples (Samples in the solved problem: 42% of them on average at 3000 × 30 × 30) and reaches the "
           "same objective as Warm+ALM, in less time per grid point (the chart shows the ratio measured on your "
           "run; the paper's Table 6 reports 2.7× at ε = 1e-4)."),
]
PRESETS["smm"] = SMM

NPSVC = [
    Preset("pareto-worst-class", "Pareto weights balance the worst class",
           {"np.data.source": "bundled", "np.data.bundled": "digits", "np.problem.max_train": 300,
            "np.methods": ["dnpsvc", "fixed-tau"], "np.m.dnpsvc.gamma": 0.1, "np.m.dnpsvc.beta": 0.1, "np.m.dnpsvc.epochs": 15,
            "np.m.dnpsvc.seed": 0, "np.m.fixed-tau.epochs": 15, "np.m.fixed-tau.seed": 0},
           "Pareto weights tab: with γ_max = 0.1 and β = 0.1 the weights τ lean towards the classes whose objective J_l is "
           "largest, and after 15 epochs D-NPSVC++'s worst class objective max_l J_l is well below that of "
           "DTWSVN (the same network with τ = 1/K); the radar (Fig. A.4) shows every class. Part of the gap is "
           "Algorithm 2's second encoder step, which DTWSVN does not take (docs/benchmarks/npsvc.md); against "
           "that step alone (β → 0) the mean J_l is the same and only the worst classes fall."),
]
PRESETS["npsvc"] = NPSVC

"""scikit-learn style classifiers over the family's solvers: TWSVM, LSTSVM, KNPSVC, DNPSVC.

Each ``fit`` builds an NPSVCProblem from the arrays (no split, no scaling: put a StandardScaler
in a Pipeline if wanted), runs ``solve`` and keeps ``history_`` and ``result_``.
``decision_function`` returns minus the distance to each class's hyperplane, |f_l|/‖w̃_l‖
(eq. 21), so that larger means more likely (for two classes: d₀ − d₁, positive for classes_[1]).
``transform`` gives the learned features: z(x) = P̂ᵀψ(x) for KNPSVC, the encoder output z(x)
for DNPSVC, and the K hyperplane distances for the baselines, which learn no representation.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core import InputError
from .knpsvc import OFFICIAL_MAX_ITER
from .problem import check_problem_inputs, problem_from_arrays

CRITERION_METHODS = {"npsvc++": "dnpsvc", "fixed": "fixed-tau", "ce": "cross-entropy"}


def validated_training_data(est, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's validation (its messages, as InputError), then the family's label checks."""
    try:
        X, y = validate_data(est, X, y, ensure_min_samples=2, dtype=np.float64)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(str(exc)) from None
    X, classes, _ = check_problem_inputs(X, y, what=type(est).__name__)
    return X, y, classes


def validated_input(est, X) -> np.ndarray:
    try:
        return validate_data(est, X, reset=False, dtype=np.float64)
    except ValueError as exc:
        raise InputError(str(exc)) from None


class _KernelNPSVC(ClassifierMixin, TransformerMixin, BaseEstimator):
    _method = ""

    def _solver_params(self) -> dict:
        raise NotImplementedError

    def fit(self, X, y):
        from . import solve  # the package's entry point; imported here to avoid an import cycle

        X, y, classes = validated_training_data(self, X, y)
        problem = problem_from_arrays(X, y, kernel=self.kernel, width=self.width, degree=self.degree,
                                      coef0=self.coef0, bias=self.bias, strategy=self.strategy)
        self.result_ = solve(problem, self._method, tol=self.tol, max_iter=self.max_iter, **self._solver_params())
        self.classes_ = classes
        self.problem_ = problem
        self.history_ = self.result_.history
        self.n_iter_ = self.result_.info["n_iter"]
        return self

    def _features(self, X) -> np.ndarray:
        check_is_fitted(self, "result_")
        return self.problem_.features(validated_input(self, X))

    def _distances(self, X) -> np.ndarray:
        Z = self._features(X)
        sol = self.result_.solution
        return np.abs(Z @ sol["U"]) / np.maximum(sol["norms"], 1e-300)

    def decision_function(self, X) -> np.ndarray:
        D = self._distances(X)
        score = -D if self.strategy == "ovr" else D
        return score[:, 1] - score[:, 0] if len(self.classes_) == 2 else score

    def predict(self, X) -> np.ndarray:
        D = self._distances(X)
        codes = D.argmin(1) if self.strategy == "ovr" else D.argmax(1)
        return self.classes_[codes]

    def transform(self, X) -> np.ndarray:
        return self._distances(X)


class TWSVM(_KernelNPSVC):
    """Twin bounded SVM (TBSVM form), one hyperplane per class, nearest-hyperplane rule."""

    _method = "twsvm"

    def __init__(self, kernel="rbf", width=0.0, degree=2, coef0=1.0, bias=True, strategy="ovr", c=1.0, r1=0.1,
                 tol=1e-6, max_iter=2000):
        self.kernel, self.width, self.degree, self.coef0, self.bias = kernel, width, degree, coef0, bias
        self.strategy, self.c, self.r1, self.tol, self.max_iter = strategy, c, r1, tol, max_iter

    def _solver_params(self) -> dict:
        return {"c": self.c, "r1": self.r1}


class LSTSVM(TWSVM):
    """Least-squares twin SVM: each hyperplane from one linear system."""

    _method = "lstsvm"


class KNPSVC(_KernelNPSVC):
    """K-NPSVC++ (Algorithm 1): hyperplanes on [φ(x); z(x)] with a shared learned z = P̂ᵀψ(x).

    A fit stops when the relative duality gap and the relative change of max_l J_l over the last outer iteration
    are both ≤ ``tol``, or after ``max_iter`` outer iterations (the official code's 10, which default fits reach)."""

    _method = "knpsvc"

    def __init__(self, kernel="rbf", width=0.0, degree=2, coef0=1.0, bias=True, strategy="ovr", c=1.0, r1=0.1,
                 r2=0.1, mu=1e-3, d=0, gamma=0.1, eta=0.1, beta=0.75, gpi_iter=25, inner_tol=1e-6, seed=0,
                 tol=1e-6, max_iter=OFFICIAL_MAX_ITER):
        self.kernel, self.width, self.degree, self.coef0, self.bias = kernel, width, degree, coef0, bias
        self.strategy, self.c, self.r1, self.r2, self.mu, self.d = strategy, c, r1, r2, mu, d
        self.gamma, self.eta, self.beta, self.gpi_iter, self.inner_tol = gamma, eta, beta, gpi_iter, inner_tol
        self.seed, self.tol, self.max_iter = seed, tol, max_iter

    def _solver_params(self) -> dict:
        names = ("c", "r1", "r2", "mu", "d", "gamma", "eta", "beta", "gpi_iter", "inner_tol", "seed")
        return {k: getattr(self, k) for k in names}

    def transform(self, X) -> np.ndarray:
        return self._features(X) @ self.result_.solution["P"]


class DNPSVC(ClassifierMixin, TransformerMixin, BaseEstimator):
    """D-NPSVC++ (Algorithm 2) in torch; ``criterion`` "fixed" / "ce" give the same-network baselines."""

    def __init__(self, criterion="npsvc++", prior="mlp", hypothesis="full", epochs=15, batch_size=64, lr=0.1,
                 weight_decay=1e-4, c=1.0, margin=4.0, gamma=0.01, beta=0.01, hidden=128, z_dim=32, dropout=0.1,
                 finetune=0.2, shared_step=True, second_lr=1.0, tau_bn="train", normalize_heads=True, threads=1,
                 device="cpu", cuda_graphs=True, bf16=False, seed=0, image_shape=None):
        self.criterion, self.prior, self.hypothesis, self.epochs = criterion, prior, hypothesis, epochs
        self.batch_size, self.lr, self.weight_decay, self.c, self.margin = batch_size, lr, weight_decay, c, margin
        self.gamma, self.beta, self.hidden, self.z_dim, self.dropout = gamma, beta, hidden, z_dim, dropout
        self.finetune, self.normalize_heads, self.threads, self.seed = finetune, normalize_heads, threads, seed
        self.shared_step, self.second_lr, self.tau_bn = shared_step, second_lr, tau_bn
        self.device, self.cuda_graphs, self.bf16, self.image_shape = device, cuda_graphs, bf16, image_shape

    def fit(self, X, y, X_test=None, y_test=None):
        """Train; optional held-out (X_test, y_test) fill the history's test_acc column."""
        from . import solve

        X, y, classes = validated_training_data(self, X, y)
        if X_test is not None and not set(np.unique(y_test)) <= set(classes):
            raise InputError("y_test has classes that are not in y")
        problem = problem_from_arrays(X, y, kernel="linear", X_test=X_test, y_test=y_test, classes=classes,
                                      image_shape=self.image_shape, kernel_memory=False)
        params = {k: getattr(self, k) for k in ("prior", "hypothesis", "epochs", "batch_size", "lr",
                                                "weight_decay", "c", "margin", "gamma", "beta", "hidden", "z_dim",
                                                "dropout", "finetune", "shared_step", "second_lr", "tau_bn", "normalize_heads",
                                                "threads", "device", "cuda_graphs", "bf16", "seed")}
        if self.criterion not in CRITERION_METHODS:
            raise InputError(f"criterion must be one of {', '.join(CRITERION_METHODS)}, got {self.criterion!r}")
        self.result_ = solve(problem, CRITERION_METHODS[self.criterion], tol=1e-12, max_iter=self.epochs, **params)
        self.classes_ = classes
        self.history_ = self.result_.history
        return self

    def _check(self, X) -> np.ndarray:
        check_is_fitted(self, "result_")
        return validated_input(self, X)

    def decision_function(self, X) -> np.ndarray:
        from .dnpsvc import deep_scores  # torch: a fitted DNPSVC has loaded it already

        X = self._check(X)
        F = deep_scores(self.result_.solution["net"], X).astype(np.float64)
        if self.criterion != "ce":
            net = self.result_.solution["net"]
            norms = net.heads.weight.norm(dim=1).detach().numpy() if self.normalize_heads else 1.0
            F = -np.abs(F) / norms
        return F[:, 1] - F[:, 0] if len(self.classes_) == 2 else F

    def predict(self, X) -> np.ndarray:
        from .dnpsvc import deep_predict

        X = self._check(X)
        return self.classes_[deep_predict(self.result_.solution, X)]

    def transform(self, X) -> np.ndarray:
        """z(x) as float64, the dtype every input is validated to (the network computes in float32)."""
        from .dnpsvc import deep_features

        X = self._check(X)
        return deep_features(self.result_.solution["net"], X).astype(np.float64)

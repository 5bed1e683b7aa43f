"""D-NPSVC++: the deep model of seed 004 (Algorithm 2), in torch on the CPU (or a GPU if torch sees one).

Architecture (§4.2, Fig. A.1, scaled down as in the digest's §7.3): a prior encoder φ (identity
on the input for ``prior="mlp"``, or a small CNN built from torch.nn for images), a shared encoder
z = MLP(φ) (FC → Dropout → BN → ReLU, twice), the skip connection z̃ = LN([φ; z]) and K heads
f_l = w̃_lᵀz̃ (eq. 22). ``hypothesis`` selects the ablation of Fig. 4: "full" ([φ; z]), "z" or "phi".

Per mini-batch B (Alg. 2), with ℓ_s(a) = ½a² and ℓ_d(a) = ½[s − a]₊² (App. C.2.2):

    J_l = (1/|B|)[Σ_{y_i=l} ℓ_s(f_il) + (c/(K−1)) Σ_{y_i≠l} ℓ_d(f_il)]            (line 8)
    θ-step (eq. 10): one optimiser step on τᵀJ for all parameters;
    τ-step (eqs. 23–26): heads frozen, τ* = argmin_{τ∈Δ} ½‖Σ τ_l ∇_{Z_B}J_l‖² − γ_p τᵀJ,
        τ ← βτ* + (1 − β)τ, then a second step on τᵀJ for the shared parameters only.

∇_{Z_B}J_l is taken by autograd with respect to the representation that feeds the heads
(z for "full" and "z", φ for "phi"), the low-dimensional surrogate of eq. (24).
γ_p = (γ_max/2)(1 + cos(pπ/T)) + 1e-8 over the epochs p = 0..T−1; the learning rate follows
cosine annealing to 1e-5; the CNN prior is trained for the first ``finetune`` fraction of the
epochs and frozen afterwards (the paper fine-tunes ResNet34 for 10 of 50 epochs).

Same-network baselines: ``criterion="fixed"`` keeps τ = 1/K with no τ-step (DTWSVN, eq. A.15),
``criterion="ce"`` trains the heads as softmax logits with cross-entropy.

Each epoch records J_l over the whole training set in eval mode (eq. A.14, the quantity of
Fig. A.4), primal max_l J_l, dual τᵀJ, gap, τ, the mean feasibility ½‖Σ τ_l∇_Z J_l‖² of the
τ-steps, train and test accuracy. Runs are deterministic under ``seed``: torch.manual_seed,
torch.use_deterministic_algorithms and a fixed number of threads, restored afterwards.
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np
import torch
from torch import nn

from ..core import HistoryRecorder, InputError, Param, Result
from .problem import NPSVCProblem, chebyshev_columns
from .qp import simplex_qp

CRITERIA = ("npsvc++", "fixed", "ce")
HYPOTHESES = ("full", "z", "phi")
PRIORS = ("mlp", "cnn")

DNPSVC_PARAMS = (
    Param("criterion", "npsvc++", str, choices=CRITERIA,
          help="npsvc++: Pareto weights τ (Alg. 2); fixed: τ = 1/K (DTWSVN); ce: cross-entropy"),
    Param("prior", "mlp", str, choices=PRIORS, help="prior encoder φ: identity (mlp) or a small CNN for images"),
    Param("hypothesis", "full", str, choices=HYPOTHESES, help="heads on [φ; z] (eq. 22), on z only, or on φ only"),
    Param("epochs", 15, int, low=1, high=500, help="passes over the training set", symbol="T"),
    Param("batch_size", 64, int, low=2, high=4096, help="mini-batch size |B|"),
    Param("lr", 0.1, float, low=0, low_strict=True, log=True, ui_range=(1e-4, 1.0),
          help="initial SGD learning rate (momentum 0.9, cosine annealing)", symbol=r"\alpha"),
    Param("weight_decay", 1e-4, float, low=0, ui_range=(0.0, 1e-2), help="SGD weight decay (App. C.2.2)"),
    Param("c", 1.0, float, low=0, low_strict=True, log=True, ui_range=(1e-3, 1e3),
          help="weight of the dissimilarity loss (Alg. 2 line 8)", symbol="c"),
    Param("margin", 4.0, float, low=0, low_strict=True, ui_range=(0.1, 20.0),
          help="margin s of ℓ_d(a) = ½[s − a]₊² (not given in the paper; s = 1 stalls near the constant "
               "solution f_l ≡ s/2 on small data, the official demo uses 16)", symbol="s"),
    Param("gamma", 0.01, float, low=0, ui_range=(0.0, 10.0),
          help="γ_max of the cosine γ schedule (eq. 25); the paper gives none. ∇_Z J_l is O(1/|B|) here, so "
               "γ ≳ 0.1 makes τ* a vertex (all weight on the largest J_l); measured on digits: 0.01 best",
          symbol=r"\gamma"),
    Param("beta", 0.85, float, low=0, low_strict=True, high=1, help="τ momentum (eq. 26; paper 0.85)",
          symbol=r"\beta"),
    Param("hidden", 128, int, low=4, high=2048, help="width of the encoder's hidden layer"),
    Param("z_dim", 32, int, low=2, high=1024, help="dimension of the learned features z", symbol="d"),
    Param("dropout", 0.1, float, low=0, high=0.9, help="dropout in the encoder"),
    Param("finetune", 0.2, float, low=0, high=1, help="fraction of epochs the CNN prior is trained, then frozen"),
    Param("normalize_heads", True, bool, help="predict by |f_l|/‖w̃_l‖ (eq. 21) rather than |f_l| (official code)"),
    Param("threads", 1, int, low=1, high=64, help="torch CPU threads"),
    Param("seed", 0, int, low=0, high=2**31 - 1, help="seed of the weights and the batch order"),
)


# -- the network --------------------------------------------------------------
class CNNPrior(nn.Module):
    """Conv(1→16,3) → BN → ReLU → Conv(16→32,3) → BN → ReLU → MaxPool(2) → Linear(→64) (§7.3 variant B)."""

    def __init__(self, image_shape: tuple[int, int], out_dim: int = 64):
        super().__init__()
        h, w = image_shape
        self.image_shape = image_shape
        self.body = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * (h // 2) * (w // 2), out_dim),
        )
        self.out_dim = out_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.view(-1, 1, *self.image_shape))


class NPSVCNet(nn.Module):
    """φ, z = MLP(φ), LN over the head input, and K linear heads (eq. 22, Fig. A.1)."""

    def __init__(self, n_features: int, n_classes: int, *, prior: str, hypothesis: str, hidden: int, z_dim: int,
                 dropout: float, image_shape=None):
        super().__init__()
        self.hypothesis = hypothesis
        self.prior = CNNPrior(image_shape) if prior == "cnn" else nn.Identity()
        phi_dim = self.prior.out_dim if prior == "cnn" else n_features
        self.encoder = nn.Sequential(
            nn.Linear(phi_dim, hidden), nn.Dropout(dropout), nn.BatchNorm1d(hidden), nn.ReLU(),
            nn.Linear(hidden, z_dim), nn.Dropout(dropout), nn.BatchNorm1d(z_dim), nn.ReLU(),
        )
        head_dim = {"full": phi_dim + z_dim, "z": z_dim, "phi": phi_dim}[hypothesis]
        self.norm = nn.LayerNorm(head_dim)
        self.heads = nn.Linear(head_dim, n_classes)

    def representation(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(φ(x), z(x)): the prior and the learned shared features."""
        phi = self.prior(x)
        return phi, self.encoder(phi)

    def head_input(self, phi: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return {"full": lambda: torch.cat([phi, z], 1), "z": lambda: z, "phi": lambda: phi}[self.hypothesis]()

    def scores_from(self, phi: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.heads(self.norm(self.head_input(phi, z)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scores_from(*self.representation(x))


# -- losses and prediction ------------------------------------------------------
def batch_objectives(F: torch.Tensor, y: torch.Tensor, c: float, margin: float) -> torch.Tensor:
    """J_l for every class on a batch (Alg. 2 line 8; over the whole set it is eq. A.14)."""
    n, K = F.shape
    own = nn.functional.one_hot(y, K).to(F.dtype)
    similarity = 0.5 * F**2
    dissimilarity = 0.5 * torch.clamp(margin - F, min=0.0) ** 2
    return ((own * similarity).sum(0) + (c / max(K - 1, 1)) * ((1 - own) * dissimilarity).sum(0)) / n


def predict_from_scores(F: torch.Tensor, head_norms: torch.Tensor | None, criterion: str) -> torch.Tensor:
    if criterion == "ce":
        return F.argmax(1)
    distance = F.abs() if head_norms is None else F.abs() / head_norms
    return distance.argmin(1)


@contextlib.contextmanager
def deterministic_torch(seed: int, threads: int):
    """Seeded, deterministic torch on a fixed number of threads; global settings restored on exit."""
    previous = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0])
        torch.set_num_threads(previous[1])


def _device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# -- training -----------------------------------------------------------------
class Trainer:
    """Holds the network, optimiser and τ; one call of ``epoch`` runs Algorithm 2 over the data once."""

    def __init__(self, problem: NPSVCProblem, p: dict):
        self.p, self.K = p, problem.n_classes
        self.device = _device()
        dev = self.device
        self.X = torch.as_tensor(problem.X_train, dtype=torch.float32, device=dev)
        self.y = torch.as_tensor(problem.y_train, dtype=torch.long, device=dev)
        self.X_test = torch.as_tensor(problem.X_test, dtype=torch.float32, device=dev)
        self.y_test = torch.as_tensor(problem.y_test, dtype=torch.long, device=dev)
        self.net = NPSVCNet(self.X.shape[1], self.K, prior=p["prior"], hypothesis=p["hypothesis"],
                            hidden=p["hidden"], z_dim=p["z_dim"], dropout=p["dropout"],
                            image_shape=problem.image_shape).to(dev)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=p["lr"], momentum=0.9, weight_decay=p["weight_decay"])
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=p["epochs"], eta_min=1e-5)
        self.generator = torch.Generator().manual_seed(p["seed"])
        self.tau = np.full(self.K, 1.0 / self.K)
        self.last_lr = p["lr"]

    def gamma_at(self, epoch: int) -> float:
        return 0.5 * self.p["gamma"] * (1.0 + math.cos(epoch * math.pi / self.p["epochs"])) + 1e-8

    def _loss(self, F: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.p["criterion"] == "ce":
            return nn.functional.cross_entropy(F, y), None
        J = batch_objectives(F, y, self.p["c"], self.p["margin"])
        return torch.dot(torch.as_tensor(self.tau, dtype=F.dtype, device=F.device), J), J

    def _tau_step(self, xb: torch.Tensor, yb: torch.Tensor, gamma: float) -> float:
        """Heads frozen: τ-step (eqs. 25–26), then a step on τᵀJ for the shared parameters."""
        self.net.heads.requires_grad_(False)
        phi, z = self.net.representation(xb)
        if self.p["hypothesis"] == "phi" and not phi.requires_grad:  # identity prior: differentiate at the input
            phi = phi.detach().requires_grad_(True)
        shared = phi if self.p["hypothesis"] == "phi" else z
        J = batch_objectives(self.net.scores_from(phi, z), yb, self.p["c"], self.p["margin"])
        grads = torch.autograd.grad(J, shared, grad_outputs=torch.eye(self.K, device=J.device),
                                    is_grads_batched=True, retain_graph=True)[0].reshape(self.K, -1)
        gram = (grads @ grads.T).double().cpu().numpy()
        Jn = J.detach().double().cpu().numpy()
        if not (np.isfinite(gram).all() and np.isfinite(Jn).all()):  # diverged: the epoch's record says so
            self.net.heads.requires_grad_(True)
            return float("nan")
        tau_star = simplex_qp(gram + 1e-12 * np.eye(self.K), -gamma * Jn, self.tau)
        self.tau = self.p["beta"] * tau_star + (1.0 - self.p["beta"]) * self.tau
        tau_t = torch.as_tensor(self.tau, dtype=J.dtype, device=J.device)
        common = tau_t @ grads
        self.opt.zero_grad(set_to_none=True)
        torch.dot(tau_t, J).backward()
        self.opt.step()
        self.net.heads.requires_grad_(True)
        return 0.5 * float(common @ common)

    def epoch(self, epoch: int) -> float:
        """One pass of Algorithm 2; returns the mean feasibility ½‖Σ τ_l∇_Z J_l‖² of its τ-steps."""
        p = self.p
        if p["prior"] == "cnn" and epoch == int(round(p["finetune"] * p["epochs"])):
            self.net.prior.requires_grad_(False)  # prior fine-tuned first, then frozen (App. C.2.2)
        self.net.train()
        gamma = self.gamma_at(epoch)
        order = torch.randperm(len(self.y), generator=self.generator).to(self.device)
        feasibility = []
        for start in range(0, len(order), p["batch_size"]):
            idx = order[start:start + p["batch_size"]]
            if len(idx) < 2:  # BatchNorm needs two samples
                continue
            xb, yb = self.X[idx], self.y[idx]
            loss, _ = self._loss(self.net(xb), yb)  # θ-step (eq. 10)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            if p["criterion"] == "npsvc++":
                feasibility.append(self._tau_step(xb, yb, gamma))
        self.last_lr = self.opt.param_groups[0]["lr"]
        self.sched.step()
        return float(np.mean(feasibility)) if feasibility else float("nan")

    @torch.no_grad()
    def evaluate(self) -> tuple[np.ndarray, float, float]:
        """J_l on the whole training set (eq. A.14), train and test accuracy, in eval mode."""
        self.net.eval()
        F = self.net(self.X)
        J = batch_objectives(F, self.y, self.p["c"], self.p["margin"]).double().cpu().numpy()
        norms = self.head_norms()
        train = float((predict_from_scores(F, norms, self.p["criterion"]) == self.y).float().mean())
        test = float("nan")
        if len(self.y_test):
            pred = predict_from_scores(self.net(self.X_test), norms, self.p["criterion"])
            test = float((pred == self.y_test).float().mean())
        return J, train, test

    def head_norms(self) -> torch.Tensor | None:
        return self.net.heads.weight.norm(dim=1) if self.p["normalize_heads"] else None


def check_deep_inputs(problem: NPSVCProblem, p: dict) -> None:
    if p["prior"] == "cnn" and problem.image_shape is None:
        raise InputError(f"{problem.name} has no image shape; the CNN prior needs images (use prior='mlp')")
    if p["prior"] == "cnn" and min(problem.image_shape) < 2:
        raise InputError(f"images of shape {problem.image_shape} are too small for the CNN prior")
    if problem.n_train < 2:
        raise InputError("D-NPSVC++ needs at least 2 training samples (BatchNorm)")


def run_dnpsvc(problem: NPSVCProblem, *, tol, max_iter, time_limit=None, callback=None, **params) -> Result:
    """Train for min(epochs, max_iter) epochs; one history row per epoch (row 0 = initial network)."""
    check_deep_inputs(problem, params)
    n_epochs = min(params["epochs"], max_iter)
    with deterministic_torch(params["seed"], params["threads"]):
        trainer = Trainer(problem, params)
        rec = HistoryRecorder(tol=tol, max_iter=n_epochs, time_limit=time_limit, callback=callback,
                              measure="optimality")

        def record(epoch: int, feasibility: float) -> str | None:
            with rec.excluded():
                J, train_acc, test_acc = trainer.evaluate()
            primal = float(J.max())
            return rec.record(epoch, objective=primal,
                              optimality=(primal - float(trainer.tau @ J)) / max(1.0, abs(primal)),
                              feasibility=feasibility, train_acc=train_acc, test_acc=test_acc,
                              lr=trainer.last_lr, gamma=trainer.gamma_at(max(epoch - 1, 0)),
                              **chebyshev_columns(J, trainer.tau))

        if not record(0, float("nan")):  # row 0: the untrained network
            for epoch in itertools.count(1):
                if record(epoch, trainer.epoch(epoch - 1)):
                    break
        trainer.net.eval()
        return rec.result({"net": trainer.net.cpu(), "tau": trainer.tau.copy(), "criterion": params["criterion"],
                           "normalize_heads": params["normalize_heads"]}, n_epochs=int(rec.rows[-1]["iter"]))


@torch.no_grad()
def deep_scores(net: NPSVCNet, X: np.ndarray) -> np.ndarray:
    net.eval()
    return net(torch.as_tensor(X, dtype=torch.float32)).numpy()


@torch.no_grad()
def deep_features(net: NPSVCNet, X: np.ndarray) -> np.ndarray:
    """The learned representation z(x) (the encoder output)."""
    net.eval()
    return net.representation(torch.as_tensor(X, dtype=torch.float32))[1].numpy()


def deep_predict(solution: dict, X: np.ndarray) -> np.ndarray:
    F = torch.as_tensor(deep_scores(solution["net"], X))
    norms = solution["net"].heads.weight.norm(dim=1) if solution["normalize_heads"] else None
    return predict_from_scores(F, norms, solution["criterion"]).numpy()

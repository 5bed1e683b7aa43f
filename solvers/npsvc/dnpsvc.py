"""D-NPSVC++: the deep model of seed 004 (Algorithm 2), in torch on the CPU or a GPU (``device``).

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
τ-steps, train and test accuracy. A run stops before its epochs are done only when the relative gap and the
relative change of max J over the last epoch are both ≤ tol (``optimality``, as K-NPSVC++'s). Runs are
deterministic under ``seed``: torch.manual_seed, torch.use_deterministic_algorithms and a fixed number of threads,
restored afterwards.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import math

import numpy as np
import torch
from torch import nn

from ..core import HistoryRecorder, InputError, Result, relative_change, validate_params
from ..core.device import resolve_device, synchronize
from .deep_params import DNPSVC_PARAMS
from .graph_replay import EpochReplay
from .problem import NPSVCProblem, chebyshev_columns, problem_from_arrays
from .qp import simplex_qp
from .torch_qp import simplex_qp_device

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
def deterministic_torch(seed: int, threads: int, device: torch.device | None = None):
    """Seeded, deterministic torch on a fixed number of threads; global settings restored on exit.

    On CUDA the deterministic switch only warns where a kernel has no deterministic variant (and
    cuBLAS needs CUBLAS_WORKSPACE_CONFIG for bitwise repeatability), so GPU runs are seeded but
    not promised to be bit-identical. There the switch's filling of every new tensor with NaN is
    turned off: it guards against reading memory nothing wrote, which no step here does, and it was
    a third of a D-NPSVC++ mini-batch's kernels (torch.profiler's operator count on the CPU: 304 of
    842 operator calls per step, 86 of 240 for cross-entropy).
    """
    on_cuda = device is not None and device.type == "cuda"
    previous = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.get_num_threads(), torch.utils.deterministic.fill_uninitialized_memory)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=on_cuda)
    torch.utils.deterministic.fill_uninitialized_memory = not on_cuda
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
        torch.set_num_threads(previous[2])
        torch.utils.deterministic.fill_uninitialized_memory = previous[3]


# -- training -----------------------------------------------------------------
class Trainer:
    """Holds the network, optimiser and τ; one call of ``epoch`` runs Algorithm 2 over the data once.

    Everything a mini-batch touches lives on ``device``: the data are moved there once, τ is a
    device tensor, the feasibility is summed there and read once per epoch, and on a GPU the simplex
    QP runs in torch (torch_qp.py: exact over the simplex's faces for K ≤ 12, FISTA beyond), so the
    batch loop never waits on the host. On the CPU the host *is* the device, and the exact active-set
    QP (qp.simplex_qp) is cheaper than either; ``qp_on_device`` switches (tests force the device path
    on the CPU). On CUDA the full batches of an epoch are replayed from a CUDA graph (graph_replay.py,
    ``cuda_graphs``), which is why τ, its warm start and the feasibility sum are updated in place.
    """

    def __init__(self, problem: NPSVCProblem, p: dict, device: torch.device | None = None):
        self.p, self.K = p, problem.n_classes
        self.device = dev = device if device is not None else resolve_device(p["device"])
        self.qp_on_device = dev.type != "cpu"
        # np.array copies, so a read-only input (a memmap) never becomes a tensor torch might write to
        self.X = torch.from_numpy(np.array(problem.X_train, dtype=np.float32)).to(dev)
        self.y = torch.from_numpy(np.array(problem.y_train, dtype=np.int64)).to(dev)
        self.X_test = torch.from_numpy(np.array(problem.X_test, dtype=np.float32)).to(dev)
        self.y_test = torch.from_numpy(np.array(problem.y_test, dtype=np.int64)).to(dev)
        self.net = NPSVCNet(self.X.shape[1], self.K, prior=p["prior"], hypothesis=p["hypothesis"],
                            hidden=p["hidden"], z_dim=p["z_dim"], dropout=p["dropout"],
                            image_shape=problem.image_shape).to(dev)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=p["lr"], momentum=0.9, weight_decay=p["weight_decay"])
        self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, T_max=p["epochs"], eta_min=1e-5)
        self.generator = torch.Generator().manual_seed(p["seed"])
        self.tau = torch.full((self.K,), 1.0 / self.K, device=dev)
        self.tau_star = self.tau.clone()  # warm start (and support guess) of the next τ-step's QP
        self.eye = torch.eye(self.K, device=dev)
        self.last_lr = p["lr"]
        self.batch_norms = [m for m in self.net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        self.feasibility_sum = torch.zeros((), device=dev)  # Σ over an epoch's τ-steps, updated in place
        self.replay = EpochReplay(p["batch_size"], dev) if dev.type == "cuda" and p["cuda_graphs"] else None

    def autocast(self):
        # a CUDA graph must not capture autocast's cache of cast weights (it is freed on exit)
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=self.p["bf16"],
                              cache_enabled=self.replay is None)

    def gamma_at(self, epoch: int) -> float:
        return 0.5 * self.p["gamma"] * (1.0 + math.cos(epoch * math.pi / self.p["epochs"])) + 1e-8

    def objectives(self, F: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return batch_objectives(F.float(), y, self.p["c"], self.p["margin"])

    def _loss(self, F: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.p["criterion"] == "ce":
            return nn.functional.cross_entropy(F.float(), y), None
        J = self.objectives(F, y)
        return torch.dot(self.tau, J), J

    def solve_tau_qp(self, gram: torch.Tensor, linear: torch.Tensor) -> torch.Tensor:
        """τ* of eq. (25) for Hessian ``gram`` and linear term −γJ."""
        if self.qp_on_device:  # in place: a CUDA graph's replays read the warm start where the capture found it
            self.tau_star.copy_(simplex_qp_device(gram, linear, self.tau_star))
            return self.tau_star
        A, b = gram.double().numpy(), linear.double().numpy()
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            return self.tau  # diverged: τ kept, the NaN feasibility reports it
        self.tau_star = torch.as_tensor(simplex_qp(A, b, self.tau_star.double().numpy()), dtype=self.tau.dtype)
        return self.tau_star

    def step_with_lr_factor(self, factor: float) -> None:
        """One optimiser step at ``factor`` × the scheduled learning rate (which is restored)."""
        if factor == 1.0:
            self.opt.step()
            return
        scheduled = [group["lr"] for group in self.opt.param_groups]
        for group in self.opt.param_groups:
            group["lr"] *= factor
        self.opt.step()
        for group, lr in zip(self.opt.param_groups, scheduled):
            group["lr"] = lr

    def prior_frozen(self) -> bool:
        """True when no parameter of φ can change (identity prior, or a CNN prior past its fine-tuning)."""
        return not any(q.requires_grad for q in self.net.prior.parameters())

    def _tau_step(self, xb: torch.Tensor, yb: torch.Tensor, gamma: float,
                  phi: torch.Tensor | None = None) -> torch.Tensor:
        """Heads frozen: τ-step (eqs. 25–26), then a step on τᵀJ for the shared parameters.

        ``phi``: the θ-step's φ(x_B), passed when the prior is frozen. The θ-step cannot have moved a
        frozen prior, so recomputing φ(x_B) would give the same tensor (BatchNorm in train mode
        normalises by the batch's own statistics); reusing it skips the costliest half of the second
        forward pass (the CNN), and the prior's BatchNorm running statistics are updated once per
        batch instead of twice. Without ``phi`` the whole forward pass is recomputed (Alg. 2 line 11).

        Returns the feasibility ½‖Σ τ_l∇_Z J_l‖² as a 0-d device tensor (no host synchronisation)."""
        self.net.heads.requires_grad_(False)
        running_stats = self.batch_norms if self.p["tau_bn"] == "eval" else ()
        for bn in running_stats:
            bn.eval()
        with self.autocast():
            if phi is None:
                phi, z = self.net.representation(xb)
            else:
                z = self.net.encoder(phi)
            if self.p["hypothesis"] == "phi" and not phi.requires_grad:  # identity prior: differentiate at the input
                phi = phi.detach().requires_grad_(True)
            shared = phi if self.p["hypothesis"] == "phi" else z
            F = self.net.scores_from(phi, z)
        J = self.objectives(F, yb)
        grads = torch.autograd.grad(J, shared, grad_outputs=self.eye, is_grads_batched=True,
                                    retain_graph=True)[0].reshape(self.K, -1).float()
        gram = grads @ grads.T + 1e-12 * self.eye  # tiny ridge: the Gram matrix is often singular
        tau_star = self.solve_tau_qp(gram, -gamma * J.detach())
        ok = torch.isfinite(tau_star).all()
        moved = self.p["beta"] * tau_star + (1.0 - self.p["beta"]) * self.tau  # (26)
        self.tau.copy_(torch.where(ok, moved, self.tau))
        common = self.tau @ grads
        if self.p["shared_step"]:  # Alg. 2 line 15
            self.opt.zero_grad(set_to_none=True)
            torch.dot(self.tau, J).backward()
            self.step_with_lr_factor(self.p["second_lr"])
        self.net.heads.requires_grad_(True)
        for bn in running_stats:
            bn.train()
        return 0.5 * (common @ common).detach()

    def batch_step(self, idx: torch.Tensor, gamma: float, reuse_phi: bool) -> None:
        """θ-step (eq. 10) on the rows ``idx``, then for NPSVC++ the τ-step, its feasibility added to
        ``feasibility_sum``. Everything it reads or writes stays at fixed addresses (the rows are gathered from the
        device-resident data), so the same call can be captured in a CUDA graph and replayed."""
        xb, yb = self.X.index_select(0, idx), self.y.index_select(0, idx)
        with self.autocast():
            phi, z = self.net.representation(xb)
            F = self.net.scores_from(phi, z)
        loss, _ = self._loss(F, yb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.p["criterion"] == "npsvc++":
            self.feasibility_sum.add_(self._tau_step(xb, yb, gamma, phi.detach() if reuse_phi else None))

    def epoch(self, epoch: int) -> float:
        """One pass of Algorithm 2; returns the mean feasibility ½‖Σ τ_l∇_Z J_l‖² of its τ-steps."""
        p = self.p
        if p["prior"] == "cnn" and epoch == int(round(p["finetune"] * p["epochs"])):
            self.net.prior.requires_grad_(False)  # prior fine-tuned first, then frozen (App. C.2.2)
        self.net.train()
        gamma = self.gamma_at(epoch)
        order = torch.randperm(len(self.y), generator=self.generator).to(self.device)  # one transfer per epoch
        reuse_phi = self.prior_frozen() and p["tau_bn"] == "train"  # φ was computed with batch statistics
        batches = [idx for idx in order.split(p["batch_size"]) if len(idx) >= 2]  # BatchNorm needs two samples
        full = [idx for idx in batches if len(idx) == p["batch_size"]]
        self.feasibility_sum.zero_()
        step = functools.partial(self.batch_step, gamma=gamma, reuse_phi=reuse_phi)
        if self.replay is not None:
            self.replay.run(step, full)
        else:
            for idx in full:
                step(idx)
        for idx in batches[len(full):]:  # the last, shorter batch
            step(idx)
        self.last_lr = self.opt.param_groups[0]["lr"]
        self.sched.step()
        synchronize(self.device)  # every criterion's epoch time includes its queued GPU work
        n_steps = len(batches) if p["criterion"] == "npsvc++" else 0
        return float(self.feasibility_sum) / n_steps if n_steps else float("nan")  # the epoch's one host read

    @torch.no_grad()
    def evaluate(self) -> tuple[np.ndarray, float, float]:
        """J_l on the whole training set (eq. A.14), train and test accuracy, in eval mode."""
        self.net.eval()
        with self.autocast():
            F = self.net(self.X).float()
        J = self.objectives(F, self.y).double().cpu().numpy()
        norms = self.head_norms()
        train = float((predict_from_scores(F, norms, self.p["criterion"]) == self.y).float().mean())
        test = float("nan")
        if len(self.y_test):
            with self.autocast():
                F_test = self.net(self.X_test).float()
            test = float((predict_from_scores(F_test, norms, self.p["criterion"]) == self.y_test).float().mean())
        return J, train, test

    def graphs_used(self) -> str:
        """"on", "off", or why the capture failed (the run then trained eagerly)."""
        if self.replay is None:
            return "off"
        return "on" if self.replay.failure is None else f"failed ({self.replay.failure})"

    def tau_numpy(self) -> np.ndarray:
        return self.tau.double().cpu().numpy()

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
    device = resolve_device(params["device"])
    n_epochs = min(params["epochs"], max_iter)
    with deterministic_torch(params["seed"], params["threads"], device):
        trainer = Trainer(problem, params, device)
        rec = HistoryRecorder(tol=tol, max_iter=n_epochs, time_limit=time_limit, callback=callback,
                              measure="optimality")

        def record(epoch: int, feasibility: float) -> str | None:
            with rec.excluded():
                J, train_acc, test_acc = trainer.evaluate()
            primal, tau = float(J.max()), trainer.tau_numpy()
            gap = (primal - float(tau @ J)) / max(1.0, abs(primal))
            # as K-NPSVC++'s test: the gap alone is 0 whenever the J_l are equal (DTWSVN and cross-entropy at
            # c = 10⁶, s = 10⁶ "converged" at row 0, untrained), so the fit also waits for max J to stop moving;
            # row 0 has no previous epoch (change 1)
            change = relative_change(primal, rec.rows[-1]["objective"]) if rec.rows else 1.0
            return rec.record(epoch, objective=primal, optimality=max(gap, change), relative_gap=gap,
                              primal_change=change, feasibility=feasibility, train_acc=train_acc, test_acc=test_acc,
                              lr=trainer.last_lr, gamma=trainer.gamma_at(max(epoch - 1, 0)),
                              **chebyshev_columns(J, tau))

        if not record(0, float("nan")):  # row 0: the untrained network
            for epoch in itertools.count(1):
                if record(epoch, trainer.epoch(epoch - 1)):
                    break
        trainer.net.eval()
        return rec.result({"net": trainer.net.cpu(), "tau": trainer.tau_numpy(), "criterion": params["criterion"],
                           "normalize_heads": params["normalize_heads"]}, n_epochs=int(rec.rows[-1]["iter"]),
                          device=str(device), cuda_graphs=trainer.graphs_used())


def warm_up() -> None:
    """One epoch on four points. A process's first deep run pays torch's lazy imports (the optimiser's first step
    imports torch's compiler modules) and first-use costs, ≈1 CPU s on top of torch's own import; a lecture
    server's workers pay them here, in the background, when the NPSVC++ page is first opened."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    problem = problem_from_arrays(X, np.array([0, 0, 1, 1]), kernel_memory=False)
    run_dnpsvc(problem, tol=0.0, max_iter=1, **validate_params(DNPSVC_PARAMS, {"epochs": 1, "batch_size": 4}))


def inference_copy(net: NPSVCNet) -> NPSVCNet:
    """A float64 copy of the trained network in eval mode: predictions on float64 input are then
    computed in float64, so a row's score does not depend on which other rows share its batch
    (float32 matmuls blocked by batch size differ at ~1e-6)."""
    return copy.deepcopy(net).double().eval()


def float64_input(X: np.ndarray) -> torch.Tensor:
    """X as a float64 tensor sharing its memory where it may: a read-only array (a memmap opened "r", as
    scikit-learn's checks pass) is copied, since torch does not support non-writable tensors."""
    return torch.from_numpy(np.require(X, dtype=np.float64, requirements="W"))


@torch.no_grad()
def deep_scores(net: NPSVCNet, X: np.ndarray) -> np.ndarray:
    return inference_copy(net)(float64_input(X)).numpy()


@torch.no_grad()
def deep_features(net: NPSVCNet, X: np.ndarray) -> np.ndarray:
    """The learned representation z(x) (the encoder output)."""
    return inference_copy(net).representation(float64_input(X))[1].numpy()


def deep_predict(solution: dict, X: np.ndarray) -> np.ndarray:
    F = torch.as_tensor(deep_scores(solution["net"], X))
    norms = solution["net"].heads.weight.norm(dim=1) if solution["normalize_heads"] else None
    return predict_from_scores(F, norms, solution["criterion"]).numpy()

"""D-NPSVC++'s parameters (Algorithm 2 and App. C.2.2), apart from the torch model in dnpsvc.py, so that the family's
registry, the pages and the kernel methods' runs never import torch: only a deep run does."""
from __future__ import annotations

from ..core import Param
from .problem import MAX_WEIGHT

CRITERIA = ("npsvc++", "fixed", "ce")
HYPOTHESES = ("full", "z", "phi")
PRIORS = ("mlp", "cnn")
DEVICES = ("cpu", "cuda", "auto")

# SGD's learning rates and weight decay: 1 000 × the sliders' ranges (float32 tensors overflow from 3.4e38:
# lr = 1e39 raised in the optimiser step)
MAX_STEP = 1e3
DNPSVC_PARAMS = (
    Param("criterion", "npsvc++", str, choices=CRITERIA,
          help="npsvc++: Pareto weights τ (Alg. 2); fixed: τ = 1/K (DTWSVN); ce: cross-entropy"),
    Param("prior", "mlp", str, choices=PRIORS, help="prior encoder φ: identity (mlp) or a small CNN for images"),
    Param("hypothesis", "full", str, choices=HYPOTHESES, help="heads on [φ; z] (eq. 22), on z only, or on φ only"),
    Param("epochs", 15, int, low=1, high=500, help="passes over the training set", symbol="T"),
    Param("batch_size", 64, int, low=2, high=4096, help="mini-batch size |B|"),
    Param("lr", 0.1, float, low=0, low_strict=True, high=MAX_STEP, log=True, ui_range=(1e-4, 1.0),
          help="initial SGD learning rate (momentum 0.9, cosine annealing)", symbol=r"\alpha"),
    Param("weight_decay", 1e-4, float, low=0, high=MAX_STEP, ui_range=(0.0, 1e-2),
          help="SGD weight decay (App. C.2.2)"),
    Param("c", 1.0, float, low=0, low_strict=True, high=MAX_WEIGHT, log=True, ui_range=(1e-3, 1e3),
          help="weight of the dissimilarity loss (Alg. 2 line 8)", symbol="c"),
    Param("margin", 4.0, float, low=0, low_strict=True, high=MAX_WEIGHT, ui_range=(0.1, 20.0),
          help="margin s of ℓ_d(a) = ½[s − a]₊² (not given in the paper; s = 1 stalls near the constant "
               "solution f_l ≡ s/2 on small data, the official demo uses 16)", symbol="s"),
    Param("gamma", 0.01, float, low=0, high=MAX_WEIGHT, ui_range=(0.0, 10.0),
          help="γ_max of the cosine γ schedule (eq. 25); the paper gives none. ∇_Z J_l is O(1/|B|) here, so "
               "γ ≳ 0.1 makes τ* a vertex (all weight on the largest J_l); measured on digits: 0.01 best",
          symbol=r"\gamma"),
    Param("beta", 0.01, float, low=0, low_strict=True, high=1,
          help="weight of τ* in τ ← βτ* + (1 − β)τ (eq. 26). The paper's 0.85 lets τ follow the sparse τ* "
               "within a few batches, starving classes (CNN prior on digits: chance accuracy, then divergence); "
               "0.01 chosen on validation splits of digits (MLP, CNN) and MNIST-6k (CNN) over 0.1 and 0.03 "
               "(docs/benchmarks/npsvc.md, D-NPSVC++)", symbol=r"\beta"),
    Param("hidden", 128, int, low=4, high=2048, help="width of the encoder's hidden layer"),
    Param("z_dim", 32, int, low=2, high=1024, help="dimension of the learned features z", symbol="d"),
    Param("dropout", 0.1, float, low=0, high=0.9, help="dropout in the encoder"),
    Param("finetune", 0.2, float, low=0, high=1, help="fraction of epochs the CNN prior is trained, then frozen"),
    Param("shared_step", True, bool, help="after updating τ, take Alg. 2's second optimiser step (line 15) on τᵀJ "
                                          "for the shared parameters; off: the τ-step only updates τ (ablation)"),
    Param("second_lr", 1.0, float, low=0, high=MAX_STEP, ui_range=(0.0, 2.0),
          help="learning rate of the second step as a multiple of the current one (the paper gives none: 1; "
               "ablation)"),
    Param("tau_bn", "train", str, choices=("train", "eval"),
          help="BatchNorm during the τ-step's forward pass: batch statistics (train, the default) or the running "
               "ones (eval; ablation)"),
    Param("normalize_heads", True, bool, help="predict by |f_l|/‖w̃_l‖ (eq. 21) rather than |f_l| (official code)"),
    Param("threads", 1, int, low=1, high=64, help="torch CPU threads"),
    Param("device", "cpu", str, choices=DEVICES,
          help="where the network, the data and the τ-step live: cpu (the tested default), cuda, or auto "
               "(cuda when torch sees a GPU)"),
    Param("cuda_graphs", True, bool,
          help="on CUDA, replay each epoch's mini-batch steps from one captured CUDA graph (one launch per batch "
               "instead of one per kernel; every criterion alike); off: eager launches. No effect on the CPU"),
    Param("bf16", False, bool, help="bfloat16 autocast for the forward passes (meant for CUDA; losses, "
                                    "Gram matrix and τ stay float32)"),
    Param("seed", 0, int, low=0, high=2**31 - 1, help="seed of the weights and the batch order"),
)

"""An epoch's mini-batch steps replayed from one CUDA graph (torch.cuda.CUDAGraph).

A small network's batch on a GPU is launch-bound: each of its few hundred kernels costs the CPU more to launch
from Python than the GPU to run. A graph records the step's kernels once and replays them with one launch per
batch. What a replay may read or write has to live at fixed addresses, so the step takes its batch as a static
index buffer (the rows are gathered inside the graph) and updates its state (τ, the sums) in place.

The captured kernels bake in their scalar arguments: the learning rate, γ_p and which parameters are trainable.
Those change from epoch to epoch (cosine schedules, the prior's fine-tuning), so every epoch is captured afresh:
its first batch runs eagerly on a side stream (torch's warm-up before a capture), the second is captured and
every full batch from there on is a replay. The capture counts in the epoch's time.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import torch


class EpochReplay:
    """Runs ``step(idx)`` over an epoch's full mini-batches of equal size, from a CUDA graph where it can.

    ``failure`` holds the reason when a capture failed; the epoch, and every later one, then runs eagerly
    (a step that cannot be captured still trains)."""

    def __init__(self, batch_size: int, device: torch.device):
        self.device = device
        self.static_idx = torch.zeros(batch_size, dtype=torch.long, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.failure: str | None = None

    def run(self, step: Callable[[torch.Tensor], None], batches: Sequence[torch.Tensor]) -> None:
        if self.failure is not None or len(batches) < 2:
            for idx in batches:
                step(idx)
            return
        self.graph = None  # frees the previous epoch's graph and its memory pool before the next capture
        current = torch.cuda.current_stream(self.device)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(current)
        with torch.cuda.stream(side):
            step(batches[0])
        current.wait_stream(side)
        self.static_idx.copy_(batches[1])
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                step(self.static_idx)
        except RuntimeError as exc:  # an operation that cannot be captured: the rest of the run is eager
            self.failure = f"{type(exc).__name__}: {exc}".splitlines()[0]
            warnings.warn(f"CUDA graph capture failed, training eagerly: {self.failure}", RuntimeWarning,
                          stacklevel=2)
            torch.cuda.synchronize(self.device)
            for idx in batches[1:]:
                step(idx)
            return
        self.graph = graph
        for idx in batches[1:]:  # the capture ran nothing: batch 1 is the first replay
            self.static_idx.copy_(idx)
            graph.replay()

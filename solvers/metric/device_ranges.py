"""RRPB ranges kept across λ (ranges.RangeLedger) with the ledger itself on the torch device.

The numpy ledger examines ≈ 100,000 candidates per λ on the host; on a GPU that host work (and moving the
candidates' margins and indices between host and device) cost more than the whole naive solve (segment at
full size on an H200: 6.8 s of screening in a 9.9 s path against a 7.8 s naive path). Here the release steps,
sides, candidates and their pair indices stay on the device; per λ only the new active set's indices (for the
rules on the host) and a few counts come back. Same decisions as ``RangeLedger`` (Thm 4.1, ``range_steps``).
"""
from __future__ import annotations

import math

import numpy as np

from .problem import ReducedProblem, TripletProblem, TripletSubset, inner
from .ranges import _FOREVER, _STEP_SLACK, RangeLedger


class TorchRangeLedger(RangeLedger):
    """``RangeLedger`` whose per-triplet state and per-candidate arithmetic live on the problem's torch device."""

    def __init__(self, problem: TripletProblem, rho: float, keep_masks: bool = False,
                 last_step: int | None = None) -> None:
        """``last_step`` is accepted for ``RangeLedger``'s signature: this ledger finds a step's ranges by a
        comparison over T on the device, with no buckets to size."""
        tp = problem.torch
        torch = self.torch = tp.torch
        self.problem, self.rho, self.keep_masks = problem, rho, keep_masks
        T, n = problem.triplets, problem.n_triplets
        self.same_all, self.diff_all = tp.tensor(T.same.astype(np.int64)), tp.tensor(T.diff.astype(np.int64))
        self.h_norm = tp.tensor(problem.h_norm)
        self.release = torch.zeros(n, dtype=torch.int64, device=tp.device)
        self.side_L = torch.zeros(n, dtype=torch.bool, device=tp.device)
        self.candidates = torch.arange(n, device=tp.device)
        self.H_L = problem.zeros()
        self.n_L = self.n_R = self.n_range = 0

    def _steps(self, h, nu, m: float, eps: float, lam0: float, lam: float):
        """``ranges.range_steps`` on the device: (steps covered, is an L* range) per candidate."""
        torch, gamma = self.torch, self.problem.gamma
        e_nu = eps * nu
        to_L = h + e_nu < 1.0 - gamma
        valid = to_L | (h - e_nu > 1.0)
        s = torch.where(to_L, h, -h)
        m_nu = m * nu
        num = m_nu + s + 2.0 * e_nu
        den = m_nu - s - torch.where(to_L, -2.0 * (1.0 - gamma), 2.0)
        lower = lam0 * num / den
        z = torch.log(lower / lam) * (1.0 / math.log(self.rho))
        z = torch.where(lower <= 0, math.inf, z)
        steps = torch.ceil((z - _STEP_SLACK).clamp(0, _FOREVER)).nan_to_num(0.0).to(torch.int64)
        return torch.where(valid, steps, 0), to_L

    def step(self, t: int, lam: float, reference) -> ReducedProblem:
        problem, torch, tp = self.problem, self.torch, self.problem.torch
        if self.n_L + self.n_R:
            released = torch.nonzero(self.release == t).squeeze(1)
        else:
            released = self.candidates[:0]
        out_L = released[self.side_L[released]]
        self.n_L -= out_L.numel()
        self.n_R -= released.numel() - out_L.numel()
        self.n_range = self.n_L + self.n_R
        cand = torch.cat([self.candidates, released]) if released.numel() else self.candidates
        same, diff = self.same_all[cand], self.diff_all[cand]
        in_L, known = released[:0], None
        if reference is not None and cand.numel():
            M0, lam0, eps = reference
            x0 = tp.margins((same, diff, None), M0)
            steps, to_L = self._steps(x0, self.h_norm[cand], math.sqrt(inner(M0, M0)), eps, lam0, lam)
            covered = steps > 0
            newly, to_L = cand[covered], to_L[covered]
            self.release[newly] = steps[covered] + t
            self.side_L[newly] = to_L
            in_L = newly[to_L]
            self.n_L += in_L.numel()
            self.n_R += newly.numel() - in_L.numel()
            keep = ~covered
            cand, same, diff, x0 = cand[keep], same[keep], diff[keep], x0[keep]
            known = (M0, x0.cpu().numpy())
        self.candidates = cand
        if out_L.numel() or in_L.numel():
            both = torch.cat([in_L, out_L])
            sign = torch.cat([torch.ones(in_L.numel(), dtype=torch.float64, device=tp.device),
                              -torch.ones(out_L.numel(), dtype=torch.float64, device=tp.device)])
            self.H_L = self.H_L + tp.combine((self.same_all[both], self.diff_all[both], None), sign)
        P = len(problem.triplets.pairs)
        active = TripletSubset(problem, cand.cpu().numpy(), np.arange(P), same.cpu().numpy().astype(np.int32),
                               diff.cpu().numpy().astype(np.int32))
        active.__dict__["device_index"] = (same, diff, None)  # already on the device (cached_property's slot)
        return ReducedProblem.assemble(problem, active, self.H_L, (self.n_L, self.n_R), self._masks_at(t), known)

    def _state_copy(self) -> tuple[np.ndarray, np.ndarray]:
        return self.release.clone().cpu().numpy(), self.side_L.clone().cpu().numpy()

"""qp.BoxQP in torch, for the duals (eq. 16) of K-NPSVC++ and TWSVM on a GPU (knpsvc_torch.py).

The same iterations, in the same order, as qp.BoxQP — projected Barzilai–Borwein steps with an exact line search,
subspace Newton steps on the free set with the REFINEMENTS re-solves, the schedule of ``BoxQP.solve`` (inherited) —
on float64 tensors, so a fit on the device has numpy's iterates up to rounding (tests/npsvc/test_knpsvc_torch.py).

Host synchronisation: the schedule branches on scalars (the KKT residual, the line search's step, the free set's
size), so each iteration reads them back: one read per BB step (its three inner products in one tensor) and one for
the stopping test, a few per Newton step. A BB step is one product with S_l (n_{−l}², 1.8 GB in float64 for a9a's
15 183 other rows at n = 20 000: ≈ 0.4 ms at the H200's 4.8 TB/s), so the reads (≈ 20 µs each) cost a few percent.
"""
from __future__ import annotations

import torch

from .qp import BoxQP


class TorchBoxQP(BoxQP):
    """min ½xᵀSx + qᵀx over lower ≤ x ≤ upper with float64 tensors on one device; see qp.BoxQP."""

    def __init__(self, matvec, q: torch.Tensor, upper, x0: torch.Tensor | None = None, lower=0.0,
                 Sx0: torch.Tensor | None = None):
        self.matvec, self.q = matvec, q
        self.upper = torch.as_tensor(upper, dtype=q.dtype, device=q.device).expand(q.shape)
        self.lower = torch.as_tensor(lower, dtype=q.dtype, device=q.device).expand(q.shape)
        start = torch.zeros_like(q) if x0 is None else x0
        self.x = torch.clamp(start, self.lower, self.upper)
        self.warm = x0 is not None
        inside = Sx0 is not None and torch.equal(self.x, start)
        if inside:
            self.Sx = Sx0.clone()
        else:
            self.Sx = matvec(self.x) if bool(self.x.any()) else torch.zeros_like(q)
        self.grad = self.Sx + q
        self.step_size: float | None = None
        self.n_iter = 0
        self.free_changed = True
        self._free: torch.Tensor | None = None
        self._S_ff: torch.Tensor | None = None
        self._factor: torch.Tensor | None = None
        self._well_conditioned = False
        self._final_free: torch.Tensor | None = None

    def kkt_residual(self) -> float:
        if self.x.numel() == 0:
            return 0.0
        return float((self.x - torch.clamp(self.x - self.grad, self.lower, self.upper)).abs().max())

    def step(self) -> None:
        """qp.BoxQP.step: a projected BB step with the exact minimiser on the segment."""
        if self.step_size is None:
            self.step_size = 1.0 / max(_rayleigh(self.matvec, self.grad), 1e-12)
        d = torch.clamp(self.x - self.step_size * self.grad, self.lower, self.upper) - self.x
        Sd = self.matvec(d)
        dSd, gd, dd = torch.stack([d @ Sd, self.grad @ d, d @ d]).tolist()  # one read for the three scalars
        t = 1.0 if dSd <= 1e-300 else min(1.0, -gd / dSd)
        self.x += t * d
        self.Sx += t * Sd
        self.grad += t * Sd
        torch.clamp(self.x, self.lower, self.upper, out=self.x)
        self.step_size = min(max(dd / dSd, 1e-10), 1e10) if dSd > 1e-300 else 1e10  # BB1 step
        self.n_iter += 1

    def newton_step(self, S: torch.Tensor) -> None:
        """qp.BoxQP.newton_step: Newton on the free variables, re-solved with those whose target leaves the box
        put on that bound (up to REFINEMENTS times), then the exact line search."""
        x, g, lo, c = self.x, self.grad, self.lower, self.upper
        free = torch.nonzero(((x > lo) & (x < c)) | ((x <= lo) & (g < 0)) | ((x >= c) & (g > 0)))[:, 0]
        if free.numel() == 0:
            self.free_changed = False
            return self.step()
        rows = None
        if self._free is None or not torch.equal(free, self._free):
            rows = S.index_select(0, free)
            S_ff = rows.index_select(1, free)
            diagonal = S_ff.diagonal()  # a view: the ridge goes into S_ff
            diagonal += 1e-12 * max(float(diagonal.sum()) / free.numel(), 1e-300)  # S is PSD
            self._factorize(free, S_ff)
        d = torch.zeros_like(x)
        base = free
        coupling = torch.zeros(base.numel(), dtype=x.dtype, device=x.device)  # S[base, dropped] d_dropped
        newton = torch.cholesky_solve(g[base][:, None], self._factor)[:, 0]
        target = x[base] - newton
        fixed = torch.zeros(base.numel(), dtype=torch.bool, device=x.device)
        for _ in range(self.REFINEMENTS):
            crossing = ~fixed & ((target < lo[base]) | (target > c[base]))
            if not bool(crossing.any()) or bool((fixed | crossing).all()):
                break
            fixed |= crossing
            on_bound = torch.clamp(target, lo[base], c[base])
            m = int(fixed.sum())
            k = base.numel() - m
            if self._well_conditioned and 2 * base.numel() ** 2 * m + m**3 < k**3 / 3:
                target = self._fixed_newton_step(x[base], newton, fixed, on_bound)
                continue
            moved, keep = base[fixed], ~fixed
            d[moved] = on_bound[fixed] - x[moved]
            coupling = coupling[keep] + self._S_ff[keep][:, fixed] @ d[moved]
            base = base[keep]
            self._factorize(base, self._S_ff[keep][:, keep])
            newton = torch.cholesky_solve((g[base] + coupling)[:, None], self._factor)[:, 0]
            target, fixed = x[base] - newton, torch.zeros(base.numel(), dtype=torch.bool, device=x.device)
        d[base] = torch.clamp(target, lo[base], c[base]) - x[base]
        final = base[~fixed]
        self.free_changed = self._final_free is None or not torch.equal(final, self._final_free)
        self._final_free = final
        if 2 * free.numel() >= x.numel():
            Sd = S @ d
        else:
            Sd = d[free] @ (S.index_select(0, free) if rows is None else rows)
        dSd, gd = torch.stack([d @ Sd, g @ d]).tolist()
        if dSd > 1e-300 and gd < 0:
            t = min(1.0, -gd / dSd)
            x += t * d
            torch.clamp(x, lo, c, out=x)
            self.Sx += t * Sd
            self.grad += t * Sd
        self.n_iter += 1

    def _fixed_newton_step(self, x_f, newton, fixed, fixed_target):
        """qp.BoxQP._fixed_newton_step: the Newton target with ``fixed`` held at ``fixed_target``, from the factor
        of S_FF at hand (|M| more solve pairs and an |M| × |M| system)."""
        M = torch.nonzero(fixed)[:, 0]
        unit = torch.zeros(fixed.numel(), M.numel(), dtype=x_f.dtype, device=x_f.device)
        unit[M, torch.arange(M.numel(), device=x_f.device)] = 1.0
        Z = torch.cholesky_solve(unit, self._factor)
        nu = torch.linalg.solve(Z[M], fixed_target[M] - x_f[M] + newton[M])
        target = x_f - newton + Z @ nu
        target[M] = fixed_target[M]
        return target

    def _factorize(self, free: torch.Tensor, S_ff: torch.Tensor) -> None:
        self._free, self._S_ff = free, S_ff
        self._factor, info = torch.linalg.cholesky_ex(S_ff)
        if int(info) != 0:
            raise torch.linalg.LinAlgError(f"the free block of S is not positive definite (cholesky info {int(info)})")
        pivots = self._factor.diagonal()
        low, high = torch.aminmax(pivots)
        self._well_conditioned = bool(low**2 >= 1e-8 * high**2)


def _rayleigh(matvec, v: torch.Tensor) -> float:
    nv = float(v @ v)
    return float(v @ matvec(v)) / nv if nv > 0 else 1.0

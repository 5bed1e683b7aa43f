"""The two small QPs of the family: a box QP (every TWSVM-type dual, eq. 16 / A.9) and a QP on
the probability simplex (the τ-step, eqs. 20 and 25).

Box QP: min ½ xᵀSx + qᵀx over lower ≤ x ≤ c (lower = 0, or −τ_p c for the pinball loss), S ⪰ 0 given as a matrix-vector product. We use
projected gradient with Barzilai–Borwein steps and an exact line search along the projected
direction (one product with S per iteration, monotone, fully vectorised): the digest's advice
against a Python loop over samples (coordinate descent) is followed. The stopping test is
the projected-gradient residual ‖x − Π(x − ∇)‖_∞, which is 0 exactly at a KKT point.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs

from ..core import fista_momentum

MatVec = Callable[[np.ndarray], np.ndarray]


class BoxQP:
    """State of projected-gradient iterations for one box QP; ``step`` does one, ``solve`` many."""

    # Re-solves per Newton step with the variables whose target left the box put on that bound (newton_step).
    # QP iterations, TWSVM / K-NPSVC++ 10 outer iterations, with 0 / 2 / 5: DNA 84 / 35 / 35 and 359 / 68 / 68,
    # digits 681 / 217 / 144 and 942 / 345 / 280, USPS 864 / 272 / 199 and 1112 / 414 / 358; 20 gains nothing more.
    REFINEMENTS = 5

    def __init__(self, matvec: MatVec, q: np.ndarray, upper: float | np.ndarray, x0: np.ndarray | None = None,
                 lower: float | np.ndarray = 0.0, Sx0: np.ndarray | None = None):
        """``Sx0`` = S x0 when the caller has it (K-NPSVC++'s u-step keeps S_lλ_l from the previous outer
        iteration: S_l is fixed, only q changes); used only if x0 is inside the box."""
        self.matvec, self.q = matvec, np.asarray(q, float)
        self.upper = np.broadcast_to(np.asarray(upper, float), self.q.shape)  # bounds per variable
        self.lower = np.broadcast_to(np.asarray(lower, float), self.q.shape)
        start = np.zeros_like(self.q) if x0 is None else np.asarray(x0, float)
        self.x = np.clip(start, self.lower, self.upper)
        self.warm = x0 is not None  # solve: a warm start begins with a Newton step, a cold one with BB steps
        inside = Sx0 is not None and np.array_equal(self.x, start)
        if inside:
            self.Sx = np.array(Sx0, float)
        else:
            self.Sx = matvec(self.x) if self.x.any() else np.zeros_like(self.x)  # a cold start: S0 = 0
        self.grad = self.Sx + self.q
        self.step_size: float | None = None  # 1/Rayleigh quotient of ∇f, set by the first gradient step
        self.n_iter = 0
        self.free_changed = True  # the last Newton step's free set differed from the one before it
        self._free: np.ndarray | None = None  # free set of the last factorization, S_FF (+ ridge), its Cholesky factor
        self._S_ff: np.ndarray | None = None
        self._factor = None
        self._well_conditioned = False
        self._final_free: np.ndarray | None = None  # the last Newton step's free set less the variables it fixed

    def kkt_residual(self) -> float:
        """‖x − clip(x − ∇f(x), lower, c)‖_∞: zero exactly at the optimum."""
        if self.x.size == 0:
            return 0.0
        return float(np.max(np.abs(self.x - np.clip(self.x - self.grad, self.lower, self.upper))))

    def objective(self) -> float:
        return float(0.5 * self.x @ self.Sx + self.q @ self.x)

    def step(self) -> None:
        if self.step_size is None:  # lazily: a solve that starts with Newton steps may never need it
            self.step_size = 1.0 / max(_rayleigh(self.matvec, self.grad), 1e-12)
        d = np.clip(self.x - self.step_size * self.grad, self.lower, self.upper) - self.x
        Sd = self.matvec(d)
        dSd, gd = float(d @ Sd), float(self.grad @ d)
        t = 1.0 if dSd <= 1e-300 else min(1.0, -gd / dSd)  # exact minimiser on the segment
        self.x += t * d
        self.Sx += t * Sd
        self.grad += t * Sd
        np.clip(self.x, self.lower, self.upper, out=self.x)
        dd = float(d @ d)
        self.step_size = min(max(dd / dSd, 1e-10), 1e10) if dSd > 1e-300 else 1e10  # BB1 step
        self.n_iter += 1

    def newton_step(self, S: np.ndarray) -> None:
        """Newton step on the free variables (bounds with an outward gradient stay fixed), projected
        onto the box, then the exact line search of ``step`` — a gradient-projection/subspace step
        in the spirit of Moré & Toraldo (1991) that finishes once the active set is right.
        Variables whose Newton target leaves the box are put on that bound and the Newton system re-solved on
        the others with them fixed (up to REFINEMENTS times; a primal active-set move): clipping the target
        alone left those variables a small step from the bound, the line search then stopped at t ≪ 1, and the
        same free set came back step after step (a cold DNA dual: 151 QP iterations at a KKT residual ≈ 5e-4
        over the last 120; 11 with the re-solve, one Newton step after the first ten BB steps).
        The re-solves reuse the free block's Cholesky factor (``_fixed_newton_step``); the factor is kept and
        reused while the free set does not change."""
        x, g, lo, c = self.x, self.grad, self.lower, self.upper
        free = np.flatnonzero(((x > lo) & (x < c)) | ((x <= lo) & (g < 0)) | ((x >= c) & (g > 0)))
        if free.size == 0:
            self.free_changed = False
            return self.step()
        rows = None  # S[F] when this step gathered it: S_FF's source and Sd's
        if self._free is None or not np.array_equal(free, self._free):
            rows = S[free]  # rows, then columns: half the time of S[np.ix_(F, F)] (S_l is out of cache here)
            S_ff = rows[:, free]
            diagonal = np.einsum("ii->i", S_ff)  # a writeable view of the diagonal (S_ff is Fortran-ordered here)
            diagonal += 1e-12 * max(float(diagonal.sum()) / free.size, 1e-300)  # S is PSD
            self._factorize(free, S_ff)
        d = np.zeros_like(x)
        base = free  # the factorized set; variables dropped from it are fixed on a bound and couple through S
        coupling = np.zeros(base.size)  # S[base, dropped] d_dropped
        newton = dpotrs(self._factor, g[base], lower=1)[0]  # S_BB⁻¹(g_B + coupling)
        target = x[base] - newton
        fixed = np.zeros(base.size, bool)  # variables of the base whose Newton target left the box, on that bound
        for _ in range(self.REFINEMENTS):
            crossing = ~fixed & ((target < lo[base]) | (target > c[base]))
            if not crossing.any() or (fixed | crossing).all():
                break
            fixed |= crossing
            on_bound = np.clip(target, lo[base], c[base])  # on ``fixed``: the bound each one crossed
            m, k = np.count_nonzero(fixed), np.count_nonzero(~fixed)
            if self._well_conditioned and 2 * base.size**2 * m + m**3 < k**3 / 3:  # cheaper than factorizing S_KK
                target = self._fixed_newton_step(x[base], newton, fixed, on_bound)
                continue
            # S_{KK} and S_{K,fixed} are blocks of the S_BB at hand (in cache), not gathers from S
            moved, keep = base[fixed], ~fixed
            d[moved] = on_bound[fixed] - x[moved]
            coupling = coupling[keep] + self._S_ff[np.ix_(keep, fixed)] @ d[moved]
            base = base[keep]
            self._factorize(base, self._S_ff[np.ix_(keep, keep)])
            newton = dpotrs(self._factor, g[base] + coupling, lower=1)[0]
            target, fixed = x[base] - newton, np.zeros(base.size, bool)
        d[base] = np.clip(target, lo[base], c[base]) - x[base]
        final = base[~fixed]
        self.free_changed = self._final_free is None or not np.array_equal(final, self._final_free)
        self._final_free = final
        # d vanishes off F, so with S symmetric Sd = S[F]ᵀd_F reads |F| rows instead of all of S: a warm solve's
        # S_l is not in cache (K-NPSVC++ visits K of them per u-step) and its free set is 5–40 % of the rows
        # (K-NPSVC++ 10 iterations, CPU s: digits 0.628 → 0.558, USPS 0.83 → 0.754, DNA 0.419 → 0.382)
        if 2 * free.size >= x.size:
            Sd = S @ d
        else:
            Sd = d[free] @ (S[free] if rows is None else rows)
        dSd, gd = float(d @ Sd), float(g @ d)
        if dSd > 1e-300 and gd < 0:
            t = min(1.0, -gd / dSd)
            x += t * d
            np.clip(x, lo, c, out=x)
            self.Sx += t * Sd
            self.grad += t * Sd
        self.n_iter += 1

    def _fixed_newton_step(self, x_f: np.ndarray, newton: np.ndarray, fixed: np.ndarray,
                           fixed_target: np.ndarray) -> np.ndarray:
        """The Newton target on F with the variables ``fixed`` held at ``fixed_target``, from the factor of S_FF.

        min g_Fᵀd + ½dᵀS_FFd subject to d_M = d̄_M (M = fixed) has d = −S_FF⁻¹g_F + Zν with Z = S_FF⁻¹E_M and
        Z_MMν = d̄_M + (S_FF⁻¹g_F)_M: |M| more triangular solve pairs with the factor at hand and an |M| × |M| system,
        instead of a Cholesky factorization of S_KK for K = F ∖ M per re-solve (DNA, |F| ≈ 260: 0.05 against 0.3 ms)."""
        M = np.flatnonzero(fixed)
        unit = np.zeros((fixed.size, M.size))
        unit[M, np.arange(M.size)] = 1.0
        Z = dpotrs(self._factor, unit, lower=1)[0]
        nu = np.linalg.solve(Z[M], fixed_target[M] - x_f[M] + newton[M])
        target = x_f - newton + Z @ nu
        target[M] = fixed_target[M]  # equal up to rounding; exactly, so that the step puts them on their bound
        return target

    def _factorize(self, free: np.ndarray, S_ff: np.ndarray) -> None:
        """Cholesky through LAPACK directly: scipy.linalg's cho_factor / cho_solve add ≈ 10 µs of argument checks
        per call, and a K-NPSVC++ fit makes ≈ 1 000 of them on free sets of 40–100 variables (digits, USPS)."""
        self._free, self._S_ff = free, S_ff
        self._factor, info = dpotrf(S_ff, lower=1, clean=0)
        if info != 0:
            raise np.linalg.LinAlgError(f"the free block of S is not positive definite (LAPACK dpotrf info {info})")
        # cond(S_FF) ≤ ~1e8 by the factor's diagonal: only then may newton_step's re-solves go through this factor
        # (_fixed_newton_step). A block held PD by the ridge alone (a rank-deficient S) would make that Schur complement
        # cancel terms of size cond(S_FF), where the re-factorized S_KK may be well conditioned; a precaution (the tests
        # and 400 random QPs gave the same results without it)
        pivots = np.diagonal(self._factor)
        self._well_conditioned = bool(pivots.min() ** 2 >= 1e-8 * pivots.max() ** 2)

    def solve(self, tol: float = 1e-8, max_iter: int = 10_000, S: np.ndarray | None = None,
              newton_every: int = 10) -> "BoxQP":
        """Iterate until the KKT residual is ≤ tol; with the explicit matrix S, every ``newton_every``-th
        iteration is a subspace Newton step, and so is every iteration that follows a Newton step whose
        free set changed (a projected Newton phase; a repeated free set means the clipping stalls it, and
        BB steps take over). A warm start (x0 given: K-NPSVC++'s u-step between outer iterations) begins
        with a Newton step: its active set is nearly right and one or two Newton steps finish (QP iterations
        over 10 outer iterations, DNA / digits: 1 394 / 2 367 with BB steps only, 522 / 1 851 with a Newton
        step every tenth, 135 / 953 with the Newton phase). A cold start begins with BB steps: at x = 0 with
        ∇ = q < 0 every variable is free, and a Newton step there factors all of S only to be clipped
        (TWSVM's duals solved alone, CPU s: digits 0.387 → 0.166, USPS 0.539 → 0.248, DNA 0.060 → 0.020)."""
        steps = self.iterate(S, newton_every)
        while self.n_iter < max_iter and self.kkt_residual() > tol:
            next(steps)
        return self

    def iterate(self, S: np.ndarray | None = None, newton_every: int = 10):
        """``solve``'s iterations without a stopping test, yielding after each: TWSVM's dual solve records a
        history row between them (baselines.run_twsvm)."""
        newton_next = S is not None and self.warm
        while True:
            if newton_next:
                self.newton_step(S)
            else:
                self.step()
            newton_next = S is not None and (self.n_iter % newton_every == 0 or
                                             (newton_next and self.free_changed))
            yield


def _rayleigh(matvec: MatVec, v: np.ndarray) -> float:
    nv = float(v @ v)
    return float(v @ matvec(v)) / nv if nv > 0 else 1.0


def simplex_qp(A: np.ndarray, b: np.ndarray, x0: np.ndarray | None = None, tol: float = 1e-12,
               max_iter: int = 20_000, check_every: int = 5) -> np.ndarray:
    """argmin over the probability simplex of ½ xᵀAx + bᵀx (A ⪰ 0, K×K).

    FISTA with the sort-based projection onto the probability simplex; every
    ``check_every`` iterations the equality-constrained QP on the current support is solved
    exactly, and returned when it satisfies the KKT conditions (x ≥ 0 on the support and
    (Ax + b)_i ≥ ν off it, ν the multiplier of Σx = 1). With A ≈ 0 the first projected step
    already lands on a vertex. A warm start x0 is first tried as a support guess: D-NPSVC++ solves one
    QP per mini-batch and τ*'s support rarely changes between batches, so most calls end there after
    one (|S|+1)-square solve.
    """
    A = 0.5 * (np.asarray(A, float) + np.asarray(A, float).T)
    b = np.asarray(b, float)
    K = len(b)
    if x0 is not None:
        exact = _support_solution(A, b, np.asarray(x0) > 0)
        if exact is not None:
            return exact
    x = np.full(K, 1.0 / K) if x0 is None else project_simplex(np.asarray(x0, float))
    lipschitz = max(float(np.linalg.eigvalsh(A)[-1]), 1e-12 * (1.0 + float(np.abs(b).max(initial=0.0))))
    y, t = x.copy(), 1.0
    for k in range(1, max_iter + 1):
        x_new = project_simplex(y - (A @ y + b) / lipschitz)
        beta, t = fista_momentum(t)
        change = float(np.max(np.abs(x_new - x)))
        y = x_new + beta * (x_new - x)
        x = x_new
        if change <= tol:
            break
        if k % check_every == 0:
            exact = _support_solution(A, b, x > 0)
            if exact is not None:
                return exact
    return x


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto {x ≥ 0, Σx = 1}: sort, find the threshold θ, clip (Duchi et al. 2008).
    (core's project_capped_simplex also handles the upper cap; this hot loop needs only h = 1.)"""
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    rho = np.count_nonzero(u - cumulative / np.arange(1, v.size + 1) > 0)
    return np.maximum(v - cumulative[rho - 1] / rho, 0.0)


def _support_solution(A: np.ndarray, b: np.ndarray, support: np.ndarray) -> np.ndarray | None:
    """The KKT point with the given support, or None when that support is not optimal."""
    S = np.flatnonzero(support)
    m = S.size
    kkt = np.zeros((m + 1, m + 1))
    kkt[:m, :m] = A[np.ix_(S, S)]
    kkt[:m, m] = kkt[m, :m] = 1.0
    try:
        sol = np.linalg.solve(kkt, np.r_[-b[S], 1.0])
    except np.linalg.LinAlgError:
        return None
    x = np.zeros_like(b)
    x[S] = sol[:m]
    nu = -sol[m]  # (Ax + b)_S = ν on the support
    scale = 1e-9 * (1.0 + float(np.abs(b).max()) + float(np.abs(A).max()))
    if np.any(x[S] < -1e-12) or np.any((A @ x + b) < nu - scale):
        return None
    return np.clip(x, 0.0, None) / np.clip(x, 0.0, None).sum()

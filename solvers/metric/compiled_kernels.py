"""The numba kernels behind ``kernels.py`` (imported on first use: importing numba costs about a second).

Each kernel is one pass over the triplets it is given, reading the pair values q_p = u_pᵀ M u_p and the pair
indices of each triplet (⟨H_t, M⟩ = q_diff − q_same, digest §1.6) and writing its verdicts in place: no
temporary the size of the triplet set. Compiled functions are cached on disk (``cache=True``).
"""
from __future__ import annotations

import math

import numba
import numpy as np

_FOREVER = 1 << 30  # as ranges._FOREVER: steps of a range that reaches λ = 0
_STEP_SLACK = 1e-7  # as ranges._STEP_SLACK


#: Up to this many grid steps are counted by stepping down the grid (a multiplication each); longer ranges
#: take the logarithm of ``ranges.steps_covered``.
_WALKED_STEPS = 32


@numba.njit(cache=True, nogil=True)
def _steps_covered(lower_end: float, lam: float, rho: float, slack_scale: float) -> int:
    """``ranges.steps_covered`` for one range end: #{k ≥ 0 : λρ^k > λ_a ρ^(−slack)}, which is ⌈z − slack⌉ with
    z = log(λ_a/λ)/log ρ (k < z − slack ⇔ λρ^k > λ_a ρ^(−slack), as log ρ < 0), ``slack_scale`` = ρ^(−slack).

    Counted by walking down the grid for short ranges (most are: a few steps at ρ = 0.9): the rounding of
    λρ^k by repeated products (k ulps) is far inside the slack (≈ 1e-8 relative), so the count is the
    logarithm's except where λ_a lies within rounding of a slack-shifted grid point. NaN: no step."""
    if lower_end <= 0.0:
        return _FOREVER
    end = lower_end * slack_scale
    grid = lam
    for k in range(_WALKED_STEPS):
        if not grid > end:  # also NaN
            return k
        grid *= rho
    z = math.log(lower_end / lam) / math.log(rho) - _STEP_SLACK
    return _FOREVER if z > _FOREVER else int(math.ceil(z))


#: Grid points compared at once before walking on (``_range``): most ranges at ρ = 0.9 cover fewer.
_HEAD_STEPS = 8


@numba.njit(cache=True, nogil=True)
def _grid_head(lam: float, rho: float) -> np.ndarray:
    """λρ^k for k < _HEAD_STEPS, by the repeated products of ``_steps_covered``'s walk."""
    head = np.empty(_HEAD_STEPS)
    for k in range(_HEAD_STEPS):
        head[k] = lam
        lam *= rho
    return head


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")  # three call sites: inlined in each
def _range(h, nu, m, eps, lam0, lam, limit_L, rho, slack_scale, head):
    """(grid steps covered, is an L* range) of the RRPB range of Thm 4.1 for margin h = ⟨H, M0⟩ and ν = ‖H‖
    (``ranges.range_steps`` for one triplet: same operations, same order); (0, False) for an empty range.

    Written without data-dependent branches in the common case (measured: 25 % off the ledger's step on wine, 14 % on segment):
    the range end is computed for every triplet and an empty range selects 0; the count of grid points above it
    compares the first ``head`` points (``_grid_head``) at once, which is the walk's count since the grid
    decreases, and walks on (``_steps_covered``) only for a longer range or one that reaches λ = 0. A zero
    denominator gives ±inf or NaN as in numpy (error_model="numpy"), and NaN covers no step."""
    e_nu = eps * nu
    on_L = h + e_nu < limit_L
    ok = on_L or h - e_nu > 1.0
    s = h if on_L else -h
    m_nu = m * nu
    num = m_nu + s
    num += 2.0 * e_nu
    den = m_nu - s
    den -= -2.0 * limit_L if on_L else 2.0
    lower_end = lam0 * num / den
    end = lower_end * slack_scale
    count = 0
    for k in range(_HEAD_STEPS):
        count += head[k] > end
    if count == _HEAD_STEPS or lower_end <= 0.0:
        count = _steps_covered(lower_end, lam, rho, slack_scale)
    return (count if ok else 0), on_L


@numba.njit(cache=True, nogil=True, error_model="numpy")
def ledger_scan(release, side_L, t, diff, same, q, h_norm, apply_rule, m, eps, lam0, lam, gamma, rho,
                w, candidates, margins, row_start, anchor_row, sigma, row_min_steps):
    """One pass over T for the RRPB range ledger at step ``t`` (``ranges.RangeLedger.step``).

    A triplet is a candidate when ``release[c] ≤ t`` (never screened, left unscreened, or its range ends now).
    Ranges ending now (``release == t``) leave L̂/R̂: w_p gets −H_t's pair weights for an L range. With
    ``apply_rule`` each candidate gets the range of Thm 4.1 from (M0 = q's matrix, λ0, ε) (``range_steps``):
    covered steps > 0 ⇒ ``release = t + steps``, ``side_L`` set, and +H_t's weights into w for L; the others
    are written, in order, to ``candidates`` with their margin ⟨H_t, M0⟩ in ``margins``.

    The triplets come in rows ``row_start[r]:row_start[r + 1]`` of one anchor i and one same-class j; every row
    of an anchor has the diff pairs of the anchor's first row ``anchor_row[r]`` in the same order (as
    ``build_triplets`` makes them). A row whose worst case (``ranges.row_bounds``) has a range of at least
    ``row_min_steps`` steps gives that range to all its candidates without per-triplet work (the block test,
    proven safe in ``ranges.row_bounds``); ``sigma`` holds ‖u_p u_pᵀ‖²_F (diagonal: ‖u_p∘u_p‖²) per pair.
    Returns (#candidates left, #entering L̂, #entering R̂, #leaving L̂, #leaving R̂, #decided by rows).
    """
    n_left = in_L = in_R = out_L = out_R = by_rows = 0
    limit_L = 1.0 - gamma
    slack_scale = math.exp(-_STEP_SLACK * math.log(rho))
    head = _grid_head(lam, rho)
    q_min = q_max = s_max = 0.0
    for r in range(row_start.size - 1):
        first, stop = row_start[r], row_start[r + 1]
        row_steps, row_L = 0, False
        if apply_rule and row_min_steps > 0:
            if anchor_row[r] == r:  # the anchor's diff pairs: their smallest and largest q, largest σ
                q_min, q_max, s_max = np.inf, -np.inf, 0.0
                for c in range(first, stop):
                    v = q[diff[c]]
                    q_min = min(q_min, v)
                    q_max = max(q_max, v)
                    s_max = max(s_max, sigma[diff[c]])
            q_same = q[same[first]]
            nu_up = math.sqrt(s_max + sigma[same[first]]) * (1.0 + 1e-12)
            row_steps, row_L = _range(q_min - q_same, nu_up, m, eps, lam0, lam, limit_L, rho, slack_scale, head)
            if row_L or row_steps < row_min_steps:  # the lower margin bound decides only the R side
                row_steps, row_L = _range(q_max - q_same, nu_up, m, eps, lam0, lam, limit_L, rho, slack_scale, head)
                if not row_L or row_steps < row_min_steps:  # the upper bound decides only the L side
                    row_steps = 0
        for c in range(first, stop):
            rel = release[c]
            if rel > t:
                continue
            h = 0.0
            if rel == t:
                if side_L[c]:
                    w[diff[c]] -= 1.0
                    w[same[c]] += 1.0
                    out_L += 1
                else:
                    out_R += 1
            if apply_rule:
                if row_steps > 0:
                    steps, on_L = row_steps, row_L
                    by_rows += 1
                else:
                    h = q[diff[c]] - q[same[c]]
                    steps, on_L = _range(h, h_norm[c], m, eps, lam0, lam, limit_L, rho, slack_scale, head)
                # written and counted without a branch on the verdict, which follows no pattern: a triplet left
                # unscreened keeps its release step and is written at position n_left (≤ c) of the outputs
                screened = steps > 0
                release[c] = t + steps if screened else rel
                if screened:
                    side_L[c] = on_L
                    if on_L:
                        w[diff[c]] += 1.0
                        w[same[c]] -= 1.0
                in_L += screened and on_L
                in_R += screened and not on_L
                margins[n_left] = h
                candidates[n_left] = c
                n_left += not screened
                continue
            candidates[n_left] = c
            n_left += 1
    return n_left, in_L, in_R, out_L, out_R, by_rows


@numba.njit(cache=True, nogil=True)
def floor_margins(release, t, diff, same, q, out):
    """The least work of the ledger's step at ``t`` (``screening_profile``): the margin q_diff − q_same of every
    candidate (``release ≤ t``), written in order to ``out``; returns their count."""
    n = 0
    for c in range(release.size):
        if release[c] <= t:
            out[n] = q[diff[c]] - q[same[c]]
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def candidate_pairs(release, t, diff, same, used):
    """Marks in ``used`` the pairs of every triplet with ``release ≤ t`` (the ledger's candidates); their count."""
    count = 0
    for c in range(release.size):
        if release[c] <= t:
            for p in (diff[c], same[c]):
                if not used[p]:
                    used[p] = True
                    count += 1
    return count


@numba.njit(cache=True, nogil=True)
def _linear_min(hQ, hP, nu, r, PP, PQ):
    """``rules.linear_rule_min`` for one triplet (Thm 3.1, cases 2 and 3; same operations, same order)."""
    sphere_min = hQ - r * nu
    safe_nu = nu if nu > 0 else 1.0
    if PQ - r * hP / safe_nu >= 0:
        return sphere_min
    num = PP * nu * nu - hP * hP
    den = r * r * PP - PQ * PQ
    if not (num > 1e-14 * PP * nu * nu and den > 0):
        return sphere_min
    kappa = math.sqrt(num / den)
    beta = (hP - kappa * PQ) / PP
    out = hQ + (beta * hP - nu * nu) / kappa
    return out if out > sphere_min else sphere_min


@numba.njit(cache=True, nogil=True)
def sphere_linear_verdicts(hQ, hP, nu, r, PP, PQ, gamma, linear, undecided_only, to_L, to_R):
    """``rules.screen`` for the sphere rule (eq. (4)) and, with ``linear``, the linear rule (Thm 3.1):
    min/max of ⟨X, H_t⟩ over the ball (cut by ⟨P, X⟩ ≥ 0) against 1 and 1 − γ, written into the masks; with
    ``undecided_only`` a triplet either mask already marks is left as it is."""
    limit_L = 1.0 - gamma
    for c in range(hQ.size):
        if undecided_only and (to_L[c] or to_R[c]):
            continue
        r_nu = r * nu[c]
        lower = hQ[c] - r_nu
        upper = hQ[c] + r_nu
        if linear:
            low = _linear_min(hQ[c], hP[c], nu[c], r, PP, PQ)
            high = -_linear_min(-hQ[c], -hP[c], nu[c], r, PP, PQ)
            lower = low if low > lower else lower
            upper = high if high < upper else upper
        to_L[c] = upper < limit_L
        to_R[c] = lower > 1.0


@numba.njit(cache=True, nogil=True)
def gather_renumber(keep, idx, same, diff, n_pairs, renumber):
    """The triplets at positions ``keep`` of a subset (idx, same, diff over ``n_pairs`` pairs): their idx and
    pair indices; with ``renumber`` the pairs they use get compact numbers (``TripletSubset.part``).
    Returns (idx, same, diff, the used pairs' rows, whether they were renumbered: not when every pair is used)."""
    k = keep.size
    out_idx = np.empty(k, idx.dtype)
    out_same = np.empty(k, np.int32)
    out_diff = np.empty(k, np.int32)
    local = np.full(n_pairs if renumber else 0, -1, np.int32)
    n_used = 0
    for s in range(k):
        c = keep[s]
        out_idx[s] = idx[c]
        a, b = same[c], diff[c]
        if renumber:
            for p in (a, b):
                if local[p] < 0:
                    local[p] = 1  # marked; numbered below in pair order
                    n_used += 1
        out_same[s] = a
        out_diff[s] = b
    if not renumber or n_used == n_pairs:
        return out_idx, out_same, out_diff, np.empty(0, np.int64), False
    rows = np.empty(n_used, np.int64)
    j = 0
    for p in range(n_pairs):
        if local[p] > 0:
            local[p] = j
            rows[j] = p
            j += 1
    for s in range(k):
        out_same[s] = local[out_same[s]]
        out_diff[s] = local[out_diff[s]]
    return out_idx, out_same, out_diff, rows, True


@numba.njit(cache=True, nogil=True)
def sample_pair_values(Z, mu, ends, rows, out):
    """u_pᵀ M u_p = Σ_k μ_k (Z_a,k − Z_b,k)² for the pairs p = (a, b) = ``ends[rows[s]]``, with Z = X V and
    M = V diag(μ) Vᵀ (``TripletSubset.sample_form``'s pair values, with no rows of E built): into ``out[s]``."""
    r = mu.size
    for s in range(rows.size):
        a, b = ends[rows[s], 0], ends[rows[s], 1]
        total = 0.0
        for k in range(r):
            z = Z[a, k] - Z[b, k]
            total += mu[k] * z * z
        out[s] = total


@numba.njit(cache=True, nogil=True)
def laplacian_product(X, w, ends, rows, out):
    """``out`` = L X with L = Σ_s w_s (e_a − e_b)(e_a − e_b)ᵀ over the pairs (a, b) = ``ends[rows[s]]``: the
    sample form's Eᵀ(w ∘ U) (``TripletSubset.sample_form``), each u_p = x_a − x_b formed on the fly, not read
    from a gathered pair table. Xᵀ ``out`` is then Σ_s w_s u_p u_pᵀ."""
    out[:] = 0.0
    d = X.shape[1]
    for s in range(rows.size):
        weight = w[s]
        if weight == 0.0:
            continue
        a, b = ends[rows[s], 0], ends[rows[s], 1]
        for k in range(d):
            v = weight * (X[a, k] - X[b, k])
            out[a, k] += v
            out[b, k] -= v

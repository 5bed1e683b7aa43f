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


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")  # inlined in the candidates' loop
def _range(h, nu, m, eps, lam0, lam, limit_L, rho, slack_scale, head):
    """(grid steps covered, is an L* range) of the RRPB range of Thm 4.1 for margin h = ⟨H, M0⟩ and ν = ‖H‖
    (``ranges.range_steps`` for one triplet: same operations, same order); (0, False) for an empty range.

    Written without data-dependent branches in the common case (measured: 25 % off the ledger's step on wine,
    14 % on segment):
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


#: Columns of a ledger record (``ranges.RangeLedger``): the triplet, its two pairs, and its side (1: L̂).
IDX, DIFF, SAME, SIDE = 0, 1, 2, 3


@numba.njit(cache=True, nogil=True, error_model="numpy")
def ledger_scan(release, side_L, t, diff, same, q, h_norm, apply_rule, m, eps, lam0, lam, gamma, rho, w, candidates,
                margins):
    """The RRPB range ledger's step ``t`` as one pass over T (``ranges.RangeLedger``), for when its candidates are
    many: a triplet is a candidate when ``release[c] ≤ t`` (never screened, left unscreened, or its range ends
    now). Ranges ending now (``release == t``) leave L̂/R̂: w_p gets −H_t's pair weights for an L range. With
    ``apply_rule`` each candidate gets the range of Thm 4.1 from (M0 = q's matrix, λ0, ε) (``range_steps``):
    covered steps > 0 ⇒ ``release = t + steps``, ``side_L`` set, and +H_t's weights into w for L; the others
    are written, in order, to ``candidates`` with their margin ⟨H_t, M0⟩ in ``margins``.
    Returns (#candidates examined, #left, #entering L̂, #entering R̂, #leaving L̂, #leaving R̂)."""
    n_examined = n_left = in_L = in_R = out_L = out_R = 0
    limit_L = 1.0 - gamma
    slack_scale = math.exp(-_STEP_SLACK * math.log(rho))
    grid = _grid_head(lam, rho)
    for c in range(release.size):
        rel = release[c]
        if rel > t:
            continue
        n_examined += 1
        h = 0.0
        if rel == t:
            if side_L[c]:
                w[diff[c]] -= 1.0
                w[same[c]] += 1.0
                out_L += 1
            else:
                out_R += 1
        if apply_rule:
            h = q[diff[c]] - q[same[c]]
            steps, on_L = _range(h, h_norm[c], m, eps, lam0, lam, limit_L, rho, slack_scale, grid)
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
    return n_examined, n_left, in_L, in_R, out_L, out_R


@numba.njit(cache=True, nogil=True)
def fill_buckets(release, side_L, diff, same, h_norm, t, pool, pool_nu, head, tail, sizes, next_chunk, fill, free,
                 n_free):
    """Every triplet whose range covers step ``t`` and ends by step ``head.size − 1`` into the bucket of its end
    step (``ledger_step``'s buckets, empty before), as a record: the ledger moving from ``ledger_scan`` to buckets."""
    n = 0
    for c in range(release.size):
        n += t < release[c] < head.size
    box, box_nu, box_end = np.empty((n, 4), np.int32), np.empty(n), np.empty(n, np.int32)
    n = 0
    for c in range(release.size):
        if t < release[c] < head.size:
            box[n, IDX], box[n, DIFF], box[n, SAME], box[n, SIDE] = c, diff[c], same[c], side_L[c]
            box_nu[n], box_end[n] = h_norm[c], release[c]
            n += 1
    _append_all(box, box_nu, box_end, n, pool, pool_nu, head, tail, sizes, next_chunk, fill, free, n_free)


@numba.njit(cache=True, nogil=True)
def _append_all(box, box_nu, box_end, n_box, pool, pool_nu, head, tail, sizes, next_chunk, fill, free, n_free):
    """The first ``n_box`` records of ``box`` (``box_nu``) at the end of the buckets of their steps ``box_end``
    (``ledger_step``'s buckets), in order."""
    size = pool.shape[0] // next_chunk.size  # records per chunk
    for s in range(n_box):
        end = box_end[s]
        last = tail[end]
        if last < 0 or fill[last] == size:
            if n_free[0] == 0:
                raise RuntimeError("the range ledger ran out of bucket chunks")
            n_free[0] -= 1
            new = free[n_free[0]]
            next_chunk[new], fill[new] = -1, 0
            if last < 0:
                head[end] = new
            else:
                next_chunk[last] = new
            tail[end] = last = new
        r = last * size + fill[last]
        for col in range(4):
            pool[r, col] = box[s, col]
        pool_nu[r] = box_nu[s]
        fill[last] += 1
        sizes[end] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def _mark(records, s, used):
    """Marks the two pairs of record ``s``; how many were not marked yet."""
    n = 0
    for p in (records[s, DIFF], records[s, SAME]):
        if not used[p]:
            used[p] = True
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def candidate_pairs(previous, t, pool, head, next_chunk, fill, used):
    """Marks in ``used`` the pairs of the ledger's candidates at step ``t`` (``ledger_step``): the records
    ``previous`` and those of step t's bucket; returns how many it marked."""
    count = 0
    for s in range(previous.shape[0]):
        count += _mark(previous, s, used)
    size = pool.shape[0] // next_chunk.size  # records per chunk
    chunk = head[t]
    while chunk >= 0:
        for s in range(chunk * size, chunk * size + fill[chunk]):
            count += _mark(pool, s, used)
        chunk = next_chunk[chunk]
    return count


@numba.njit(cache=True, nogil=True, inline="always")
def _touch(diff, same, touched, seen, n):
    """Lists the pairs ``diff`` and ``same`` in ``touched[n:]`` unless ``seen``; the new count."""
    for p in (diff, same):
        if not seen[p]:
            seen[p] = True
            touched[n] = p
            n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _merge_tail(left, left_nu, margins, split, n):
    """``left[:split]`` and ``left[split:n]`` (with ``left_nu``, ``margins``) each in T's order after sorting the
    second: merged in place from the back into T's order (only the records after the first insertion move)."""
    order = np.argsort(left[split:n, IDX]) + split
    k = order.size
    tail_rec = np.empty((k, 4), left.dtype)
    tail_nu, tail_margin = np.empty(k), np.empty(k)
    for j in range(k):
        for col in range(4):
            tail_rec[j, col] = left[order[j], col]
        tail_nu[j], tail_margin[j] = left_nu[order[j]], margins[order[j]]
    i, j, out = split - 1, k - 1, n - 1
    while j >= 0:
        if i >= 0 and left[i, IDX] > tail_rec[j, IDX]:
            for col in range(4):
                left[out, col] = left[i, col]
            left_nu[out], margins[out] = left_nu[i], margins[i]
            i -= 1
        else:
            for col in range(4):
                left[out, col] = tail_rec[j, col]
            left_nu[out], margins[out] = tail_nu[j], tail_margin[j]
            j -= 1
        out -= 1


@numba.njit(cache=True, nogil=True, error_model="numpy")
def ledger_step(t, previous, previous_nu, q, apply_rule, m, eps, lam0, lam, gamma, rho, w, touched, seen, release,
                side_L, left, left_nu, margins, pool, pool_nu, head, tail, sizes, next_chunk, fill, free, n_free):
    """The RRPB range ledger's step ``t`` (``ranges.RangeLedger``) over its candidates only, held as records
    (triplet, diff pair, same pair, side; ``*_nu``: ‖H_t‖_F): the last step's candidates ``previous`` (in T's
    order), then the records of step t's bucket, whose ranges end now: they leave L̂/R̂ (w_p gets −H_t's pair
    weights for an L range, unless its new range is an L range again: at ρ = 0.99 most are, and their weights
    are not touched) and their chunks go back to the free ones. Every pair whose weight it changes is listed
    once in ``touched`` (room for two per candidate) and marked in ``seen``, which the caller clears.

    A bucket (one per step up to ``head.size − 1``) is a list of chunks of records in ``pool``/``pool_nu``,
    from ``head`` to ``tail`` through ``next_chunk``, ``fill`` records in each, ``sizes`` records in all; unused
    chunks are the stack ``free[:n_free[0]]``. With ``apply_rule`` each candidate gets the range of Thm 4.1
    from (M0 = q's matrix, λ0, ε) (``ranges.range_steps``): covered steps > 0 ⇒ ``release = t + steps`` and
    ``side_L`` (over T), +H_t's pair weights into w for an L range, and the record goes to the bucket of step
    t + steps (if there is one; all together after the pass, ``_append_all``); the others go into ``left``, in
    T's order, with their margin ⟨H_t, M0⟩ in ``margins``. Without it every candidate is left. Records are read
    and written in order; only q and w are read and written at random (a pair's value and weight).
    Returns (#left, #entering L̂, #entering R̂, #leaving L̂, #leaving R̂, #touched)."""
    n_left = in_L = in_R = out_L = out_R = n_touched = n_box = 0
    limit_L = 1.0 - gamma
    slack_scale = math.exp(-_STEP_SLACK * math.log(rho))
    grid = _grid_head(lam, rho)
    size = pool.shape[0] // next_chunk.size  # records per chunk
    n = previous.shape[0] + sizes[t]
    box, box_nu, box_end = np.empty((n, 4), np.int32), np.empty(n), np.empty(n, np.int32)  # the screened, in order
    records, nus = previous, previous_nu
    s, stop = 0, previous.shape[0]
    chunk, following = -1, head[t]  # chunk −1: reading ``previous``
    head[t], tail[t], sizes[t] = -1, -1, 0
    split = 0  # ``left[:split]`` came from ``previous``
    while True:
        if s == stop:
            if chunk >= 0:  # read: free (no record is written to bucket t at step t)
                free[n_free[0]] = chunk
                n_free[0] += 1
            else:
                split = n_left
            if following < 0:
                break
            chunk, following = following, next_chunk[following]
            records, nus = pool, pool_nu
            s, stop = chunk * size, chunk * size + fill[chunk]
            continue
        diff, same = records[s, DIFF], records[s, SAME]
        was_L = chunk >= 0 and records[s, SIDE] != 0  # leaves L̂ now, unless its new range is an L range again
        out_L += was_L
        out_R += chunk >= 0 and not was_L
        h, steps, on_L = 0.0, 0, False
        if apply_rule:
            h = q[diff] - q[same]
            steps, on_L = _range(h, nus[s], m, eps, lam0, lam, limit_L, rho, slack_scale, grid)
        c = records[s, IDX]
        if steps == 0:
            left[n_left, IDX], left[n_left, DIFF], left[n_left, SAME], left[n_left, SIDE] = c, diff, same, 0
            left_nu[n_left] = nus[s]
            margins[n_left] = h
            n_left += 1
        else:
            end = t + steps
            release[c] = end
            side_L[c] = on_L
            in_L += on_L
            in_R += not on_L
            if end < head.size:
                box[n_box, IDX], box[n_box, DIFF], box[n_box, SAME], box[n_box, SIDE] = c, diff, same, on_L
                box_nu[n_box], box_end[n_box] = nus[s], end
                n_box += 1
        now_L = steps > 0 and on_L
        if now_L != was_L:  # H_t's pair weights change only when it enters or leaves L̂
            sign = 1.0 if now_L else -1.0
            w[diff] += sign
            w[same] -= sign
            n_touched = _touch(diff, same, touched, seen, n_touched)
        s += 1
    if n_left > split:
        _merge_tail(left, left_nu, margins, split, n_left)
    _append_all(box, box_nu, box_end, n_box, pool, pool_nu, head, tail, sizes, next_chunk, fill, free, n_free)
    return n_left, in_L, in_R, out_L, out_R, n_touched


@numba.njit(cache=True, nogil=True, inline="always")
def _loss_term(h, gamma, half_inv_gamma, inv_gamma):
    """(α, ℓ) at margin h: the smoothed hinge of ``problem.loss`` and α = −ℓ'(h) of ``problem.dual_alpha`` (the
    hinge, γ = 0, takes α = 0 at the kink), with 1/γ multiplied rather than divided by. Most triplets have h ≥ 1
    and take the first branch; NaN (a diverged iterate) gives NaN, as numpy does (0 and NaN for the hinge)."""
    z = 1.0 - h
    if z <= 0.0:
        return 0.0, 0.0
    if gamma == 0.0:
        return (1.0 if z > 0.0 else 0.0), z
    if z <= gamma:
        return z * inv_gamma, z * z * half_inv_gamma
    if z > gamma:
        return 1.0, z - 0.5 * gamma
    return z, z  # NaN


@numba.njit(cache=True, nogil=True)
def triplet_terms(x, q, diff, same, gamma, from_pairs, alpha, w):
    """An evaluation's per-triplet work in one pass (``TripletSubset.loss_terms``): with ``from_pairs`` the margin
    x_t = q_diff − q_same into ``x``, else x as given; α_t = −ℓ'(x_t) (eq. (2)) into ``alpha``; α_t added to w_diff
    and subtracted from w_same (Σ_t α_t H_t = Σ_p w_p u_p u_pᵀ); returns Σ_t ℓ(x_t)."""
    total = 0.0
    inv_gamma = 1.0 / gamma if gamma > 0.0 else 0.0
    half_inv_gamma = 0.5 * inv_gamma
    for t in range(diff.size):
        if from_pairs:
            x[t] = q[diff[t]] - q[same[t]]
        a, loss = _loss_term(x[t], gamma, half_inv_gamma, inv_gamma)
        alpha[t] = a
        total += loss
        if a != 0.0:
            w[diff[t]] += a
            w[same[t]] -= a
    return total


@numba.njit(cache=True, nogil=True)
def floor_margins(candidates, diff, same, q, out):
    """The least work of the ledger's step (``screening_profile``): the margin q_diff − q_same of each of the
    ``candidates``, in order, into ``out``."""
    for s in range(candidates.size):
        c = candidates[s]
        out[s] = q[diff[c]] - q[same[c]]


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
def sphere_linear_verdicts(hQ, q, diff, same, from_pairs, hP, nu, r, PP, PQ, gamma, linear, undecided_only, to_L,
                           to_R):
    """``rules.screen`` for the sphere rule (eq. (4)) and, with ``linear``, the linear rule (Thm 3.1):
    min/max of ⟨X, H_t⟩ over the ball (cut by ⟨P, X⟩ ≥ 0) against 1 and 1 − γ, written into the masks; with
    ``undecided_only`` a triplet either mask already marks is left as it is. ⟨H_t, Q⟩ is ``hQ[t]``, or with
    ``from_pairs`` q_diff − q_same from the centre's pair values ``q`` (no array of margins)."""
    limit_L = 1.0 - gamma
    for c in range(to_L.size):
        if undecided_only and (to_L[c] or to_R[c]):
            continue
        h = q[diff[c]] - q[same[c]] if from_pairs else hQ[c]
        r_nu = r * nu[c]
        lower = h - r_nu
        upper = h + r_nu
        if linear:
            low = _linear_min(h, hP[c], nu[c], r, PP, PQ)
            high = -_linear_min(-h, -hP[c], nu[c], r, PP, PQ)
            lower = low if low > lower else lower
            upper = high if high < upper else upper
        to_L[c] = upper < limit_L
        to_R[c] = lower > 1.0


@numba.njit(cache=True, nogil=True)
def split_screened(to_L, to_R, diff, same, known, has_known, keep, known_kept, was_L, w_L):
    """A reduced problem narrowed by new verdicts, in one pass over its active triplets (``ReducedProblem.narrowed``):
    the positions of the triplets neither mask marks into ``keep`` (their known margins, with ``has_known``, into
    ``known_kept``), and the change of L̂ against ``was_L`` (the last narrowing's, or none) in w_L: +1 for a
    triplet newly in L̂, −1 for one no longer in it, on its pair weights (H_t = u_diff u_diffᵀ − u_same u_sameᵀ,
    so Σ_t ΔL_t H_t = Σ_p (w_L)_p u_p u_pᵀ); ``was_L`` becomes ``to_L``. Most triplets keep their side from one
    λ to the next, so the branch on a change is predictable. Returns (how many kept, in L̂, in R̂)."""
    n_keep = 0
    n_L = 0
    for c in range(to_L.size):
        in_L = to_L[c]
        if in_L != was_L[c]:
            change = 1.0 if in_L else -1.0
            w_L[diff[c]] += change
            w_L[same[c]] -= change
            was_L[c] = in_L
        n_L += in_L
        keep[n_keep] = c  # written for every triplet, counted for the kept: no branch on the verdict
        if has_known:
            known_kept[n_keep] = known[c]
        n_keep += not (in_L or to_R[c])
    return n_keep, n_L, to_L.size - n_keep - n_L


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


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def sample_pair_values(Z, mu, ends, rows, out):
    """u_pᵀ M u_p = Σ_k μ_k (Z_a,k − Z_b,k)² for the pairs p = (a, b) = ``ends[rows[s]]``, with Z = X V and
    M = V diag(μ) Vᵀ (``TripletSubset.sample_form``'s pair values, with no rows of E built): into ``out[s]``.
    The sum over k may be reordered (``reassoc``: SIMD lanes), 2.3× faster at rank 32 (90,000 pairs of 9,001
    samples: 0.91 against 2.10 ms); NaN and ±inf still propagate (no ``nnan``/``ninf``)."""
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

"""The Algorithm tab of the sparse page: the equations of seed 001 and the pseudo-code the solvers follow."""
from __future__ import annotations

import streamlit as st

PSEUDO_CODE = """\
w⁰ = 0, Unchanged = 0
for k = 0, 1, 2, ...
    if k > 0 and supp(wᵏ⁻¹) ⊆ Jₖ:  Unchanged += 1      # same subspace A_J
    else:                          Unchanged = 0
    if Newton (PG+, APG+) and Unchanged ≥ S:             # Algorithm 2
        zᵏ = t Newton-CG steps on f restricted to A_J     # (25)–(27), Armijo (26)
        if it fails:  zᵏ = wᵏ, Unchanged = 0
    elif extrapolation (APG, APG+) and same subspace:    # Algorithm 1
        d = wᵏ − wᵏ⁻¹;  t̂ from (18), clipped by (19)
        t = ηⁱ t̂ for the first i with (12);  zᵏ = wᵏ + t d
    else:
        zᵏ = wᵏ
    wᵏ⁺¹ = P_{A_s}(zᵏ − λ∇f(zᵏ))                         # one gradient evaluation (GE)
    stop when Residual(zᵏ) (24) ≤ ε̂                      # and return zᵏ
"""


def algorithm_tab() -> None:
    st.markdown("**Problem (1)**: a finite union of $s$-dimensional coordinate subspaces (7)")
    st.latex(r"\min_{w}\ f(w)\quad \text{s.t.}\ \|w\|_0 \le s,\qquad "
             r"A_s = \bigcup_{|J| = s} A_J,\ A_J = \operatorname{span}\{e_j : j \in J\}")
    st.latex(r"\text{LS (3): } f(w) = \tfrac12\|y - Xw\|^2,\qquad "
             r"\text{LR (23): } f(w) = \sum_i \log\big(1 + e^{-y_i x_i^\top w}\big) + \tfrac{\mu}{2}\|w\|^2")
    st.markdown("**PG (5)**: hard thresholding of a gradient step, $\\lambda = 0.999/L$, with $L$ an upper bound "
                "of $\\sigma_{\\max}(X)^2$ within about 2 % (exact for $\\min(m, n) \\le 64$; else a few Lanczos "
                "steps from a random start; App. B uses MATLAB's eigs at tolerance $10^{-3}$)")
    st.latex(r"w^{k+1} \in P_{A_s}\big(w^k - \lambda \nabla f(w^k)\big)")
    st.markdown("**Extrapolation (Algorithm 1)** along $d^k = w^k - w^{k-1} \\in A_J$, accepted when")
    st.latex(r"f(w^k + t_k d^k) \le f(w^k) - \sigma t_k^2 \|d^k\|^2 \qquad (12)")
    st.latex(r"\hat t_k = -\frac{\langle \nabla f(w^k), d^k\rangle}{\langle \nabla^2 f(w^k) d^k, d^k\rangle}\ (18),\qquad "
             r"\hat t_k \leftarrow P_{[c_k\alpha_{\min},\, c_k\alpha_{\max}]}(\hat t_k)\ (19)")
    st.latex(r"c_k = \frac{\|(\nabla f(w^k))_J\|}{\zeta_k \|d^k\|},\qquad "
             r"\zeta_k = -\frac{\langle d^k, \nabla f(w^k)\rangle}{\|d^k\|\,\|(\nabla f(w^k))_J\|} \qquad (20)")
    st.markdown("Through the cached margin $Xw^k$ each trial step costs $O(m)$ (17): $Xd^k = Xw^k - Xw^{k-1}$.")
    st.markdown("**Newton on the identified subspace (Algorithm 2, App. A)**: PCG with $M = \\operatorname{diag}(H)$ on")
    st.latex(r"\min_p\ Q_J(p) = \langle \nabla f_J, p\rangle + \tfrac12 \langle p, \nabla^2 f_J\, p\rangle \qquad (25)")
    st.latex(r"\text{stop at } i = s \text{ or } \frac{Q_i - Q_{i-1}}{Q_i / i} \le "
             r"\min\Big\{0.5, \sqrt{\langle \nabla f_J, M^{-1}\nabla f_J\rangle}\Big\} \qquad (27)")
    st.latex(r"f_J(w_J + \beta^i p) \le f_J(w_J) + \sigma_2 \beta^i \langle \nabla f_J(w_J), p\rangle"
             r"\quad\text{smallest } i \ge 0 \qquad (26)")
    st.markdown("**Stopping rule (24)**, zero exactly at L-stationary points:")
    st.latex(r"\operatorname{Residual}(w) = \frac{\|w - P_{A_s}(w - \lambda\nabla f(w))\|}"
             r"{1 + \|w\| + \lambda \|\nabla f(w)\|} < \hat\epsilon = 10^{-6}")
    st.markdown("**Beyond the paper** (the *Subset quality* tab and the estimators' defaults; every chart on "
                "the other tabs runs the paper's exact methods): the same problem (1) on unit-norm columns "
                "$\\tilde X = XD^{-1}$, $w = D^{-1}\\tilde w$; extra starts (a greedy forward support, and a path "
                "$s' = 1, \\dots, s$ where each solve starts at "
                "the previous solution), the best kept; and a swap polish: for each $i$ in the support refit without it, add back "
                "the best of the 5 columns with the largest $|\\nabla_j f|/\\|x_j\\|$, keep the exchange if $f$ drops.")
    st.markdown("**Pseudo-code** (PG, APG, PG+ and APG+ are this loop with the two switches; PG-LL and APG-LL+ "
                "replace the last PG step by Li & Lin's monotone accelerated step, two GE per iteration)")
    st.code(PSEUDO_CODE, language="text")
    st.markdown("Reading choices (recorded in `solvers/sparse`): *same subspace* means supp(wᵏ⁻¹) ⊆ Jₖ with "
                "Jₖ the index set the projection kept; the residual is measured at zᵏ, the point whose full "
                "gradient was computed; (26) takes the *smallest* i (the paper's “largest” is a typo); "
                "backtracking (12) is capped at 60 halvings; GraSP is the greedy baseline of App. C.4.")

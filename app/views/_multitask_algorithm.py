"""The Algorithm tab of the multitask page: the formulation, the three methods and the errata we fixed."""
from __future__ import annotations

import streamlit as st


def algorithm_tab() -> None:
    st.markdown("**Convex relaxation of ASO (rASO), Eq. (8)**: m linear predictors $u_\\ell$ (columns of $U$) "
                "share a subspace through $M$, the relaxed $\\Theta^T\\Theta$")
    st.latex(r"\min_{U,\,b,\,M}\ \sum_{\ell=1}^m \frac{1}{n_\ell}\sum_{i=1}^{n_\ell} L\big(u_\ell^T x_i^\ell + b_\ell,"
             r"\ y_i^\ell\big) + c\,\operatorname{tr}\big(U^T(\eta I + M)^{-1}U\big)"
             r"\quad \text{s.t. } \operatorname{tr}M = h,\ 0 \preceq M \preceq I")
    st.latex(r"\eta = \beta/\alpha,\qquad c = \alpha\eta(1+\eta) = \beta(1+\eta)")
    st.markdown("$h = 0$ forces $M = 0$ (independent ridge with weight $\\alpha+\\beta$); $h = d$ forces "
                "$M = I$ (independent ridge with weight $\\beta$).")
    st.markdown("**APG, Algorithm 1** (PG: the same with $a_i \\equiv 0$). $Z = (U, b, M)$, $f$ smooth, "
                "$g$ the hinge loss or 0, $C$ the constraint set.")
    st.code("""Z_1 = Z_0 = (0, 0, (h/d) I);  t_{-1} = 0, t_0 = 1;  L = L_0
for i = 1, 2, ...
    a_i = (t_{i-2} - 1) / t_{i-1}
    while λ_min(ηI + (1+a_i) M_i - a_i M_{i-1}) < η/2:  a_i = a_i / 2     # domain safeguard (not in the paper)
    S = (1 + a_i) Z_i - a_i Z_{i-1}                                         # Eq. (35)
    repeat  Ẑ = argmin_{Z ∈ C} L/2 ‖Z - (S - ∇f(S)/L)‖² + g(Z)             # Eq. (36): eigen-projection (75)
            if f(Ẑ) ≤ f(S) + <∇f(S), Ẑ - S> + L/2 ‖Ẑ - S‖²: break          # Eq. (37)
            L = 2 L
    Z_{i+1} = Ẑ;   t_i = (1 + sqrt(1 + 4 t_{i-1}²)) / 2""", language="text")
    st.latex(r"\nabla_U = \nabla_U\text{loss} + 2c\,(\eta I+M)^{-1}U,\qquad "
             r"\nabla_M = -c\,(\eta I+M)^{-1}UU^T(\eta I+M)^{-1}")
    st.markdown("Theorem A.1: $F(Z_{k+1}) - F^* \\le 2L_k\\|Z_0 - Z^*\\|_F^2/k^2$ (drawn on the Convergence tab).")
    st.markdown("**BCD, Algorithm 2**: alternate an exact $U$-step (closed form for least squares, Newton for "
                "logistic, an SVM with kernel $X(\\eta I+M)X^T$ and $C = 1/(2c\\,n_\\ell)$ for hinge) and the exact "
                "$M$-step: with the thin SVD $U = P_1\\Sigma P_2^T$, $M = P_1\\operatorname{diag}(\\gamma^*)P_1^T$ where")
    st.latex(r"\gamma^* = \arg\min_{\gamma}\ \sum_{i=1}^q \frac{\sigma_i^2}{\eta+\gamma_i}\ \ \text{s.t.}\ "
             r"\sum_i\gamma_i = h,\ 0\le\gamma_i\le 1 \qquad \text{(14)/(71)}")
    st.latex(r"\gamma_i(t) = \operatorname{clip}\Big(\frac{\sigma_i}{\sqrt t} - \eta,\ 0,\ 1\Big)\ \ (78),\qquad "
             r"t_i^l = \frac{\sigma_i^2}{(1+\eta)^2},\ t_i^u = \frac{\sigma_i^2}{\eta^2}\ \ (80),\qquad "
             r"t_{opt} = \Big(\frac{\sum_{i\in I_m}\sigma_i}{h - |I_1| + \eta|I_m|}\Big)^2\ \ (82)")
    st.markdown("**Errata fixed** (from the implementation digest, checked here): Algorithm 3 line 21 must set "
                "$t_{max}$ (not $t_{min}$); its drop rules (lines 25–32) and the sets $I_l, I_u$ after (80) have "
                "$l$ and $u$ swapped; line 32 misses the $\\sqrt t$ and uses $t$ before it is known; the prox (72) "
                "drops the $1/n_\\ell$ of (64); the SVM dual (70) is a max and its recovery "
                "$u = (\\eta I+M)X\\operatorname{diag}(y)\\beta/(2c)$ is missing; when rank $U < h$ Eq. (71) is "
                "infeasible and the M-step spreads the remaining trace over the null space of $U^T$.")

"""The Algorithm tab of the metric page: the problem, the bounds, the rules and the path, with equations."""
from __future__ import annotations

import streamlit as st


def algorithm_tab() -> None:
    st.markdown("**RTLM** (Sec. 2): learn $M \\succeq O$ so that, for every triplet $(i, j, l)$ with $y_i = y_j \\ne "
                "y_l$, the different-class point is farther than the same-class one by a margin.")
    st.latex(r"\min_{M \succeq O} P_\lambda(M) = \sum_{ijl} \ell(\langle M, H_{ijl} \rangle) + \frac{\lambda}{2}"
             r"\|M\|_F^2,\quad H_{ijl} = (x_i - x_l)(x_i - x_l)^\top - (x_i - x_j)(x_i - x_j)^\top")
    st.latex(r"\ell(x) = \begin{cases} 0 & x > 1 \\ \frac{(1-x)^2}{2\gamma} & 1-\gamma \le x \le 1 \\ "
             r"1 - x - \frac{\gamma}{2} & x < 1 - \gamma \end{cases}\qquad "
             r"D_\lambda(\alpha) = -\frac{\gamma}{2}\|\alpha\|^2 + \alpha^\top 1 - \frac{1}{2\lambda}"
             r"\Big\|\Big[\sum \alpha_{ijl} H_{ijl}\Big]_+\Big\|_F^2")
    st.markdown("At the optimum (eq. (3)): $\\langle H, M^\\star\\rangle < 1-\\gamma \\Rightarrow \\alpha^\\star = 1$ "
                "(set $\\mathcal L^\\star$), $\\langle H, M^\\star\\rangle > 1 \\Rightarrow \\alpha^\\star = 0$ "
                "($\\mathcal R^\\star$). Screening finds members of both sets **before** the optimum is known, "
                "so they can be removed without changing $M^\\star$.")
    st.markdown("**Step 1: a sphere that contains $M^\\star$** (Sec. 3.2)")
    st.latex(r"\text{GB: } Q = M - \tfrac{1}{2\lambda}\nabla P_\lambda(M),\ r = \tfrac{1}{2\lambda}\|\nabla P_\lambda(M)"
             r"\|_F \qquad \text{PGB: } Q = [Q_{GB}]_+,\ r^2 = r_{GB}^2 - \|[Q_{GB}]_-\|_F^2")
    st.latex(r"\text{DGB: } Q = M,\ r = \sqrt{2(P_\lambda(M) - D_\lambda(\alpha))/\lambda}\qquad"
             r"\text{CDGB: } Q = \tfrac{1}{\lambda}[\textstyle\sum \alpha H]_+,\ r = \sqrt{G_D/\lambda}")
    st.latex(r"\text{RRPB: } Q = \frac{\lambda_0 + \lambda_1}{2\lambda_1} M_0,\ r = \frac{|\lambda_0 - \lambda_1|}"
             r"{2\lambda_1}\|M_0\|_F + \frac{|\lambda_0 - \lambda_1| + \lambda_0 + \lambda_1}{2\lambda_1}\varepsilon")
    st.markdown("**Step 2: a rule per triplet** (Sec. 3.1)")
    st.latex(r"\text{sphere (4): } \langle H, Q\rangle - r\|H\|_F > 1 \Rightarrow \mathcal R^\star,\qquad "
             r"\langle H, Q\rangle + r\|H\|_F < 1 - \gamma \Rightarrow \mathcal L^\star")
    st.markdown("*sphere + linear* (Thm 3.1) adds a half-space $\\langle P, X\\rangle \\ge 0$ that contains the PSD "
                "cone and solves the cut ball in closed form; *sphere + semidefinite* intersects the ball with the "
                "cone and decides through the one-dimensional dual $\\max_y -\\|[Q + yH]_+\\|^2 + 2Cy + \\|Q\\|^2 > r^2$.")
    st.markdown("**Range extension** (Thm 4.1): from one reference $(M_0, \\lambda_0, \\varepsilon)$ a triplet stays "
                "in $\\mathcal R^\\star$ for every $\\lambda \\in (\\lambda_a, \\lambda_b)$ with")
    st.latex(r"\lambda_a = \lambda_0\frac{m\nu - h + 2\varepsilon\nu}{h - 2 + \nu m},\quad "
             r"\lambda_b = \lambda_0\frac{m\nu + h}{\nu m - h + 2 + 2\varepsilon\nu},\quad "
             r"h = \langle H, M_0\rangle,\ \nu = \|H\|_F,\ m = \|M_0\|_F")
    st.markdown("**The path with screening** (Sec. 5)")
    st.code("""K = [Σ_t H_t]_+ ;  λ = λ_max = max_t ⟨H_t, K⟩/(1 − γ) ;  M = K/λ ;  ε = 0     # exact at λ_max
for t = 1, 2, ...:
    λ_prev, M_prev, ε_prev = λ, M, ε ;  λ = ρ λ_prev
    L̂, R̂ = rule(first bound's sphere from (M_prev, λ_prev, ε_prev) at λ)  # path screening over all of T,
                                                                       #   or with ranges: RRPB intervals from
                                                                       #   earlier steps, fresh ones for the rest
    L̂, R̂ ∪= rule(other bounds' spheres at λ)                          # only while they pay, else back off
    M = M_prev
    repeat:                                                            # projected gradient, BB step
        M = [M − η ∇P̃_λ(M)]_+                                           # P̃: L̂ linearised, R̂ dropped
        every 10 iterations: L̂, R̂ ∪= rule(sphere at M)                 # dynamic screening
        # active set (Sec. 5.3): ∇P̃ over the triplets with positive loss only; a full pass renews them
        # every 10 iterations, and as soon as they converge, to confirm the gap below
    until (P̃(M) − D̃(α(M))) / max(1, |P̃(M)|) ≤ tol
    ε = sqrt(2 gap/λ) ; stop when the loss elasticity < 0.01""", language="text")

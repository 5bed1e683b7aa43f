"""The Algorithm tab of the NPSVC++ page: the model, Algorithms 1 and 2, and the errata we fixed."""
from __future__ import annotations

import streamlit as st


def algorithm_tab() -> None:
    st.markdown("**Nonparallel classifiers** (eq. 2, Table 1): one hyperplane $f_l$ per class, close to its own "
                "class $S_l$ and at least 1 away from the others $N_l$; predict the nearest hyperplane (eq. 21).")
    st.latex(r"J_l = \sum_{i\in S_l} \tfrac12 f_l(x_i)^2 + c\sum_{i\in N_l} [1 - f_l(x_i)]_+ + R(f_l),\qquad "
             r"h(x) = \arg\min_l \frac{|f_l(x)|}{\|\tilde w_l\|}")
    st.markdown("**NPSVC++** shares a learned encoder $z$ between the classes (eq. 6) and treats the $K$ objectives "
                "as one multi-objective problem, solved through the Chebyshev scalarisation (8) and its dual (9):")
    st.latex(r"f_l(x) = \langle w_l, \phi(x)\rangle + v_l^\top z(x),\qquad "
             r"\min_\theta \max_l J_l(\theta) \;\ge\; \max_{\tau\in\Delta}\min_\theta \sum_l \tau_l J_l(\theta)")
    st.markdown("The weights $\\tau$ are the *Pareto weights*; the page plots the primal $\\max_l J_l$, the dual "
                "$\\tau^\\top J$ and their gap.")
    st.markdown("#### Algorithm 1: K-NPSVC++ (kernel), as implemented")
    st.latex(r"K + \epsilon I = \Psi\Psi^\top,\quad z(x) = \hat P^\top \psi(x),\ \hat P^\top\hat P = I,\quad "
             r"M = \Psi^\top L \Psi")
    st.code(
        "precompute, per class l:  Q_l = (r1 I + Ψ_lᵀΨ_l)⁻¹ (Woodbury),  S_l = Ψ_{−l} Q_l Ψ_{−l}ᵀ\n"
        "initialise P̂ orthonormal, V, Û random, τ = 1/K\n"
        "repeat until (max J − τᵀJ)/max J ≤ tol:\n"
        "  U-step   λ_l = argmin_{0≤λ≤c} ½λᵀS_lλ + (r1 Ψ_{−l}Q_l P̂v_l − 1)ᵀλ ;  û_l = Q_l(r1 P̂v_l + Ψ_{−l}ᵀλ_l)\n"
        "  V-step   V = r1/(r1 + r2) · P̂ᵀÛ                                              (17)\n"
        "  P-step   P̂ ← polar((σI − μM)P̂ + r1 Û diag(τ) Vᵀ), a few times (GPI)           (18–19)\n"
        "  τ-step   τ* = argmin_{τ∈Δ} ½‖Σ τ_l ∇^St J_l‖² − γ τᵀJ ;  τ ← (1−β)τ + βτ*      (20, 26)\n"
        "  descent  P̂ ← polar(P̂ − η Σ τ_l ∇^St J_l)                                     (Thm. 2)",
        language="text")
    st.latex(r"\nabla^{St}_{\hat P} J_l = \mu(I - \hat P\hat P^\top)M\hat P + r_1(\hat P v_l \hat u_l^\top \hat P - "
             r"\hat u_l v_l^\top)")
    st.markdown("The box QPs are solved by projected gradient with Barzilai–Borwein steps and an exact line search, "
                "with a Newton step on the free variables every tenth iteration; warm-started from the previous "
                "outer iteration. TWSVM is the same dual with $\\hat P v_l = 0$ (TBSVM form, bias in the kernel); "
                "pinball TWSVM widens the box to $-\\tau_p c \\le \\lambda \\le c$; NPSVM's ε-insensitive own-class "
                "loss adds multipliers $\\alpha^\\pm \\in [0, 1]$; LSTSVM solves one linear system per class.")
    st.markdown("#### Algorithm 2: D-NPSVC++ (deep), per mini-batch $B$")
    st.latex(r"J_l = \frac{1}{|B|}\Big[\sum_{y_i=l}\tfrac12 f_{il}^2 + \frac{c}{K-1}\sum_{y_i\neq l}"
             r"\tfrac12[s - f_{il}]_+^2\Big],\qquad f_{il} = \tilde w_l^\top \mathrm{LN}([\phi(x_i); z(x_i)])")
    st.code(
        "θ-step  one SGD step on τᵀJ for all parameters                                   (10)\n"
        "τ-step  heads frozen; forward pass again (φ(x_B) reused once the prior is frozen: it cannot have\n"
        "        moved); G_l = ∇_{Z_B} J_l by autograd\n"
        "        τ* = argmin_{τ∈Δ} ½‖Σ τ_l G_l‖² − γ_p τᵀJ ;  τ ← βτ* + (1−β)τ             (25, 26)\n"
        "        one SGD step on τᵀJ for the shared parameters only\n"
        "γ_p = γ_max/2 · (1 + cos(pπ/T)) over the epochs; learning rate cosine-annealed",
        language="text")
    st.markdown("DTWSVN (Li & Yang 2022) is the same network with $\\tau = 1/K$ fixed (eq. A.15); the cross-entropy "
                "net uses the heads as softmax logits.")
    st.markdown("**Why β is 0.1 here, not the paper's 0.85.** τ* is sparse. With β = 0.85 per mini-batch, τ follows "
                "τ* within two or three batches: τ is nearly one-hot on a class that changes from batch to batch, the other "
                "classes get no gradient, and the one objective left is weighted about K times more than in DTWSVN "
                "at the same learning rate, twice per batch. With the CNN prior on digits the run stays at chance "
                "accuracy and diverges within eight epochs. A small β makes τ an average of τ* over about 1/β "
                "batches, so every class keeps a share (min τ_l ≈ 0.04 at the end on digits).")
    st.markdown("#### What we corrected in the paper's formulas")
    st.markdown(
        "- eq. (14)/(A.11): $Q_{K,\\Psi} = \\Psi_{-l}^\\top Q$ has the wrong shape; it is $Q_l\\Psi_{-l}^\\top$, and "
        "$Q_{K,K} = \\Psi_{-l} Q_l \\Psi_{-l}^\\top$.\n"
        "- eq. (16)/(A.9): the linear term misses the factor $r_1$: $(r_1 R_l^\\top \\hat P v_l - 1)^\\top\\lambda$.\n"
        "- eq. (A.5): the sign of the λ term is +, consistent with (A.8).\n"
        "- §4.1: GPI *maximises* (19) (the text says minimum).\n"
        "Each correction is checked in the tests: the dual solution equals the primal solved by cvxpy.")

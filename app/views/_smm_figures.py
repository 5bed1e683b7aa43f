"""Figures of the SMM page (seed 002): solution anatomy, paths, the Fig. 1 toy."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app import ui
from solvers import smm

ROLE_COLORS = {"ASM": "#CC0033", "SM": "#E69F00", "NSM": "#0072B2"}
ROLE_NAMES = {"ASM": "ASM (0 < −λ < C, on the margin)", "SM": "SM \\ ASM (−λ = C)", "NSM": "NSM (λ = 0)"}


def alm_anatomy(history: pd.DataFrame) -> go.Figure:
    """σ_k, Newton and CG iterations, |J1| and rank per ALM step."""
    fig = make_subplots(rows=2, cols=2, subplot_titles=("penalty σ_k", "SNCG and CG iterations per ALM step",
                                                        "|J1| (active samples in the Newton system)",
                                                        "|α| = rank of Prox(Λ + σW)"))
    color = ui.method_color("alm-sncg")
    k = history["iter"]
    fig.add_trace(go.Scatter(x=k, y=history["sigma"], name="σ_k", line=dict(color=color)), 1, 1)
    fig.add_trace(go.Bar(x=k, y=history["newton_iters"], name="Newton", marker_color=color), 1, 2)
    fig.add_trace(go.Scatter(x=k, y=history["cg_iters"], name="CG", mode="lines+markers",
                             line=dict(color="#666666")), 1, 2)
    fig.add_trace(go.Scatter(x=k, y=history["j1"], name="|J1|", mode="lines+markers", line=dict(color=color)), 2, 1)
    fig.add_trace(go.Scatter(x=k, y=history["alpha"], name="|α|", mode="lines+markers", line=dict(color=color)), 2, 2)
    fig.update_yaxes(type="log", exponentformat="power", row=1, col=1)
    for r in (1, 2):
        for c in (1, 2):
            fig.update_xaxes(title_text="ALM iteration k", row=r, col=c)
    fig.update_yaxes(title_text="σ", row=1, col=1)
    fig.update_yaxes(title_text="iterations", row=1, col=2)
    fig.update_yaxes(title_text="samples", row=2, col=1)
    fig.update_yaxes(title_text="rank", row=2, col=2)
    fig.update_layout(height=560, title="ALM-SNCG per step (Algorithms 1–2)", showlegend=True,
                      margin=dict(t=100, **ui.axis_room()))
    return fig


def singular_values(problem: smm.SMMProblem, solution: dict, label: str, method: str) -> go.Figure:
    """σ_i(W) and σ_i(−A*λ) against the threshold τ: rank(W) = #{σ_i(−A*λ) > τ} (Sec. 2.2)."""
    W = problem.from_user(solution["W"])
    sv_w = np.linalg.svd(W, compute_uv=False)
    sv_dual = np.linalg.svd(-problem.A_adj(solution["lam"]), compute_uv=False)
    idx = np.arange(1, sv_w.size + 1)
    fig = ui.base_figure(f"Singular values ({label})", "index i", "singular value", log_y=True)
    fig.add_trace(go.Scatter(x=idx, y=ui.positive(sv_w, 1e-12), name="σ_i(W)", mode="markers+lines",
                             line=dict(color=ui.method_color(method))))
    fig.add_trace(go.Scatter(x=idx, y=ui.positive(sv_dual, 1e-12), name="σ_i(−A*λ)", mode="markers",
                             marker=dict(symbol="diamond-open", size=9, color="#444444")))
    ui.add_reference(fig, [1, max(sv_w.size, 1)], [problem.tau, problem.tau], f"τ = {problem.tau:g}", dash="dash")
    return fig


def weight_image(solution: dict, label: str) -> go.Figure:
    W = np.asarray(solution["W"])
    lim = float(np.abs(W).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=W, colorscale="RdBu", zmin=-lim, zmax=lim, colorbar=dict(title="W_kℓ")))
    fig.update_layout(title=f"W as an image ({label})", height=420, xaxis_title="column ℓ", yaxis_title="row k")
    fig.update_yaxes(autorange="reversed", scaleanchor="x")
    return fig


def margin_histogram(problem: smm.SMMProblem, solution: dict, label: str) -> go.Figure:
    """y_i f(X_i) coloured by the sample's role (Definition 1, dual definition)."""
    W = problem.from_user(solution["W"])
    yf = problem.y * problem.margins(W, solution["b"])
    roles = smm.sample_roles(problem, W, solution["b"], solution["lam"], tol=1e-4)
    fig = ui.base_figure(f"Margins y·f(X) ({label})", "y_i (⟨W, X_i⟩ + b)", "number of samples")
    for role in ("NSM", "SM", "ASM"):
        fig.add_trace(go.Histogram(x=yf[roles == role], name=f"{ROLE_NAMES[role]}: {int((roles == role).sum())}",
                                   marker_color=ROLE_COLORS[role], opacity=0.75, nbinsx=60))
    fig.update_layout(barmode="overlay")
    for x, text in ((0.0, "decision boundary"), (1.0, "margin y f = 1")):
        fig.add_vline(x=x, line_dash="dash", line_color="#444444", annotation_text=text)
    return fig


def path_figures(tables: dict[str, pd.DataFrame]) -> dict[str, go.Figure]:
    """rank, SM fractions, accuracy and cumulative time over C for AS+ALM and Warm+ALM."""
    keys = {"AS+ALM": "as+alm", "Warm+ALM": "warm+alm"}
    figs = {
        "rank": ui.line_chart(tables, "C", "rank", title="rank(W) along the path", x_title="C (log scale)",
                              y_title="rank", log_x=True, color_keys=keys, markers=True),
        "time": ui.line_chart(tables, "C", "cum_time", title="Cumulative solver time", x_title="C (log scale)",
                              y_title="seconds", log_x=True, color_keys=keys, markers=True),
        "reduced": ui.line_chart(tables, "C", "n_reduced", title="Samples in the solved problem (n_I)",
                                 x_title="C (log scale)", y_title="samples", log_x=True, color_keys=keys, markers=True),
    }
    ref = tables.get("Warm+ALM", next(iter(tables.values())))
    figs["support"] = support_shares(ref)
    acc = ui.base_figure("Accuracy along the path", "C (log scale)", "accuracy", log_x=True)
    for col, dash in (("train_acc", "solid"), ("test_acc", "dash")):
        acc.add_trace(go.Scatter(x=ref["C"], y=ref[col], name=col.replace("_", " "), mode="lines+markers",
                                 line=dict(color="#333333", dash=dash)))
    figs["accuracy"] = acc
    if "AS+ALM" in tables:
        t = tables["AS+ALM"]
        shares = ui.base_figure("SM share: AS's reduced problems vs the full problem (Figs. 3–4)", "C (log scale)",
                                "share of samples [%]", log_x=True)
        shares.add_trace(go.Scatter(x=t["C"], y=100 * t["sm_frac_reduced"], name="mean |SM|/n_I over AS rounds",
                                    mode="lines+markers", line=ui.method_line("as+alm"),
                                    marker=ui.method_marker("as+alm")))
        shares.add_trace(go.Scatter(x=t["C"], y=100 * t["sm_frac_full"], name="|SM|/n (full problem)",
                                    mode="lines+markers", line=dict(color="#777777", dash="dash")))
        shares.update_layout(legend_title_text="")
        figs["sm_bars"] = shares
    return figs


def support_shares(table: pd.DataFrame) -> go.Figure:
    """Stacked shares of the three sample roles over C (log axis), in percent, so that they add up to 100.

    The active support matrices are usually a few percent (Fig. 1: 0–3%), invisible in a stack, so their
    share is repeated as a line on its own right-hand axis."""
    n = (table["n_sm"] + table["n_nsm"]).to_numpy(float)
    asm = table["n_asm"].to_numpy(float)
    bound = np.maximum(table["n_sm"].to_numpy(float) - asm, 0.0)  # SM \ ASM: −λ = C (or inside the margin)
    nsm = np.maximum(n - asm - bound, 0.0)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.update_layout(title="Sample roles along the path (full problem, Sec. 2.1)", height=420,
                      margin=dict(l=60, r=60, t=50, b=50), hovermode="x unified", legend_title_text="")
    for values, role in ((asm, "ASM"), (bound, "SM"), (nsm, "NSM")):
        fig.add_trace(go.Scatter(x=table["C"], y=100 * values / n, name=ROLE_NAMES[role], stackgroup="roles",
                                 mode="lines", line=dict(color=ROLE_COLORS[role], width=0.5)), secondary_y=False)
    fig.add_trace(go.Scatter(x=table["C"], y=100 * asm / n, name="ASM share (right axis)", mode="lines+markers",
                             line=dict(color=ROLE_COLORS["ASM"], dash="dot")), secondary_y=True)
    fig.update_xaxes(type="log", exponentformat="power", title_text="C (log scale)")
    fig.update_yaxes(title_text="share of samples [%] (stacked)", range=[0, 100], secondary_y=False)
    fig.update_yaxes(title_text="ASM share [%]", rangemode="tozero", secondary_y=True, showgrid=False)
    return fig


def toy_figure(X: np.ndarray, y: np.ndarray, W: np.ndarray, b: float, roles: np.ndarray, C: float) -> go.Figure:
    """Fig. 1: samples in R², the hyperplanes H and H±, support matrices marked."""
    pts = X[:, :, 0]
    w = W[:, 0]
    fig = ui.base_figure(f"Fig. 1 toy: n = {len(y)}, p = 2, q = 1, τ = 0.1, C = {C:g}", "x₁ (entry (1,1))",
                         "x₂ (entry (2,1))", height=520)
    lo, hi = pts.min(0) - 0.05, pts.max(0) + 0.05
    xs = np.linspace(lo[0], hi[0], 2)
    for level, dash, name in ((0.0, "solid", "H: ⟨W,X⟩+b = 0"), (1.0, "dash", "H₊"), (-1.0, "dash", "H₋")):
        if abs(w[1]) > 1e-12:
            fig.add_trace(go.Scatter(x=xs, y=(level - b - w[0] * xs) / w[1], mode="lines", name=name,
                                     line=dict(color="#333333", dash=dash)))
    for cls, sym in ((1.0, "circle"), (-1.0, "triangle-up")):
        for role in ("NSM", "SM", "ASM"):
            m = (y == cls) & (roles == role)
            if not m.any():
                continue
            marker = dict(symbol=sym if role != "NSM" else f"{sym}-open", size=10 if role == "ASM" else 8,
                          color=ROLE_COLORS[role], line=dict(width=2, color="green" if role == "ASM" else ROLE_COLORS[role]))
            fig.add_trace(go.Scatter(x=pts[m, 0], y=pts[m, 1], mode="markers", marker=marker,
                                     name=f"y = {int(cls):+d}, {role}"))
    fig.update_xaxes(range=[lo[0], hi[0]])
    fig.update_yaxes(range=[lo[1], hi[1]], scaleanchor="x")
    return fig


def role_pie(roles: np.ndarray) -> go.Figure:
    counts = {r: int((roles == r).sum()) for r in ("ASM", "SM", "NSM")}
    fig = go.Figure(go.Pie(labels=[ROLE_NAMES[r] for r in counts], values=list(counts.values()),
                           marker=dict(colors=[ROLE_COLORS[r] for r in counts]), sort=False))
    fig.update_layout(title="|ASM|/n, |SM \\ ASM|/n, |NSM|/n", height=380)
    return fig

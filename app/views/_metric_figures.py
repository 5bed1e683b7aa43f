"""Figures of the metric page (Figs. 4–6 analogues, radii, margins, the learned metric, the 2-D toy)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app import ui
from solvers.metric import analysis
from solvers.metric.bounds import gradient_bound, projected_gradient_bound, duality_gap_bound
from solvers.metric.problem import ReducedProblem, TripletProblem

RULE_MARKER = {"sphere": "circle", "linear": "square", "sdp": "diamond"}


def style(config: str, rule: str = "sphere") -> dict:
    """Trace style of one run: the bound's colour and dash (app/ui/colors.py), the rule's marker symbol."""
    return {"mode": "lines+markers", "line": ui.method_line(config, width=2),
            "marker": {**ui.method_marker(config, size=7), "symbol": RULE_MARKER[rule]}}


def drawing_order(runs: dict) -> list:
    """Runs with solid lines first, so that a dashed or dotted curve lying on a solid one (PGB on RRPB: the same
    sphere from the same solution, Thm 3.8) is drawn on top and both stay visible."""
    return sorted(runs.items(), key=lambda item: ui.method_style(item[1]["config"]).dash != "solid")
PAPER_TABLE4 = {  # seconds, Table 4 (naive, then each method)
    "iris": {"naive": 110.9, "gb": 71.5, "pgb": 31.6, "dgb": 23.7, "rrpb": 20.0, "rrpb+pgb": 20.8},
    "wine": {"naive": 564.1, "gb": 545.3, "pgb": 129.3, "dgb": 153.3, "rrpb": 104.7, "rrpb+pgb": 105.1},
    "segment": {"naive": 1327.8, "gb": 1220.0, "pgb": 235.6, "dgb": 300.9, "rrpb": 206.3, "rrpb+pgb": 188.1},
    "satimage": {"naive": 1970.9, "gb": 1727.2, "pgb": 653.5, "dgb": 799.7, "rrpb": 651.2, "rrpb+pgb": 569.6},
    "phishing": {"naive": 5584.7, "gb": 3139.1, "pgb": 1300.3, "dgb": 1748.3, "rrpb": 1397.6, "rrpb+pgb": 1247.4},
}


def rate_figure(runs: dict, column: str, y_title: str) -> go.Figure:
    fig = ui.base_figure("Screening rate along the regularisation path (Figs. 4–5)", "−log₁₀ λ", y_title)
    for label, run in drawing_order(runs):
        if run["config"] == "naive":
            continue
        t = run["table"].iloc[1:]
        fig.add_trace(go.Scatter(x=t["neg_log10_lam"], y=t[column], name=label, **style(run["config"], run["rule"])))
    fig.update_yaxes(range=[0, 1.05])
    return fig


def stacked_figure(run: dict) -> go.Figure:
    t = run["table"].iloc[1:]
    fig = ui.base_figure(f"Screened vs true partition — {run['label']}", "−log₁₀ λ", "number of triplets")
    unscreened = t["L_star"] + t["C_star"] + t["R_star"] - t["path_L"] - t["path_R"]
    for name, values, color in (("screened L̂ (path)", t["path_L"], "#0072B2"),
                                ("screened R̂ (path)", t["path_R"], "#009E73"),
                                ("not screened", unscreened, "#BBBBBB")):
        fig.add_trace(go.Scatter(x=t["neg_log10_lam"], y=values, name=name, stackgroup="one", mode="none",
                                 fillcolor=color))
    for name, values, dash in (("true |L*|", t["L_star"], "dash"), ("true |L*|+|C*|", t["L_star"] + t["C_star"], "dot")):
        fig.add_trace(go.Scatter(x=t["neg_log10_lam"], y=values, name=name, mode="lines",
                                 line=dict(color="black", dash=dash, width=1)))
    return fig


def time_ratio_figure(runs: dict) -> go.Figure | None:
    naive = next((r for r in runs.values() if r["config"] == "naive"), None)
    if naive is None:
        return None
    fig = ui.base_figure("CPU time ratio per λ, screened / naive (Figs. 4–5, bottom)", "−log₁₀ λ",
                         "time ratio (log scale)", log_y=True)
    base = naive["table"].set_index("step")["time"]
    for label, run in drawing_order(runs):
        if run["config"] == "naive":
            continue
        t = run["table"].iloc[1:].set_index("step")
        common = t.index.intersection(base.index)
        ratio = t.loc[common, "time"] / base.loc[common].clip(lower=1e-9)
        fig.add_trace(go.Scatter(x=t.loc[common, "neg_log10_lam"], y=ui.positive(ratio), name=label,
                                 **style(run["config"], run["rule"])))
    xs = naive["table"]["neg_log10_lam"]
    ui.add_reference(fig, [xs.min(), xs.max()], [1, 1], "no speed-up (ratio 1)")
    return fig


def total_time_figure(runs: dict, dataset: str) -> go.Figure:
    fig = ui.base_figure("Total path time (Table 4 analogue)", "configuration", "seconds")
    labels = list(runs)
    solve = [float(r["table"]["time"].sum() - r["table"]["screen_time"].sum()) for r in runs.values()]
    screen = [float(r["table"]["screen_time"].sum()) for r in runs.values()]
    colors = [ui.method_color(r["config"]) for r in runs.values()]
    fig.add_trace(go.Bar(x=labels, y=solve, name="optimisation", marker_color=colors))
    fig.add_trace(go.Bar(x=labels, y=screen, name="screening", marker_color=colors, marker_pattern_shape="/",
                         opacity=0.6))
    fig.update_layout(barmode="stack", legend_title_text="share")
    naive = next((r for r in runs.values() if r["config"] == "naive"), None)
    if naive is not None:
        total = float(naive["table"]["time"].sum())
        for label, run in runs.items():
            t = float(run["table"]["time"].sum())
            fig.add_annotation(x=label, y=t, text=f"×{total / max(t, 1e-12):.2f}", showarrow=False, yshift=10)
    return fig


def work_share_figure(runs: dict) -> go.Figure:
    """Triplets and pairs still in use after path screening, per λ: what screening leaves for the solver."""
    fig = ui.base_figure("Work left after path screening, per λ", "−log₁₀ λ", "share still in use (of all)")
    for label, run in runs.items():
        t = run["table"].iloc[1:]
        if run["config"] == "naive" or "pairs_share" not in t:
            continue
        color, marker = ui.method_color(run["config"]), ui.method_marker(run["config"], size=7)
        fig.add_trace(go.Scatter(x=t["neg_log10_lam"], y=1.0 - t["rate_path_T"], name=f"{label}: triplets",
                                 mode="lines+markers", line=dict(color=color, width=2), marker=marker))
        fig.add_trace(go.Scatter(x=t["neg_log10_lam"], y=t["pairs_share"], name=f"{label}: pairs",
                                 mode="lines+markers", line=dict(color=color, width=2, dash="dash"), marker=marker))
    fig.update_yaxes(range=[0, 1.05])
    return fig


def paper_table(runs: dict, dataset: str) -> pd.DataFrame | None:
    key = next((k for k in PAPER_TABLE4 if dataset.startswith(k)), None)
    naive = next((r for r in runs.values() if r["config"] == "naive"), None)
    if key is None or naive is None:
        return None
    paper = PAPER_TABLE4[key]
    total = float(naive["table"]["time"].sum())
    rows = []
    for label, run in runs.items():
        t = float(run["table"]["time"].sum())
        ref = paper.get(run["config"])
        rows.append({"configuration": label, "our time [s]": round(t, 3), "our speed-up": round(total / t, 2),
                     "paper time [s]": ref, "paper speed-up": round(paper["naive"] / ref, 2) if ref else None})
    return pd.DataFrame(rows)


def dynamic_heatmap(run: dict) -> go.Figure:
    rounds = run["rounds"]
    fig = ui.base_figure(f"Dynamic screening rate — {run['label']} (Fig. 5, left)", "λ index (path step)",
                         "screening round (every `period` iterations)")
    truth = run["table"].set_index("step")
    share = (rounds["n_L"] + rounds["n_R"]) / (truth.loc[rounds["step"], "L_star"].to_numpy()
                                               + truth.loc[rounds["step"], "R_star"].to_numpy()).clip(min=1)
    grid = pd.DataFrame({"step": rounds["step"], "round": rounds["round"], "rate": share.to_numpy()})
    Z = grid.pivot_table(index="round", columns="step", values="rate")
    fig.add_trace(go.Heatmap(x=Z.columns, y=Z.index, z=Z.to_numpy(), colorscale="Viridis", zmin=0, zmax=1,
                             colorbar=dict(title="rate")))
    return fig


def step_history_figures(runs: dict, step: int) -> tuple[go.Figure, go.Figure]:
    gap = ui.base_figure(f"Duality gap during λ step {step}", "iteration", "relative gap (log scale)", log_y=True)
    scr = ui.base_figure(f"Screened share during λ step {step}", "iteration", "|L̂ ∪ R̂| / |T|")
    for label, run in drawing_order(runs):
        h = run["history"]
        h = h[h["step"] == step] if "step" in h else h.iloc[0:0]
        look = style(run["config"], run["rule"])
        gap.add_trace(go.Scatter(x=h["iter"], y=ui.positive(h["gap"]), name=label, **look))
        scr.add_trace(go.Scatter(x=h["iter"], y=h["screened"], name=label, **look))
    return gap, scr


def range_heatmap(problem: TripletProblem, run: dict) -> go.Figure:
    lams, rates = analysis.range_screening_rates(problem, run["path"])
    x = -np.log10(lams)
    fig = ui.base_figure("Range-based screening rate (Fig. 6): reference λ0 → target λ", "reference −log₁₀ λ0",
                         "target −log₁₀ λ")
    fig.add_trace(go.Heatmap(x=x, y=x, z=rates.T, colorscale="Viridis", zmin=0, zmax=1,
                             colorbar=dict(title="rate")))
    return fig


def radius_figure(run: dict) -> go.Figure:
    t = run["table"].iloc[1:]
    fig = ui.base_figure("Radius of each sphere at the start of each λ (from M at the previous λ)", "λ",
                         "radius r (log scale)", log_x=True, log_y=True)
    for name in ("gb", "pgb", "dgb", "cdgb", "rrpb"):
        col = f"r_{name}"
        if col in t:
            fig.add_trace(go.Scatter(x=t["lam"], y=ui.positive(t[col]), name=name.upper(), **style(name)))
    return fig


def margin_histogram(problem: TripletProblem, M: np.ndarray, masks, title: str) -> go.Figure:
    x = problem.margins(M)
    fig = ui.base_figure(title, "margin ⟨H_t, M⟩ = d²_M(x_i, x_l) − d²_M(x_i, x_j)", "number of triplets")
    groups = {"all triplets": np.ones(x.size, bool)} if masks is None else {
        "screened into L̂": masks[0], "screened into R̂": masks[1], "not screened": ~(masks[0] | masks[1])}
    colors = {"all triplets": "#666666", "screened into L̂": "#0072B2", "screened into R̂": "#009E73",
              "not screened": "#BBBBBB"}
    lo, hi = np.percentile(x, [1, 99])
    lo, hi = min(lo, 1 - problem.gamma - 0.5), max(hi, 1.5)
    for name, mask in groups.items():
        fig.add_trace(go.Histogram(x=np.clip(x[mask], lo, hi), name=name, marker_color=colors[name], opacity=0.75,
                                   xbins=dict(start=lo, end=hi, size=(hi - lo) / 80)))
    fig.update_layout(barmode="stack")
    for v, label in ((1 - problem.gamma, "1 − γ"), (1.0, "1")):
        fig.add_vline(x=v, line=dict(color="black", dash="dash"), annotation_text=label)
    return fig


def metric_figures(problem: TripletProblem, M: np.ndarray) -> tuple[go.Figure, go.Figure, go.Figure]:
    Mat = problem.as_matrix(M)
    heat = ui.base_figure("Learned metric M", "feature", "feature")
    heat.add_trace(go.Heatmap(z=Mat, colorscale="RdBu", zmid=0, colorbar=dict(title="M_ij")))
    heat.update_yaxes(autorange="reversed")
    w = np.sort(np.linalg.eigvalsh(Mat))[::-1]
    spec = ui.base_figure("Eigenvalues of M (log scale)", "index", "eigenvalue", log_y=True)
    spec.add_trace(go.Bar(x=np.arange(1, w.size + 1), y=ui.positive(w, 1e-12), name="eigenvalue",
                          marker_color="#0072B2"))
    emb = analysis.embed(problem, M, 2)
    Xc = problem.X - problem.X.mean(0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    pca = Xc @ Vt[:2].T
    both = make_subplots(rows=1, cols=2, subplot_titles=("embedded by M^{1/2} (top 2)", "Euclidean PCA (top 2)"))
    for c in np.unique(problem.codes):
        sel = problem.codes == c
        color = ui.method_color(f"class-{c}")
        for col, Z in ((1, emb), (2, pca)):
            both.add_trace(go.Scatter(x=Z[sel, 0], y=Z[sel, 1] if Z.shape[1] > 1 else np.zeros(sel.sum()),
                                      mode="markers", marker=dict(color=color, size=6), name=f"class {c}",
                                      showlegend=col == 1), row=1, col=col)
    both.update_layout(height=420, title="Samples in the learned metric vs PCA", legend_title_text="class")
    both.update_xaxes(title_text="component 1 [metric units]")
    both.update_yaxes(title_text="component 2 [metric units]")
    return heat, spec, both


def knn_figure(problem: TripletProblem, run: dict, points: int = 12) -> go.Figure:
    table = run["table"]
    idx = np.unique(np.linspace(1, len(table) - 1, min(points, len(table) - 1)).astype(int))
    acc = [analysis.knn_accuracy(problem, run["path"].solutions[i]) for i in idx]
    fig = ui.base_figure("3-NN accuracy in the learned metric along the path (leave-one-out, training data)",
                         "−log₁₀ λ", "accuracy")
    fig.add_trace(go.Scatter(x=table["neg_log10_lam"].iloc[idx], y=acc, mode="lines+markers", name=run["label"],
                             line=dict(color=ui.method_color(run["config"]))))
    fig.update_yaxes(range=[0, 1.02])
    return fig


def audit_figure(audits: dict) -> go.Figure:
    fig = ui.base_figure("‖M_screened − M_naive‖_F per λ (safety audit)", "−log₁₀ λ", "‖ΔM‖_F (log scale)",
                         log_y=True)
    for label, (config, df) in sorted(audits.items(), key=lambda item: ui.method_style(item[1][0]).dash != "solid"):
        if not df.empty:
            fig.add_trace(go.Scatter(x=df["neg_log10_lam"], y=ui.positive(df["dM"]), name=label, **style(config)))
    return fig


def toy_figure(problem: TripletProblem, M_star: np.ndarray, M: np.ndarray, lam: float, triplet: int) -> go.Figure:
    """Diagonal M with d = 2: the non-negative quadrant, GB, PGB and DGB circles, the linear half-plane."""
    rp = ReducedProblem.unscreened(problem)
    ev = rp.evaluate(M, lam)
    spheres = [gradient_bound(rp, ev, lam), projected_gradient_bound(rp, ev, lam),
               duality_gap_bound(rp, ev, lam, rp.gap(ev, lam))]
    reach = max(float(np.max(np.abs(s.center)) + s.radius) for s in spheres)
    reach = max(reach, float(np.max(M_star)) * 1.5, 1e-9)
    fig = ui.base_figure("Geometry of the bounds for a diagonal 2-D metric (Fig. 3 analogue)", "m₁ [metric units]",
                         "m₂ [metric units]", height=560)
    fig.add_shape(type="rect", x0=0, y0=0, x1=reach * 1.2, y1=reach * 1.2, fillcolor="rgba(0,158,115,0.08)",
                  line=dict(width=0), layer="below")
    theta = np.linspace(0, 2 * np.pi, 200)
    for s in spheres:
        fig.add_trace(go.Scatter(x=s.center[0] + s.radius * np.cos(theta), y=s.center[1] + s.radius * np.sin(theta),
                                 mode="lines", name=f"{s.name.upper()} (r = {s.radius:.3g})",
                                 line=dict(color=ui.method_color(s.name), width=2)))
        fig.add_trace(go.Scatter(x=[s.center[0]], y=[s.center[1]], mode="markers", showlegend=False,
                                 marker=dict(color=ui.method_color(s.name), size=7)))
    P = spheres[0].normal
    xs = np.linspace(-reach * 1.2, reach * 1.2, 2)
    if P is not None and np.linalg.norm(P) > 0:
        if abs(P[1]) > 1e-12:
            fig.add_trace(go.Scatter(x=xs, y=-P[0] * xs / P[1], mode="lines", name="half-plane ⟨P, X⟩ = 0 (linear rule)",
                                     line=dict(color="#882255", dash="dash")))
        else:
            fig.add_trace(go.Scatter(x=[0, 0], y=[-reach, reach], mode="lines", name="half-plane ⟨P, X⟩ = 0",
                                     line=dict(color="#882255", dash="dash")))
    T = problem.triplets
    h = problem.U[T.diff[triplet]] - problem.U[T.same[triplet]]
    for level, dash in ((1.0, "solid"), (1 - problem.gamma, "dot")):
        if abs(h[1]) > 1e-12:
            fig.add_trace(go.Scatter(x=xs, y=(level - h[0] * xs) / h[1], mode="lines",
                                     name=f"triplet {triplet}: ⟨h, m⟩ = {level:g}", line=dict(color="#444", dash=dash)))
    fig.add_trace(go.Scatter(x=[M_star[0]], y=[M_star[1]], mode="markers", name="optimum M*",
                             marker=dict(symbol="star", size=16, color="gold", line=dict(color="black", width=1))))
    fig.add_trace(go.Scatter(x=[M[0]], y=[M[1]], mode="markers", name="current M (reference point)",
                             marker=dict(symbol="x", size=12, color="black")))
    lim = [-reach * 1.2, reach * 1.2]
    fig.update_xaxes(range=lim)
    fig.update_yaxes(range=lim, scaleanchor="x")
    return fig

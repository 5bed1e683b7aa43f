"""Figures of the multitask page: convergence with the Theorem A.1 bound, spectra, structure, Eq. (14) explorer."""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app import ui
from app.ui.glossary import explain_figure
from solvers.core import Result
from solvers.multitask import Point, critical_points, gamma_of_t

X_AXES = {"iteration": ("iter", "iteration k"), "time": ("time", "solver time [s]"),
          "evaluations": ("evals", "objective evaluations (incl. line-search trials)")}


def best_run(results: Mapping[str, Result]) -> tuple[str, float]:
    label = min(results, key=lambda k: results[k].history["objective"].iloc[-1])
    return label, float(results[label].history["objective"].iloc[-1])


def gap_histories(results: Mapping[str, Result], f_star: float) -> dict[str, pd.DataFrame]:
    out = {}
    for label, r in results.items():
        h = r.history.copy()
        h["gap"] = ui.positive(h["objective"] - f_star + 1e-14)
        h["evals"] = (h["ls_trials"].cumsum() + h["iter"]) if "ls_trials" in h else h["iter"]
        out[label] = h
    return out


def convergence_figure(results, colors, problem, x_axis: str) -> go.Figure:
    """F(Z_k) − F* with the certificates 2L_k‖Z_0 − Z*‖²/k² (APG, Theorem A.1) and L_k‖Z_0 − Z*‖²/(2k) (PG)."""
    star_label, f_star = best_run(results)
    x, x_title = X_AXES[x_axis]
    histories = gap_histories(results, f_star)
    fig = ui.line_chart(histories, x, "gap", log_y=True, log_x=True,  # fast methods squeeze against zero on a linear time axis
                        title=f"Objective gap F(Z_k) − F* (F* = best final value, from {star_label})",
                        x_title=x_title, y_title="F(Z_k) − F*  (objective units)", color_keys=colors)
    if x_axis != "iteration":
        return fig
    sol = results[star_label].solution
    Z0 = problem.initial_point()
    D = Z0.minus(Point(sol["U"], sol["b"], sol["M"]))
    R = D.dot(D)
    for label, h in histories.items():
        method = colors.get(label)
        if method in ("apg", "pg") and len(h) > 1:
            k = h["iter"].to_numpy()[1:].astype(float)
            L = h["L"].to_numpy()[1:]
            with np.errstate(over="ignore"):  # L_k near 1e300 on a badly scaled problem: the bound is +inf there
                bound = 2 * L * R / k**2 if method == "apg" else L * R / (2 * k)
            k, bound = k[np.isfinite(bound)], bound[np.isfinite(bound)]
            if not len(k):
                continue
            name = "Thm A.1: 2L_k‖Z₀−Z*‖²/k²" if method == "apg" else "PG: L_k‖Z₀−Z*‖²/(2k)"
            ui.add_reference(fig, k, bound, name, dash="dash" if method == "apg" else "dot",
                             color=ui.method_color(method))
    fig.update_layout(title_text=fig.layout.title.text + " — guides: Theorem A.1")
    return explain_figure(fig, "multitask")


def lipschitz_figure(results, colors) -> go.Figure:
    hist = {k: r.history for k, r in results.items() if "L" in r.history}
    return ui.line_chart(hist, "iter", "L", log_y=True, title="Line-search estimate L_k (never decreases)",
                         x_title="iteration k", y_title="L_k (1/step size)", color_keys=colors)


def spectrum_over_iterations(result: Result, column: str, title: str, y_title: str, top: int = 10,
                             relative: bool = False) -> go.Figure:
    """The top spectrum per iteration; ``relative`` divides by the largest value of each iteration (σ_i/σ_1 on a
    log axis), which shows the gap after the h-th value open up instead of flat lines decades apart."""
    h = result.history
    fig = ui.base_figure(title, "iteration k", y_title, log_y=column == "sv_U")
    if column not in result.info.get("spectra", {}):
        return fig
    values = np.asarray(result.info["spectra"][column], float)[:, :top]  # one row per history row
    if relative:
        values = values / np.where(values[:, :1] > 0, values[:, :1], np.nan)
    for i in range(values.shape[1]):
        ys = values[:, i]
        if np.all(np.isnan(ys)):
            continue
        fig.add_trace(go.Scatter(x=h["iter"], y=ui.positive(ys) if column == "sv_U" else ys, mode="lines",
                                 name=f"#{i + 1}"))
    return fig


def hline(y: float, xref: str, yref: str, **line) -> dict:
    """A horizontal line across one subplot (xref "x", "x2", … spans its domain)."""
    return dict(type="line", xref=f"{xref} domain", yref=yref, x0=0, x1=1, y0=y, y1=y, line=line)


def vline(x: float, xref: str, yref: str, **line) -> dict:
    """A vertical line across one subplot."""
    return dict(type="line", xref=xref, yref=f"{yref} domain", x0=x, x1=x, y0=0, y1=1, line=line)


def numerical_rank(sv) -> int:
    """How many singular values stand above round-off (1e-12 of the largest)."""
    sv = np.asarray(sv, float)
    return int(np.sum(sv > 1e-12 * max(sv.max(initial=0.0), 1e-300)))


def tightness(sol: dict, h: int) -> tuple[str, str]:
    """σ_h/σ_{h+1} of U* as shown next to the threshold 1 + 1/η (at or above it M* ∈ M_e and (U*, Θ*) also solves
    iASO, spec §1.4), and why the test does not apply ("" where it does). σ_i = 0 beyond the rank of U*."""
    if h == 0:
        return "not applicable", "h = 0 forces M* = 0, and there is no σ_0"
    if h == sol["U"].shape[0]:
        return "not applicable", "h = d forces M* = I, and there is no σ_{d+1}"
    sv = sol["sv_U"]
    rank = numerical_rank(sv)
    if rank < h:
        return "undefined", f"U* has rank {rank} < h = {h}, so σ_h = σ_{{h+1}} = 0 and the ratio is 0/0"
    return ("∞" if rank == h else f"{sv[h - 1] / sv[h]:.3g}"), ""


def spectra_bars(sol: dict, h: int, eta: float) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("eigenvalues of M* (in [0, 1], sum h)",
                                                       "singular values σ_i of U*"))
    eig = sol["eig_M"]
    fig.add_trace(go.Bar(x=np.arange(1, len(eig) + 1), y=eig, name="eig(M*)", marker_color="#009E73"), 1, 1)
    sv = sol["sv_U"]
    fig.add_trace(go.Bar(x=np.arange(1, len(sv) + 1), y=ui.positive(sv), name="σ(U*)", marker_color="#0072B2"), 1, 2)
    shapes = [hline(1.0, "x", "y", dash="dash")]
    if 0 < h < len(sv):
        shapes.append(vline(h + 0.5, "x2", "y2", dash="dot"))
    # one validated update: shapes (add_hline/add_vline on subplots re-validate every shape: seconds), axes, fonts
    fig.update_layout(ui.subplot_layout("Structure of the solution", {
        "xaxis": ("index i", False), "yaxis": ("eigenvalue", False),
        "xaxis2": ("index i (dotted line after i = h)", False), "yaxis2": ("σ_i (log)", True)}, height=380),
        shapes=shapes, showlegend=False)
    return fig


def theta_images(Theta: np.ndarray, shape: tuple[int, int]) -> go.Figure:
    h = Theta.shape[0]
    cols = min(h, 5)
    rows = int(np.ceil(h / cols))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"θ_{i + 1}" for i in range(h)])
    for i, theta in enumerate(Theta):
        img = theta.reshape(shape)
        lim = np.abs(img).max() or 1.0
        fig.add_trace(go.Heatmap(z=img[::-1], zmin=-lim, zmax=lim, colorscale="RdBu", showscale=i == 0,
                                 colorbar=dict(title="weight")), i // cols + 1, i % cols + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False, scaleanchor="x")
    fig.update_layout(height=220 * rows, title="Rows of Θ (top eigenvectors of M*) as images")
    return fig


def principal_angles(Theta: np.ndarray, Theta_true: np.ndarray) -> np.ndarray:
    """Principal angles (degrees) between span Θᵀ and span Θ_trueᵀ."""
    if Theta.shape[0] == 0 or Theta_true.shape[0] == 0:
        return np.array([])
    cos = np.linalg.svd(Theta @ Theta_true.T, compute_uv=False)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def error_bars(errors: Mapping[str, np.ndarray], names: list, metric: str) -> go.Figure:
    fig = ui.base_figure(f"Test {metric} per task", "task", metric)
    for label, (values, color) in errors.items():
        fig.add_trace(go.Bar(x=[str(n) for n in names], y=values, name=label, marker_color=ui.method_color(color)))
    fig.update_layout(barmode="group")
    return fig


def gamma_explorer_figure(sigma: np.ndarray, eta: float, h: int, t_opt: float | None,
                          bracket: tuple[float, float] | None) -> go.Figure:
    """Γ(t) of Eq. (79) with the critical points (80), the level h, t_opt and one bracket of Algorithm 3."""
    tl, tu = critical_points(sigma, eta)
    ts = np.logspace(np.log10(tl.min()) - 0.5, np.log10(tu.max()) + 0.5, 600)
    G = np.array([gamma_of_t(sigma, eta, t).sum() for t in ts])
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("Γ(t) = Σ γ_i(t), non-increasing (Theorem C.1)", "γ_i(t), Eq. (78)"))
    fig.add_trace(go.Scatter(x=ts, y=G, name="Γ(t)", line=dict(color="#000000", width=3)), 1, 1)
    shapes = [hline(h, "x", "y", dash="dash")]
    if bracket is not None:
        shapes.append(dict(type="rect", xref="x", yref="y domain", x0=bracket[0], x1=bracket[1], y0=0, y1=1,
                           fillcolor="#E69F00", opacity=0.2, line_width=0, layer="below"))
    shapes += [vline(t, "x", "y", width=0.5, color="#999999") for t in np.r_[tl, tu]]
    # one validated update: the shapes (25 add_vline calls took 10 s on the 2-core machine), the axes, the fonts
    fig.update_layout(ui.subplot_layout("Eq. (14) explorer: the parametric search of Appendix C", {
        "xaxis": ("", True), "yaxis": ("Γ(t)", False),
        "xaxis2": ("t (multiplier of Σγ = h, log scale)", True), "yaxis2": ("γ_i(t) ∈ [0, 1]", False)}, height=620),
        shapes=shapes)
    fig.add_annotation(x=1, xref="x domain", y=h, yref="y", text=f"h = {h}", showarrow=False, xanchor="right",
                       yanchor="bottom")
    if t_opt is not None:
        fig.add_trace(go.Scatter(x=[t_opt], y=[h], mode="markers", name="t_opt",
                                 marker=dict(symbol="star", size=14, color="gold", line=dict(color="black", width=1))),
                      1, 1)
    for i, s in enumerate(sigma):
        fig.add_trace(go.Scatter(x=ts, y=np.clip(s / np.sqrt(ts) - eta, 0.0, 1.0), mode="lines", name=f"γ_{i + 1}",
                                 showlegend=False, line=dict(width=1)), 2, 1)
    return explain_figure(fig, "multitask")


def sweep_heatmap(table: pd.DataFrame, metric: str) -> go.Figure:
    pivot = table.pivot(index="h", columns="alpha", values="error")
    fig = go.Figure(go.Heatmap(z=pivot.to_numpy(), x=[f"{a:g}" for a in pivot.columns], y=pivot.index,
                               colorscale="Viridis", colorbar=dict(title=metric)))
    fig.update_layout(title=f"Mean test {metric} over (h, α) at fixed β (h = 0: single-task ridge)",
                      xaxis_title="α (log grid, one column per value)", yaxis_title="h (shared dimension)", height=420)
    # numeric-looking labels would make Plotly pick a linear axis (3 of 5 log-spaced columns become slivers)
    fig.update_xaxes(type="category")
    return fig

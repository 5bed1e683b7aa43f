"""SMM (seed 002): ALM-SNCG vs the ADMMs on matrix samples, the C path by adaptive sieving, the Fig. 1 toy."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from app import ui
from app.ui import figcache
from app.views import _smm_figures as figs
from app.views._presets import PRESETS
from solvers import smm
from solvers.core import InputError, Param
from solvers.datasets import Dataset
from solvers.smm.path import margin_width
from solvers.sweep.family_jobs import smm_path_job
from app.ui.sweep import run_grid_result

KEY = "smm"
STOPPING = [
    Param("tol", 1e-6, float, low=0, low_strict=True, log=True, symbol=r"\varepsilon",
          help="stop at η_kkt (46) ≤ ε", ui_range=(1e-10, 1e-2)),
    Param("max_iter", 500, int, low=1, high=20_000, log=True, help="iteration cap (ALM steps or ADMM steps)",
          ui_range=(10, 20_000)),
    Param("time_limit", 20.0, float, low=1, high=300, help="solver seconds per method"),
]
DATA_LIMITS = [
    Param("n_max", 3000, int, low=20, high=3000, log=True, help="training samples used at most (a seeded subsample)",
          ui_range=(20, 3000)),
]
# ALM-SNCG starts from 4 isPADMM steps, as in the paper's Table 4. isPADMM adapts γ every 5 steps, the authors'
# setting for random data: every 100 (the library's default, their real-data setting) let it run 75–436 steps as τ
# grows (τ ≥ 100 on the default data, up to 16 CPU s at C = 10, τ = 5000) and 193–500 on digits, against 28–50 and
# 28–130 every 5. obj_opt (a benchmark stop) and σ₀ (its default follows the data's scale, and the sidebar's forms
# take no empty optional number) are not offered.
PAGE_DEFAULTS = {("alm-sncg", "warm_start"): 4, ("ispadmm", "gamma_every"): 5}
PAGE_METHODS = {name: replace(m, params=tuple(replace(p, default=PAGE_DEFAULTS.get((name, p.name), p.default))
                                              for p in m.params if p.name not in ("obj_opt", "sigma0")))
                for name, m in smm.METHODS.items()}
#: The default run tells the paper's story (Table 4): the synthetic recipe at 3000 × 30 × 30 with τ = 10, where
#: ALM-SNCG (from 4 isPADMM steps) beats isPADMM to η_kkt ≤ 1e-6 by 2.8× in CPU seconds at C = 1 and 2.1× at
#: C = 10 (medians of three on a quiet 2-core machine; on digits 8×8 the two are within 20% of each other), and AS+ALM beats
#: Warm+ALM over C ∈ [0.1, 100] (10 points, 1e-4: 2.6× per grid point on the same data).
DATA_SOURCES = ("synthetic", "bundled", "real", "upload")
TAU_DEFAULT = 10.0
PATH_SPECS = [
    Param("points", 10, int, low=3, high=50, help="grid points, log-spaced"),
    Param("C_low", 0.1, float, low=0, low_strict=True, log=True, help="first C", ui_range=(1e-3, 1e2)),
    Param("C_high", 100.0, float, low=0, low_strict=True, log=True, help="last C", ui_range=(1e-2, 1e3)),
    Param("path_tol", 1e-4, float, low=0, low_strict=True, log=True, help="η_kkt per grid point",
          ui_range=(1e-8, 1e-2)),
]


def check_matrix_classification(ds: Dataset) -> None:
    if ds.task != "classification":
        raise InputError(f"{ds.name} is a {ds.task} dataset; SMM needs class labels")
    if ds.X.ndim != 3 and ds.image_shape is None:
        raise InputError(f"{ds.name} holds vectors with no image shape; SMM needs matrix samples "
                         "(upload an .npz with X of shape (n, p, q) and y)")


@st.cache_data(max_entries=16, show_spinner="Preparing the matrices…")
def prepare(_ds: Dataset, data_key: str, positive: str, upsample: int, scale: str, n_max: int):
    X, y, X_te, y_te = smm.train_test(_ds, positive_class=positive, upsample=upsample, scale=scale)
    if len(y) > n_max:
        rows = np.sort(np.random.default_rng(0).choice(len(y), n_max, replace=False))
        X, y = X[rows], y[rows]
    return X, y, X_te, y_te


def sidebar(ds: Dataset):
    side = st.sidebar
    side.header("Model (1)")
    specs = {p.name: p for p in smm.PROBLEM_PARAMS}
    classes = [str(c) for c in ds.classes.tolist()]
    default = "0" if "0" in classes else (classes[-1] if classes else "")
    positive = ui.choice("positive class (+1 vs the rest)", classes, default=default or None, container=side,
                         key=f"{KEY}.positive",
                         help="Dataset.binary_task: this class is +1, every other class −1")
    values = ui.param_form([specs["C"], replace(specs["tau"], default=TAU_DEFAULT), replace(specs["upsample"], high=4),
                            specs["scale"]],
                           key=f"{KEY}.problem", container=side)
    values.update(ui.param_form(DATA_LIMITS, key=f"{KEY}.data_limits", container=side))
    side.header("Methods")
    chosen = ui.method_picker(PAGE_METHODS, key=f"{KEY}.methods", default=["alm-sncg", "ispadmm"], container=side)
    per_method = ui.method_params(PAGE_METHODS, chosen, key=f"{KEY}.m", container=side)
    stop = ui.param_form(STOPPING, key=f"{KEY}.stop", container=side)
    return positive, values, chosen, per_method, stop


def convergence_tab(results, chosen, labels, tol):
    shown = (figcache.shown(results), labels, tol)
    out = figcache.cached("smm.convergence", shown, lambda: convergence_figures(results, labels, tol))
    for name in ("kkt_time", "kkt_iter", "relobj"):
        st.plotly_chart(out[name], key=f"{KEY}.{name}")
    st.dataframe(figcache.cached("smm.summary", shown, lambda: ui.summary_table(results, "kkt")), hide_index=True)
    if "alm" in out:
        st.plotly_chart(out["alm"], key=f"{KEY}.alm")
    return out


def convergence_figures(results, labels, tol) -> dict:
    """η_kkt against time and iterations, the relative objective, and ALM-SNCG's anatomy when it ran."""
    best = min((float(r.history["objective"].min()) for r in results.values() if len(r.history)), default=np.nan)
    # new frames: a stored run's history is shared by every session's thread and must never change in place
    histories = {k: r.history.assign(relobj_best=np.abs(r.history["objective"] - best) / (1 + abs(best)))
                 for k, r in results.items()}
    out = {}
    out["kkt_time"] = ui.line_chart(histories, "time", "kkt", log_y=True, title="η_kkt (46) vs solver time",
                                    x_title="solver time [s]", y_title="η_kkt", color_keys=labels)
    ui.add_reference(out["kkt_time"], [0, max((h["time"].max() for h in histories.values()), default=1)],
                     [tol, tol], f"ε = {tol:g}", dash="dash")
    out["kkt_iter"] = ui.line_chart(histories, "iter", "kkt", log_y=True, title="η_kkt vs iteration",
                                    x_title="iteration (ALM step / ADMM step)", y_title="η_kkt", color_keys=labels)
    out["relobj"] = ui.line_chart(histories, "time", "relobj_best", log_y=True,
                                  title="Relobj (47) against the best objective any run reached",
                                  x_title="solver time [s]", y_title="|obj − obj_best|/(1 + |obj_best|)",
                                  color_keys=labels)
    alm = next((results[k] for k, m in labels.items() if m == "alm-sncg" and k in results), None)
    if alm is not None and "sigma" in alm.history:
        out["alm"] = figs.alm_anatomy(alm.history)
    return out


def solution_tab(problem, results, labels):
    out = {}
    if not results:
        return out
    label = st.selectbox("Show the solution of", list(results), key=f"{KEY}.show")
    sol = results[label].solution
    out = figcache.cached("smm.solution", figcache.shown({label: results[label]}), lambda: {
        "sv": figs.singular_values(problem, sol, label, labels[label]), "W": figs.weight_image(sol, label),
        "margins": figs.margin_histogram(problem, sol, label)})
    left, right = st.columns(2)
    left.plotly_chart(out["sv"], key=f"{KEY}.sv")
    right.plotly_chart(out["W"], key=f"{KEY}.W")
    st.plotly_chart(out["margins"], key=f"{KEY}.margins")
    return out


def path_tab(problem, X_te, y_te, data_key, values):
    st.markdown("Solve model (1) over an increasing grid of C: **AS+ALM** (Algorithm 3, adaptive sieving over "
                "samples) against **Warm+ALM** (warm-started ALM-SNCG on all samples). Both give the same "
                "solution at every C; AS solves much smaller problems.")
    with st.form(f"{KEY}.path_form"):
        spec = ui.param_form(PATH_SPECS + list(smm.PATH_PARAMS), key=f"{KEY}.path")
        go_path = st.form_submit_button("Compute the path")
    if spec["C_high"] <= spec["C_low"]:
        st.error("The last C must be larger than the first C.")
        return {}
    time_limit = ui.path_time_limit(60.0, 2)
    p, q = problem.shape
    if ui.refused(ui.smm_path_cost(problem.n, p, q, points=spec["points"], path_tol=spec["path_tol"],
                                   time_limit=time_limit, eps_hat=spec["eps_hat"], d_max=spec["d_max"],
                                   max_rounds=spec["max_rounds"])):
        return {}
    cache_key = ui.config_key(data_key, values, spec)
    # the two paths as jobs on the sweep executor (app/ui/sweep.py), the problem shipped once
    paths = {"Warm+ALM": "warm", "AS+ALM": "as"}
    cells = [{"path": label, "path_method": method, **spec, "time_limit": time_limit}
             for label, method in paths.items()]
    result = run_grid_result(smm_path_job, cells, key=f"{KEY}.path", cache_key=cache_key, start=go_path,
                             data={"problem": problem, "X_test": X_te, "y_test": y_te}, histories=True,
                             figure=path_seconds_figure)
    if result is None or result.histories is None:
        st.info("Press **Compute the path** (a few seconds on the default data).")
        return {}
    tables = {cells[job]["path"]: part.drop(columns="job").reset_index(drop=True)
              for job, part in result.histories.groupby("job")}
    if len(tables) < len(paths):
        st.info(f"Only {', '.join(tables)} finished; the comparison needs both paths.")
        return {}
    out = figs.path_figures(tables)
    cols = st.columns(2)
    for i, name in enumerate(("rank", "support", "accuracy", "time", "reduced")):
        cols[i % 2].plotly_chart(out[name], key=f"{KEY}.path.{name}")
    if "sm_bars" in out:
        st.plotly_chart(out["sm_bars"], key=f"{KEY}.path.sm_bars")
    w, a = tables["Warm+ALM"], tables["AS+ALM"]
    st.caption(f"Average time per grid point (points 2..N): Warm+ALM {w['time'].iloc[1:].mean():.3f} s, "
               f"AS+ALM {a['time'].iloc[1:].mean():.3f} s; largest objective difference "
               f"{float((np.abs(w['objective'] - a['objective']) / (1 + w['objective'])).max()):.1e}.")
    st.dataframe(a, hide_index=True)
    return out


def path_seconds_figure(table):
    """Solver seconds per C point of each path, drawn as the path jobs finish."""
    fig = ui.base_figure("Mean solver time per grid point (points 2..N)", "path", "seconds")
    return fig.add_bar(x=table["path"], y=table["seconds_per_point"],
                       marker_color=[ui.method_color(f"{m}+alm") for m in table["path_method"]])


@st.cache_data(max_entries=8)
def toy_solution(C: float):
    ds = smm.synthetic.make_smm_synthetic(n_train=80, p=2, q=1, r=1, noise=0.1, seed=1)
    problem = smm.build_problem(ds.X, ds.y, C=C, tau=0.1)
    sol = smm.solve(problem, "alm-sncg", tol=1e-8, max_iter=500).solution
    roles = smm.sample_roles(problem, sol["W"], sol["b"], sol["lam"], tol=1e-5)
    return ds.X, ds.y, sol["W"], float(sol["b"]), roles


def teaching_tab():
    st.markdown("Fig. 1 of the paper: 100 samples of the generator with p = 2, q = 1 (δ = 0.1), τ = 0.1. "
                "Filled markers are support matrices (−λ > 0), green-edged ones the **active** support matrices "
                "on the margin (0 < −λ < C), hollow ones the non-support matrices. Move C: the margin 2/‖W‖ "
                "shrinks and so does the number of support matrices, while the active ones stay few.")
    C = ui.choice("C", [1.0, 10.0, 100.0, 1000.0], default=10.0, widget="select_slider", key=f"{KEY}.toy_C",
                  format_func=ui.format_number)
    X, y, W, b, roles = toy_solution(float(C))
    out = figcache.cached("smm.toy", float(C), lambda: {"toy": figs.toy_figure(X, y, W, b, roles, C),
                                                        "pie": figs.role_pie(roles)})
    left, right = st.columns([3, 2])
    left.plotly_chart(out["toy"], key=f"{KEY}.toy")
    right.plotly_chart(out["pie"], key=f"{KEY}.pie")
    right.metric("margin 2/‖W‖_F", f"{margin_width(W):.4g}")
    return out


def data_tab(ds, X, y, X_te, data_key):
    st.markdown(f"**{ds.name}**: {len(y)} training and {len(X_te)} test samples of {X.shape[1]}×{X.shape[2]} "
                f"matrices; {int((y > 0).sum())} labelled +1, {int((y < 0).sum())} labelled −1.")
    samples = figcache.cached("smm.samples", data_key, lambda: sample_images(X, y))  # the data's, not C's or τ's
    for i, col in enumerate(st.columns(6)):
        if i in samples:
            col.plotly_chart(samples[i], key=f"{KEY}.sample{i}")


def sample_images(X, y) -> dict:
    """The first three training matrices of each class, alternating +1 and −1, by column."""
    out = {}
    for i in range(6):
        cls = 1.0 if i % 2 == 0 else -1.0
        idx = np.flatnonzero(y == cls)
        if idx.size > i // 2:
            out[i] = figs.weight_image({"W": X[idx[i // 2]]}, f"y = {int(cls):+d}").update_layout(
                height=220, margin=dict(l=10, r=10, t=40, b=10), showlegend=False)
    return out


def algorithm_tab():
    st.markdown("**Model (1)** and its splitting (P): constraints $\\mathcal{A}W + by + v = e$, $W = U$.")
    st.latex(r"\min_{W,b}\ \tfrac12\|W\|_F^2 + \tau\|W\|_* + C\sum_{i=1}^n \max\{0,\ 1 - y_i(\langle W, X_i\rangle + b)\}")
    st.markdown("**Algorithm 1 (inexact ALM)**: minimise the smooth $\\varphi_k$ (10) over $(W,b)$, then update")
    st.latex(r"\omega = -\lambda^k - \sigma_k(\mathcal{A}W + by - e),\quad \lambda^{k+1} = -\Pi_{[0,C]^n}(\omega),"
             r"\quad \Lambda^{k+1} = \Pi_{\|\cdot\|_2 \le \tau}(\Lambda^k + \sigma_k W)")
    st.latex(r"\nabla_W\varphi_k = W - \mathcal{A}^*\Pi_S(\omega) + \Pi_{B_2^\tau}(\Lambda^k + \sigma_k W),\qquad"
             r"\nabla_b\varphi_k = -y^\top\Pi_S(\omega)")
    st.markdown("**Algorithm 2 (semismooth Newton-CG)**, with the Schur reduction (40)–(41) on the active set "
                "$J_1 = \\{0 < \\omega_j < C\\}$ and the rank-$|\\alpha|$ Jacobian $G$ of the spectral-ball "
                "projection: one CG product costs $O(\\max\\{|J_1|, |\\alpha|\\}\\,pq)$ instead of $O(npq)$.")
    st.latex(r"\big(I + \sigma G + \sigma\mathcal{A}_{J_1}^*\mathcal{A}_{J_1} - \tfrac{\sigma^2}{\sigma|J_1| + \rho}"
             r"\mathcal{A}_{J_1}^* y y^\top \mathcal{A}_{J_1}\big)\, d_W = -\nabla_W\varphi - "
             r"\tfrac{\sigma r_2}{\sigma|J_1|+\rho}\textstyle\sum_{j\in J_1} X_j")
    st.code("""for k = 0, 1, ...                                   # Algorithm 1
    repeat                                          # Algorithm 2 (SNCG)
        J1 = {j : 0 < ω_j < C};  α = {i : ν_i(Λ + σW) > τ}
        solve (40) by CG (or directly when G = I and that is cheaper)
        Armijo line search on φ_k
    until ‖∇φ_k‖ small enough (inexactness rule)
    λ ← −Π_S(ω);  Λ ← Π_B(Λ + σW);  σ ↑
until η_kkt ≤ ε""", language="text")
    st.markdown("**Start** (the paper's Tables 4–5, Sec. 6.1): ALM-SNCG begins from a few isPADMM steps "
                "(`warm_start`, 4 by default here, 0 for the origin); their time counts as ALM-SNCG's. They "
                "shrink $J_1$ from about a third of the samples to a few hundred before the first Newton system.")
    st.markdown("**Algorithm 3 (adaptive sieving)** for $C_1 < \\dots < C_N$: solve on "
                "$I = \\{j : y_j f(X_j) \\le 1 + \\hat\\varepsilon\\}$ from the previous C, add the left-out samples "
                "with $1 - y_j f(X_j) \\ge 0$ (at most $d_{\\max}$ per round), repeat until none is left.")
    st.markdown("**Stopping measure** (46): the largest of six relative residuals,")
    st.latex(r"\eta_{kkt} = \max\{\eta_W, \eta_b, \eta_v, \eta_U, \eta_\lambda, \eta_\Lambda\},\quad "
             r"\eta_W = \tfrac{\|W + \mathcal{A}^*\lambda + \Lambda\|}{1 + \|W\| + \|\mathcal{A}^*\lambda\| + \|\Lambda\|},\ "
             r"\eta_\lambda = \tfrac{\|\mathcal{A}W + by + v - e\|}{1 + \sqrt n}, \dots")
    st.markdown("Baselines: **isPADMM** (Alg. 4, its (W, b) step by ALM-SNCG with τ = 0), **sGS-isPADMM** (Alg. 5, "
                "closed-form steps, many more iterations) and **F-ADMM** (Luo et al. 2015, a dual box-QP per step).")


def main() -> None:
    ui.page_header("Support matrix machine", smm.PAPER,
                   "Classify matrices with a low-rank, sample-sparse model. Compare ALM-SNCG with the ADMM "
                   "baselines on the KKT residual, look at the rank and the support matrices of the solution, "
                   "and trace the solution over C with adaptive sieving.")
    ui.preset_buttons(PRESETS["smm"], key=KEY)
    ds = ui.dataset_picker("smm", key=f"{KEY}.data", bundled=("digits-8x8",), sources=DATA_SOURCES,
                           check=check_matrix_classification)
    if ds is None:
        return
    positive, values, chosen, per_method, stop = sidebar(ds)
    p, q = (np.array(ds.X.shape[1:3]) * values["upsample"]).tolist() if ds.X.ndim == 3 else (ds.n_features, 1)
    cost = ui.smm_cost(min(ds.n_samples, values["n_max"]), p, q, max_iter=stop["max_iter"], methods=chosen,
                       warm_start=per_method.get("alm-sncg", {}).get("warm_start", 0))
    execute = ui.run_controls(KEY, live_default=True, cost=cost)
    X, y, X_te, y_te = prepare(ds, ds.meta["key"], positive, values["upsample"], values["scale"], values["n_max"])
    problem = smm.build_problem(X, y, C=values["C"], tau=values["tau"])
    labels = {PAGE_METHODS[m].label: m for m in chosen}
    data_key = [ds.meta["key"], positive, values]
    jobs = [ui.Job(PAGE_METHODS[m].label, ui.config_key(KEY, data_key, m, per_method[m], stop),
                   lambda cb, m=m: smm.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
            for m in chosen]
    results = ui.run_live(jobs, ui.LiveSpec(y="kkt", y_title="η_kkt (46)", tol=stop["tol"], max_iter=stop["max_iter"]),
                          key=KEY, execute=execute) if jobs else {}
    if not chosen:
        st.info("Pick at least one method in the sidebar.")
    tabs = ui.view_tabs(["Convergence", "Solution", "Path", "Teaching (Fig. 1)", "Data", "Algorithm", "Export"],
                        key=f"{KEY}.view")
    drawn = ui.tabs_to_draw(tabs, export=6)
    figures = {}
    if drawn[0]:
        with tabs[0]:
            if results:
                figures.update(convergence_tab(results, chosen, labels, stop["tol"]))
    if drawn[1]:
        with tabs[1]:
            figures.update(solution_tab(problem, results, labels))
    if drawn[2]:
        with tabs[2]:
            figures.update({f"path_{k}": v for k, v in path_tab(problem, X_te, y_te, data_key, values).items()})
    if drawn[3]:
        with tabs[3]:
            figures.update(teaching_tab())
    if drawn[4]:
        with tabs[4]:
            data_tab(ds, X, y, X_te, [ds.meta["key"], positive, values["upsample"], values["scale"], values["n_max"]])
    if drawn[5]:
        with tabs[5]:
            algorithm_tab()
    if drawn[6]:
        with tabs[6]:
            ui.export_panel({k: r.history for k, r in results.items()}, figures, key="smm",
                            config={"data": data_key, "methods": per_method, "stopping": stop})


ui.run_page(main)

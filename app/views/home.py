"""Home: what the lab is, a suggested lesson order (links that open a page with a preset), and one card per
family with its paper and what you can see there."""
from __future__ import annotations

import importlib
from pathlib import Path

import streamlit as st

from app.views._presets import LESSON, PRESETS
from solvers import FAMILIES, datasets

PAGES = Path(__file__).parent
TITLES = {"foundations": "Foundations", "sparse": "Sparse ℓ0", "multitask": "Multi-task", "smm": "SMM",
          "metric": "Metric learning", "npsvc": "NPSVC++"}
CARDS = {
    "foundations": "Gradient descent, heavy ball and Nesterov/FISTA on 2-D problems, with projections onto a box, "
                   "the ℓ0 ball and the capped simplex: the building blocks of the five papers.",
    "sparse": "PG / APG / PG+ / APG+ against baselines on ℓ0-constrained least squares and logistic regression: "
              "residual vs time, support changes, transition plots.",
    "multitask": "Convex ASO by APG, PG and BCD: the shared subspace, eigenvalues of M, the Eq. (14) explorer.",
    "smm": "Support matrix machines: ALM-SNCG against ADMMs, KKT residual vs time, C-paths by adaptive sieving.",
    "metric": "Triplet metric learning with safe screening: screening rate per bound and rule along the λ-path.",
    "npsvc": "Nonparallel SVMs and NPSVC++: Pareto weights, per-class objectives, t-SNE of learned features.",
}


def lesson_order() -> None:
    """A 50-minute class: each step opens its page with a preset applied (?preset=<slug>)."""
    st.subheader("A lesson in 50 minutes")
    st.caption("Each link opens the page with a preset already applied; the page says what to look at.")
    for number, (page, slug, minutes, point) in enumerate(LESSON, start=1):
        if not (PAGES / f"{page}.py").is_file():
            continue
        preset = next((p for p in PRESETS.get(page, []) if p.slug == slug), None)
        label = f"{number}. {TITLES[page]}" + (f" — {preset.title}" if preset else "") + f" ({minutes} min)"
        # the link on a line of its own, what to point at under it: a column beside it cut labels mid-word at 1400 px
        st.page_link(f"views/{page}.py", label=label, query_params={"preset": slug} if preset else None)
        st.caption(point)


def data_note() -> str:
    """Whether the papers' real datasets are there, without the server's file paths (students see this page)."""
    where = datasets.data_dir()
    if where is None or not where.is_dir():
        return ("No data directory found: set SOLVERS_DATA to use the papers' real datasets; bundled and synthetic "
                "data work.")
    real = sum(kind == "real" for kind in datasets.available().values())
    return (f"Data directory found ({real} of the papers' {len(datasets.REAL)} real datasets present); bundled and "
            "synthetic data always work.")


def family_module(name: str):
    """The family's package when it is installed and complete enough to describe itself, else None."""
    try:
        module = importlib.import_module(f"solvers.{name}")
    except ImportError:
        return None
    return module if hasattr(module, "TITLE") and hasattr(module, "PAPER") else None


st.title("Optimization lab")
st.markdown(
    "An interactive lab for five optimization methods from recent papers. Pick a dataset and one or more "
    "methods, move a slider, and watch convergence curves, screening rates, Pareto weights, solution paths "
    "and learned features change live. The same solvers run from Python and the command line "
    "(`python -m solvers …`) to reproduce the papers' tables (`python -m solvers.bench …`)."
)
st.caption(data_note())
lesson_order()
st.subheader("The pages")
for row_start in range(0, len(FAMILIES) + 1, 3):
    cols = st.columns(3)
    for col, name in zip(cols, (["foundations", *FAMILIES])[row_start:row_start + 3]):
        module = family_module(name)
        with col.container(border=True):
            if module is None:
                st.markdown(f"#### {name}")
                st.caption("not available in this installation")
            else:
                st.markdown(f"#### {module.TITLE}")
                st.caption(module.PAPER)
            st.write(CARDS[name])
            if module is not None and (PAGES / f"{name}.py").is_file():
                st.page_link(f"views/{name}.py", label="Open the page", icon=":material/arrow_forward:")

"""Paper references in plain words, for hover text: "seed 001", "(24)", "Thm 2.1 b", "Eq. (14)".

``explain(text, family)`` lists what each reference in ``text`` means (or "" when there is none);
``explain_figure(fig, family)`` adds an "ⓘ" to a figure whose title cites the paper, with those lines on hover.
"""
from __future__ import annotations

import re

import plotly.graph_objects as go

PAPERS = {  # seed number → (family, the paper in a few words)
    "000": ("multitask", "Chen et al., a convex formulation for learning a shared subspace across tasks"),
    "001": ("sparse", "Alcantara & Lee, accelerated projected gradient for sparsity-constrained problems"),
    "002": ("smm", "Wu, Li & Sun, support matrix machines solved by ALM-SNCG"),
    "003": ("metric", "Yoshida, Takeuchi & Karasuyama, safe triplet screening for metric learning"),
    "004": ("npsvc", "Zhang et al., NPSVC++: nonparallel classifiers with learned representations"),
}
SHORT = {family: words for family, words in PAPERS.values()}
# references whose content is worth saying in words (family, reference as written) → meaning
KNOWN = {
    ("sparse", "(24)"): "the stopping residual: how far the iterate is from a fixed point of the projected "
                        "gradient step; zero exactly at L-stationary points",
    ("sparse", "Thm 2.1 b"): "after finitely many iterations the support (the set of nonzero coefficients) stops "
                             "changing, so the method can switch to a smooth problem on that support",
    ("multitask", "Eq. (14)"): "the eigenvalue subproblem: how much weight γᵢ each direction of the shared "
                               "subspace gets, with Σγᵢ = h and 0 ≤ γᵢ ≤ 1",
    ("multitask", "Theorem A.1"): "APG's guarantee: the objective gap is at most 2L‖Z₀ − Z*‖²/k² after k steps",
    ("metric", "Thm 3.1"): "a safe region for the optimal metric: a sphere cut by a half-space; a triplet outside "
                           "the region's reach can be removed before solving",
}
PATTERN = re.compile(r"seed (\d{3})|Theorem [A-Z]?\.?\d+(?:\.\d+)?|Thm\.? \d+(?:\.\d+)?(?: [a-z]\b)?|Eq\. \(\d+\)|"
                     r"\((\d{1,3})\)")


def _meaning(ref: str, family: str | None) -> str | None:
    seed = re.fullmatch(r"seed (\d{3})", ref)
    if seed:
        paper = PAPERS.get(seed.group(1))
        return f"one of the five papers this lab re-implements: {paper[1]}" if paper else None
    if (family, ref) in KNOWN:
        return KNOWN[(family, ref)]
    where = f"the {SHORT[family].split(',')[0]} paper" if family in SHORT else "the paper named at the top"
    number = re.search(r"\d+(?:\.\d+)?(?: [a-z])?", ref).group(0)
    if ref.startswith(("Thm", "Theorem")):
        return f"theorem {number} of {where}"
    return f"equation ({number}) of {where}"


def explain(text: str, family: str | None = None) -> str:
    """One line per paper reference in ``text``: "(24): equation (24) of …". Empty when there is none."""
    lines, seen = [], set()
    for match in PATTERN.finditer(text or ""):
        ref = match.group(0)
        if ref in seen:
            continue
        seen.add(ref)
        meaning = _meaning(ref, family)
        if meaning:
            lines.append(f"{ref}: {meaning}")
    return "\n\n".join(lines)


def explain_figure(fig: go.Figure, family: str | None = None) -> go.Figure:
    """An "ⓘ" beside the title that shows, on hover, what the title's paper references mean."""
    title = fig.layout.title.text or ""
    axes = " ".join(str(a.title.text or "") for a in (fig.layout.xaxis, fig.layout.yaxis))
    text = explain(f"{title} {axes}", family)
    if text:
        fig.add_annotation(text="ⓘ paper references", hovertext=text.replace("\n\n", "<br>"), showarrow=False,
                           xref="paper", yref="paper", x=1, y=1.02, xanchor="right", yanchor="bottom",
                           font=dict(size=12, color="#1f4e79"))
    return fig

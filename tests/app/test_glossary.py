"""Paper references get plain words on hover: the text helper and the figure "ⓘ"."""
import plotly.graph_objects as go

from app.ui.glossary import explain, explain_figure


def test_known_references_are_said_in_words():
    text = explain("Support changes (finite identification, Thm 2.1 b); residual (24); seed 001", "sparse")
    lines = text.split("\n\n")
    assert len(lines) == 3
    assert any(line.startswith("Thm 2.1 b: ") and "support" in line and "stops changing" in line for line in lines)
    assert any(line.startswith("(24): ") and "stationary" in line for line in lines)
    assert any(line.startswith("seed 001: ") and "Alcantara" in line for line in lines)


def test_unknown_references_still_name_the_paper_and_text_without_references_gives_nothing():
    assert explain("Eq. (79) and Theorem A.1", "multitask").split("\n\n") == [
        "Eq. (79): equation (79) of the Chen et al. paper",
        "Theorem A.1: APG's guarantee: the objective gap is at most 2L‖Z₀ − Z*‖²/k² after k steps"]
    assert explain("Objective gap per iteration", "smm") == ""


def test_a_figure_citing_the_paper_gets_a_hover_note_and_one_without_does_not():
    cited = explain_figure(go.Figure(layout=dict(title="Residual (24) vs time")), "sparse")
    notes = [a for a in cited.layout.annotations if a.hovertext]
    assert len(notes) == 1 and "stationary" in notes[0].hovertext
    plain = explain_figure(go.Figure(layout=dict(title="Accuracy along the path")), "smm")
    assert not plain.layout.annotations

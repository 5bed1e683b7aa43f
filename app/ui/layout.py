"""Page framing: the header with the paper, and a guard so a page never shows a traceback."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

import streamlit as st

from solvers.core import InputError

from . import figcache
from .charts import PRESENT_KEY
from .follow import lecture_panel, take_lead_state
from .glossary import explain
from .page_state import begin_page, bool_codec, flush_url, kept, page_prefix, share_panel
from .theme import install as install_readable_charts

log = logging.getLogger(__name__)


COMPACT_CSS = (Path(__file__).resolve().parents[2] / "assets" / "compact.css").read_text()


def page_header(title: str, paper: str, summary: str, family: str | None = None) -> None:
    """A compact head: the title on one line, then "About this page" (the paper and what to look at) folded,
    so that at 1024×768 the controls and the chart come first. Paper references in the summary ("seed 001",
    "(24)") are explained in words on hover (the help icon)."""
    st.html(f"<style>{COMPACT_CSS}</style>")
    st.title(title)
    with st.expander("About this page", icon=":material/info:"):
        st.caption(paper)
        st.markdown(summary, help=explain(summary, family) or None)


def presentation_toggle() -> bool:
    """Sidebar switch for a lecture hall: larger fonts, chart first, the previous run as a grey ghost."""
    return kept(st.sidebar.toggle, "Presentation mode", key=PRESENT_KEY, default=False, codec=bool_codec(),
                box=st.sidebar, help="Larger fonts (18 px ticks), the chart before the explanations, and the "
                                     "previous run's curves kept in grey as “before”, for before/after comparisons.")


def run_page(main: Callable[[], None]) -> None:
    """Run a page's body; bad input becomes st.error and any other failure a short message.

    Afterwards, when the page kept any widget, the sidebar gets "Share or load this view" (drawn last, so
    its link holds every value of this run), and the URL is sent once (Back then restores the previous state). Every Plotly figure the page draws gets the lab's font sizes and
    contrast (app/ui/theme.py), the family pages' own figures included.
    """
    install_readable_charts()
    figcache.install()
    take_lead_state()  # a follower whose lecturer moved takes the lead's settings before any widget is drawn
    begin_page()
    presentation_toggle()
    try:
        main()
    except InputError as exc:
        st.error(str(exc))
    except MemoryError as exc:  # a request no estimate caught: say what to change, not how numpy failed
        log.exception("page ran out of memory")
        st.error(f"These settings need more memory than the server can give ({exc}). Choose fewer samples, "
                 "features or tasks, or a smaller generator size.")
    except Exception as exc:  # never a traceback on the page; the server log keeps it
        log.exception("page failed")
        st.error("This page could not finish with these settings. Change the last setting you moved (a smaller "
                 "step, size or iteration cap, or another method) or pick a preset; if it persists, please report it "
                 f"with the URL of this page (detail: {exc})")
    prefix = page_prefix()
    if prefix:
        lecture_panel(prefix)  # follow the lecturer, or lead (with OPTLAB_LECTURER_KEY on the server)
        share_panel(prefix)
    flush_url()  # the run's URL in one message: one browser-history entry, which Back returns to

"""Page framing: the header with the paper, and a guard so a page never shows a traceback."""
from __future__ import annotations

import logging
from typing import Callable

import streamlit as st

from solvers.core import InputError

from .glossary import explain

log = logging.getLogger(__name__)


def page_header(title: str, paper: str, summary: str, family: str | None = None) -> None:
    """Title, paper, and the summary; paper references in the summary ("seed 001", "(24)") are explained on hover."""
    st.title(title)
    st.caption(paper)
    st.markdown(summary, help=explain(summary, family) or None)


def run_page(main: Callable[[], None]) -> None:
    """Run a page's body; bad input becomes st.error and any other failure a short message."""
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
        st.error(f"Something went wrong: {type(exc).__name__}: {exc}. Try other settings; "
                 "if it persists, please report it with the URL of this page.")

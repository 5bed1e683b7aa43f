"""Follow mode: the lecturer's page leads, and students' pages that opt in follow its configuration.

The lecturer unlocks the lead with the key the server was started with (``OPTLAB_LECTURER_KEY``), from a link
(``?lecturer=<key>``, removed from the address at once) or typed in the sidebar's "Lecture" panel, and turns on
"Lead the class from this page". Every run of the lecturer's page then publishes its URL state (``link_state``:
the widgets and the open tab) to a process-wide board (``st.cache_resource``), with a version number that grows
when the state changes. A student's page with "Follow the lecturer" on checks the board once a second in a
fragment (``st.fragment(run_every=...)``): comparing two integers costs next to nothing; only when the version
moved does it take the lead's state (at the start of the next run, before any widget is drawn, as a loaded
configuration is taken) and rerun, which is a cached rerun when the lecturer's run is in the run store.
Turning Follow off breaks away (the student explores on their own); turning it on again comes back at once.
The lecturer's panel counts the students who checked in the last few seconds.

Without ``OPTLAB_LECTURER_KEY`` on the server there is no lead and the panel is not shown.
"""
from __future__ import annotations

import hmac
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

import streamlit as st

from .page_state import apply_state, link_state

KEY_ENV = "OPTLAB_LECTURER_KEY"
URL_PARAM = "lecturer"
CHECK_SECONDS = 1.0  # how often a follower looks at the board: "within a second" of the lecturer's change
COUNT_SECONDS = 2.0  # how often the lecturer's follower count refreshes
PRESENT_SECONDS = 3 * CHECK_SECONDS  # a follower not seen for this long has left (closed the tab, broke away)

SESSION = "_follow.session"  # this browser session's id on the board
UNLOCKED = "_follow.lecturer"  # this session holds the lecturer key
SEEN = "_follow.seen"  # the lead version this follower shows
TAKE = "_follow.take"  # (prefix, state) to take at the start of the next run


@dataclass
class Lead:
    version: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    followers: dict[str, float] = field(default_factory=dict)  # session id → when it last checked (monotonic)


class Board:
    """The lead configuration of each page (by key prefix, "fd."), shared by every session of this server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._leads: dict[str, Lead] = {}

    def publish(self, page: str, state: Mapping[str, Any]) -> int:
        """Set the page's lead state; the version moves only when the state changed."""
        with self._lock:
            lead = self._leads.setdefault(page, Lead())
            if lead.version == 0 or lead.state != dict(state):
                lead.version += 1
                lead.state = dict(state)
            return lead.version

    def end(self, page: str) -> None:
        with self._lock:
            self._leads.pop(page, None)

    def check(self, page: str, session: str) -> tuple[int, dict[str, Any]] | None:
        """A follower's look: the lead's version and state (None when nobody leads), counting it as present."""
        with self._lock:
            lead = self._leads.get(page)
            if lead is None:
                return None
            lead.followers[session] = time.monotonic()
            return lead.version, dict(lead.state)

    def leave(self, page: str, session: str) -> None:
        with self._lock:
            lead = self._leads.get(page)
            if lead is not None:
                lead.followers.pop(session, None)

    def followers(self, page: str) -> int:
        now = time.monotonic()
        with self._lock:
            lead = self._leads.get(page)
            if lead is None:
                return 0
            for session in [s for s, t in lead.followers.items() if now - t > PRESENT_SECONDS]:
                del lead.followers[session]
            return len(lead.followers)

    def leads(self, page: str) -> bool:
        with self._lock:
            return page in self._leads


@st.cache_resource
def board() -> Board:
    return Board()


def lecturer_key() -> str | None:
    return os.environ.get(KEY_ENV) or None


def _session() -> str:
    return st.session_state.setdefault(SESSION, uuid.uuid4().hex)


def _matches(given: str | None) -> bool:
    key = lecturer_key()
    return bool(key and given) and hmac.compare_digest(str(given).encode(), key.encode())


def take_lead_state() -> None:
    """At the start of a page run (before any widget): a follower whose lecturer moved takes the lead's state;
    a ``?lecturer=<key>`` link unlocks the lead for this session and leaves the address."""
    given = st.query_params.get(URL_PARAM)
    if given is not None:
        del st.query_params[URL_PARAM]  # the key must not travel on in the share link
        if _matches(given):
            st.session_state[UNLOCKED] = True
    pending = st.session_state.pop(TAKE, None)
    if pending is not None:
        prefix, state = pending
        apply_state(state, prefix)


def _unlock_from_text() -> None:
    if _matches(st.session_state.get("_follow.key_text")):
        st.session_state[UNLOCKED] = True
    st.session_state["_follow.key_text"] = ""


def lecture_panel(prefix: str) -> None:
    """The sidebar's "Lecture" panel: Follow the lecturer (students), Lead (the lecturer); nothing without a key."""
    if lecturer_key() is None:
        return
    page = prefix
    # always drawn with the same arguments: an expander whose arguments change is a new one, closed again
    with st.sidebar.expander("Lecture", icon=":material/co_present:"):
        if st.session_state.get(UNLOCKED):
            _lead_controls(page)
        else:
            _follow_controls(page)
            st.text_input("Lecturer key", type="password", key="_follow.key_text", on_change=_unlock_from_text,
                          help="The teacher's key (OPTLAB_LECTURER_KEY on the server) makes this page the class's lead.")


def _lead_controls(page: str) -> None:
    leading = st.toggle("Lead the class from this page", key=f"_follow.lead.{page}",
                        help="Students who turn on “Follow the lecturer” get this page's settings and open tab "
                             "within a second of each change.")
    if leading:
        board().publish(page, link_state(page))
        _follower_count(page)
    elif board().leads(page):
        board().end(page)


@st.fragment(run_every=COUNT_SECONDS)
def _follower_count(page: str) -> None:
    count = board().followers(page)
    st.caption(f"Leading: **{count}** student{'s' if count != 1 else ''} follow this page.")


def _follow_controls(page: str) -> None:
    following = st.toggle("Follow the lecturer", key=f"_follow.on.{page}",
                          help="Your page takes the lecturer's settings whenever they change. Turn it off to explore "
                               "on your own; on again to come back to the lecturer's view.")
    if following:
        _follow_check(page)
    else:
        st.session_state.pop(SEEN, None)  # coming back takes the lead's state at once
        board().leave(page, _session())


@st.fragment(run_every=CHECK_SECONDS)
def _follow_check(page: str) -> None:
    """Once a second: compare the lead's version with the one shown; only a change reruns the page."""
    got = board().check(page, _session())
    if got is None:
        st.caption("Nobody leads this page now; your page stays as it is.")
        return
    version, state = got
    st.caption("Following the lecturer.")
    if st.session_state.get(SEEN) != version:
        st.session_state[SEEN] = version
        st.session_state[TAKE] = (page, state)
        st.rerun(scope="app")

"""One simulated student: a client of Streamlit's own websocket protocol, as the browser speaks it.

The browser opens ``/_stcore/stream`` (sub-protocol "streamlit") and asks for a page run with a ``BackMsg``
whose ``rerun_script`` carries the page, its query string and the widget states; the server answers with
``ForwardMsg``s (the page's elements as deltas, URL changes, ...) and ends each run with ``script_finished``.
A student here does the same, without drawing anything: it times each run from its request to
``script_finished``, and keeps what a test needs from the answer: exception elements, ``st.error`` boxes,
the page's share link (the configuration the page actually used) and the keys of its buttons.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClosedError, websocket_connect

MAX_MESSAGE = 1 << 28  # a page's figures can be several MB in one message
NEEDS_RUN = "press **Run**"  # what a page that waits for its Run button says (app/ui/runs.py)


@dataclass
class PageRun:
    """What one page run gave a student."""

    seconds: float
    status: str  # finished | failed | timeout | closed
    exceptions: list[str] = field(default_factory=list)  # messages of exception elements (tracebacks on the page)
    errors: list[str] = field(default_factory=list)  # st.error boxes
    share_link: str | None = None  # the page's "Copy link" text: the configuration it ran
    needs_run: bool = False  # the page waits for its Run button
    buttons: dict[str, str] = field(default_factory=dict)  # widget key → widget id
    sliders: dict[str, list[float]] = field(default_factory=dict)  # widget key → the value a plain slider shows
    toggles: dict[str, str] = field(default_factory=dict)  # widget key → widget id (toggles and checkboxes)
    full: bool = False  # the whole page ran (not only a fragment)
    detail: str = ""  # why it failed
    query: str = ""  # the link's query string this run was asked for

    @property
    def ok(self) -> bool:
        return self.status == "finished"


def _widget_key(widget_id: str) -> str:
    """The user key at the end of Streamlit's widget id (``$$ID-<hash>-fd.run`` → ``fd.run``)."""
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and widget_id.startswith("$$ID") else widget_id


class Student:
    """``async with Student(url, "foundations") as s: run = await s.open("fd.problem.kappa=100")``."""

    def __init__(self, base_url: str, page: str, *, timeout: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.page = page
        self.timeout = timeout
        self.query = ""  # the URL's query string as the student's browser would show it
        self.fragments: dict[str, float] = {}  # fragment id → seconds between the reruns the page asked for
        self.page_hash = ""  # the page's script hash, from the server's new_session message (fragment reruns name it)
        self.switched: dict[str, bool] = {}  # toggles this student switched: sent with every later run, as a browser
        # sends the state of every widget (a widget the request leaves out is back at its default)
        self._ws = None

    async def __aenter__(self) -> "Student":
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def connect(self) -> None:
        parts = urlsplit(self.base_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        request = HTTPRequest(f"{scheme}://{parts.netloc}{parts.path}/_stcore/stream",
                              headers={"Sec-WebSocket-Protocol": "streamlit"}, request_timeout=self.timeout)
        self._ws = await websocket_connect(request, max_message_size=MAX_MESSAGE)

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
            self._ws = None

    async def open(self, query: str = "") -> PageRun:
        """The page opened from a link (a new tab, or Back/Forward to that link)."""
        self.query = query
        return await self._run(query)

    step = open  # a step through the lesson is a history step to the next link: the same request

    async def press(self, widget_id: str) -> PageRun:
        """Press a button (its widget id from ``PageRun.buttons``), as a click does."""
        return await self._run(self.query, trigger=widget_id)

    async def toggle(self, widget_id: str, value: bool) -> PageRun:
        """Switch a toggle or checkbox (its widget id from ``PageRun.toggles``)."""
        return await self._run(self.query, switch=(widget_id, value))

    async def fragment(self, fragment_id: str) -> PageRun:
        """The timed rerun of a fragment (``st.fragment(run_every=...)``) that the browser sends on its own."""
        return await self._run(self.query, fragment_id=fragment_id)

    async def _run(self, query: str, trigger: str | None = None, switch: tuple[str, bool] | None = None,
                   fragment_id: str | None = None) -> PageRun:
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = self.page
        msg.rerun_script.context_info.url = f"{self.base_url}/{self.page}"
        if trigger is not None:
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = trigger
            state.trigger_value = True
        if switch is not None:
            self.switched[switch[0]] = switch[1]
        for widget_id, value in self.switched.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id, state.bool_value = widget_id, value
        if fragment_id is not None:
            msg.rerun_script.page_script_hash = self.page_hash
            msg.rerun_script.fragment_id = fragment_id
            msg.rerun_script.is_auto_rerun = True
        start = time.perf_counter()
        run = PageRun(0.0, "finished", query=query)
        try:
            await self._ws.write_message(msg.SerializeToString(), binary=True)
            await asyncio.wait_for(self._read_until_finished(run), self.timeout)
        except asyncio.TimeoutError:
            run.status, run.detail = "timeout", f"no script_finished within {self.timeout:g} s"
        except (WebSocketClosedError, AttributeError, OSError) as exc:
            run.status, run.detail = "closed", f"connection closed ({type(exc).__name__})"
        run.seconds = time.perf_counter() - start
        return run

    async def _read_until_finished(self, run: PageRun) -> None:
        while True:
            raw = await self._ws.read_message()
            if raw is None:
                raise WebSocketClosedError()
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "delta":
                self._read_delta(fwd.delta, run)
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            elif kind == "auto_rerun":
                self.fragments[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    run.status, run.detail = "failed", "the page did not compile"
                run.full = status == ForwardMsg.FINISHED_SUCCESSFULLY
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:  # a rerun the page asked for (st.rerun) follows
                    return

    @staticmethod
    def _read_delta(delta, run: PageRun) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "exception":
            run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
        elif kind == "alert":
            if element.alert.format == Alert.ERROR:
                run.errors.append(element.alert.body)
            elif NEEDS_RUN in element.alert.body:
                run.needs_run = True
        elif kind == "code" and element.code.code_text.startswith(("http://", "https://")):
            run.share_link = element.code.code_text
        elif kind == "button":
            run.buttons[_widget_key(element.button.id)] = element.button.id
        elif kind == "checkbox":
            run.toggles[_widget_key(element.checkbox.id)] = element.checkbox.id
        elif kind == "slider" and not element.slider.options and element.slider.set_value:
            run.sliders[_widget_key(element.slider.id)] = list(element.slider.value)

"""Page state: every widget and the selected view live in session state AND in the URL, with readable values.

How one widget is kept (``keep``):

1. Before the widget is drawn, and only when session state does not hold its key yet (a new session, a
   reloaded or hand-edited link, a loaded configuration), the URL's value is parsed *tolerantly*: numbers in
   any notation (``2000``, ``2e3``, ``2e+03``), choices by their key or their shown label in any case
   (``gd`` or ``Gradient descent``), lists repeated or comma-separated. A value that cannot be used is never
   dropped silently: the page shows which parameter, the value and why, and what it shows instead.
2. The widget is drawn from session state (no second default), so it survives every rerun.
3. Its value is written back to the URL in readable form (``fd.methods=gd``, ``fd.stop.max_iter=2000``); a
   value equal to the default is left out, so links stay short.

Browser Back and Forward: Streamlit pushes one browser-history entry per URL change it is sent, and on Back it
reruns the page with the older URL but with the *current* widget values. So a page run (``run_page``) sends its
URL once, at the end (``flush_url``: one history entry per change, however many widgets a preset moved), and
remembers what it sent. When a run starts with a URL that differs from the one this session last sent for a
page (Back, Forward), the page's kept values are dropped and re-read from that URL: Back restores the previous
configuration, the open tab included.

Streamlit's own ``bind="query-params"`` is not used: it writes the *shown* label (``2e+03``, ``Gradient
descent``) and drops a value it cannot match without a word.

Also here: ``view_tabs`` (stateful tabs in the URL), ``share_panel`` (Copy link + load a configuration) and
``link_state`` (the URL's state as a dict; the JSON export stores it, the loader puts it back).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import parse_qs, urlencode, urlsplit

import streamlit as st

NOTICES = "_page_state.notices"  # session key: {widget key: Notice}
KEYS = "_page_state.keys"  # session key: every widget key kept by this module
EVERY_TAB = "_page_state.every_tab"  # session key: draw every tab on every run (``tabs_to_draw``)
RUN_KEYS = "_page_state.run_keys"  # session key: the keys kept during this run of the page, in order
SENT = "_page_state.sent"  # session key: the URL this session last sent ({param: [values]}); None before any
PENDING = "_page_state.pending"  # session key: URL changes of this run not sent yet ({param: [values] or None})
FOLLOWED = "_page_state.followed"  # session key: the pages (key prefixes) whose URL this run has checked


class LinkValueError(ValueError):
    """A URL value that cannot be used; the message says why (shown to the user)."""


@dataclass
class Notice:
    message: str
    fallback: Any  # the value shown instead; the notice stays until the widget leaves it


# ---------------------------------------------------------------------------------------------- numbers
def readable_number(v: float | int) -> str:
    """Plain text for a number, exact and short: 2000, 0.001, 1e-08, 0.5346 (never "2e+03")."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or (float(v).is_integer() and abs(v) < 1e15):
        return str(int(v))
    text = repr(float(v))  # the shortest text that reads back to the same float
    if "e" in text:
        mantissa, exp = text.split("e")
        text = f"{mantissa}e{int(exp)}"  # 1e-08 → 1e-8
    return text


def parse_number(raw: str) -> float:
    """A number from hand-written text: 2000, 2e3, 2e+03, 2 000, 2_000, 1,5 is refused (ambiguous)."""
    text = raw.strip().replace(" ", "").replace("_", "")
    try:
        value = float(text)
    except ValueError:
        raise LinkValueError("not a number") from None
    if not math.isfinite(value):
        raise LinkValueError("not a finite number")
    return value


def snap(value: float, options: Sequence[float]) -> float | None:
    """The option equal to ``value`` up to rounding in its text, or None."""
    for o in options:
        if math.isclose(value, float(o), rel_tol=1e-9, abs_tol=1e-300):
            return o
    return None


# ---------------------------------------------------------------------------------------------- choices
def match_choice(raw: str, options: Sequence[Any], format_func: Callable[[Any], Any] = str) -> Any:
    """The option whose value or shown label equals ``raw`` (exact, then ignoring case, spaces, - and _)."""
    def norm(s: str) -> str:
        return re.sub(r"[\s_\-]+", "", str(s)).lower()

    for o in options:
        if raw == str(o) or raw == str(format_func(o)):
            return o
    for o in options:
        if norm(raw) in (norm(str(o)), norm(str(format_func(o)))):
            return o
    numbers = [o for o in options if isinstance(o, (int, float)) and not isinstance(o, bool)]
    if numbers:
        try:
            hit = snap(parse_number(raw), numbers)
        except LinkValueError:
            hit = None
        if hit is not None:
            return hit
    raise LinkValueError(f"allowed: {', '.join(option_text(o) for o in options)}")


def option_text(o: Any) -> str:
    """An option as URL text: numbers readable (10, not 10.0), anything else as str."""
    return readable_number(o) if isinstance(o, (int, float)) and not isinstance(o, bool) else str(o)


def split_list(raw: Sequence[str]) -> list[str]:
    """Repeated parameters and comma-separated ones: ``m=a&m=b`` or ``m=a,b``; an empty value is an empty list."""
    return [part.strip() for item in raw for part in item.split(",") if part.strip()]


# ---------------------------------------------------------------------------------------------- the codec
@dataclass
class Codec:
    """How one widget's value reads from URL text (``parse`` raises LinkValueError) and is written back."""

    parse: Callable[[list[str]], Any]
    write: Callable[[Any], list[str]]


def number_codec(check: Callable[[float], Any]) -> Codec:
    """``check(float) -> value`` validates and converts (raising LinkValueError), e.g. snapping to a slider step."""
    def parse(raw: list[str]) -> Any:
        if raw[-1].strip() == "":
            raise LinkValueError("empty")
        return check(parse_number(raw[-1]))

    return Codec(parse, lambda v: [] if v is None else [readable_number(v)])


def optional_number_codec(check: Callable[[float], Any]) -> Codec:
    """A number box that may be empty (None): an empty URL value means "not given"."""
    def parse(raw: list[str]) -> Any:
        return None if raw[-1].strip() == "" else check(parse_number(raw[-1]))

    return Codec(parse, lambda v: [""] if v is None else [readable_number(v)])


def choice_codec(options: Sequence[Any], format_func: Callable[[Any], Any] = str) -> Codec:
    return Codec(lambda raw: match_choice(raw[-1].strip(), options, format_func), lambda v: [option_text(v)])


def multi_choice_codec(options: Sequence[Any], format_func: Callable[[Any], Any] = str) -> Codec:
    """Several options; unknown entries are reported (LinkValueError) but the known ones are kept (``partial``)."""
    def parse(raw: list[str]) -> list[Any]:
        whole = [r for r in raw if r.strip()]
        chosen, unknown = [], []
        for token in whole if all(_is_option(r, options, format_func) for r in whole) else split_list(raw):
            try:
                value = match_choice(token, options, format_func)
            except LinkValueError:
                unknown.append(token)
                continue
            if value not in chosen:
                chosen.append(value)
        if unknown:
            raise PartialValue(chosen, f"unknown {', '.join(map(repr, unknown))}; allowed: "
                                       f"{', '.join(option_text(o) for o in options)}")
        return chosen

    return Codec(parse, lambda v: [option_text(o) for o in v] if v else [""])


def _is_option(raw: str, options: Sequence[Any], format_func: Callable[[Any], Any]) -> bool:
    try:
        match_choice(raw.strip(), options, format_func)
        return True
    except LinkValueError:
        return False


class PartialValue(LinkValueError):
    """Part of a value could be used (``value``); the message says what was left out."""

    def __init__(self, value: Any, message: str) -> None:
        super().__init__(message)
        self.value = value


def bool_codec() -> Codec:
    def parse(raw: list[str]) -> bool:
        text = raw[-1].strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise LinkValueError("allowed: true or false")

    return Codec(parse, lambda v: ["true" if v else "false"])


def text_codec() -> Codec:
    return Codec(lambda raw: raw[-1], lambda v: [str(v)])


# ---------------------------------------------------------------------------------------------- keeping a widget
def url_values(key: str) -> list[str]:
    """The URL's values of ``key``, this run's changes not yet sent included."""
    pending = st.session_state.get(PENDING)
    if pending is not None and key in pending:
        return list(pending[key] or [])
    return list(st.query_params.get_all(key))


def url_params() -> list[str]:
    """The URL's parameter names, this run's changes not yet sent included."""
    pending = st.session_state.get(PENDING) or {}
    names = [k for k in st.query_params if k not in pending or pending[k] is not None]
    return names + [k for k, v in pending.items() if v is not None and k not in names]


def write_url(key: str, values: list[str] | None) -> None:
    """Set (or with None remove) a URL parameter: at the end of the page run when one is going on, else now."""
    pending = st.session_state.get(PENDING)
    if pending is not None:
        pending[key] = values
        return
    if values is None:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = values if len(values) != 1 else values[0]
    st.session_state[SENT] = current_url()


def current_url() -> dict[str, list[str]]:
    return {k: list(st.query_params.get_all(k)) for k in st.query_params}


def flush_url() -> None:
    """Send this run's URL changes as one (one browser-history entry) and remember what was sent."""
    pending = st.session_state.pop(PENDING, None) or {}
    url = current_url()
    for k, values in pending.items():
        if values is None:
            url.pop(k, None)
        else:
            url[k] = values
    if url != current_url():
        st.query_params.from_dict({k: v if len(v) != 1 else v[0] for k, v in url.items()})
    st.session_state[SENT] = current_url()


def page_of(key: str) -> str:
    """The page (or page-wide setting) a key belongs to: "fd" for "fd.stop.max_iter", "present" for "present"."""
    return key.split(".", 1)[0]


def _on_page(param: str, page: str) -> bool:
    return param == page or param.startswith(page + ".")


def follow_history(page: str) -> None:
    """Once per run and page: when the URL is not what this session last sent (Back, Forward), drop the page's
    kept values so that every widget is seeded from the URL again."""
    followed = st.session_state.setdefault(FOLLOWED, set())
    sent = st.session_state.get(SENT)
    if page in followed or sent is None:
        followed.add(page)
        return
    followed.add(page)
    now = {k: list(st.query_params.get_all(k)) for k in st.query_params if _on_page(k, page)}
    if now == {k: v for k, v in sent.items() if _on_page(k, page)}:
        return
    for k in [k for k in st.session_state.get(KEYS, set()) if _on_page(k, page)]:
        st.session_state.pop(k, None)
    for k in [k for k in st.session_state.get(NOTICES, {}) if _on_page(k, page)]:
        del st.session_state[NOTICES][k]
    # the page's values now follow this URL: record it at once, not only at ``flush_url``. A history step that
    # interrupts this run (Back then Forward, faster than a run) would otherwise compare its URL with the one
    # sent before, find it equal, keep the values of this URL and write them over the one it came to show.
    st.session_state[SENT] = {k: v for k, v in sent.items() if not _on_page(k, page)} | now


def adopt_url(page: str) -> None:
    """The page's values are set for this run (a preset link): record the URL's part of the page as sent, so that
    ``follow_history`` does not take the new link for a history step and drop them. Call before the first widget."""
    sent = st.session_state.get(SENT)
    if sent is None:
        return
    now = {k: list(st.query_params.get_all(k)) for k in st.query_params if _on_page(k, page)}
    st.session_state[SENT] = {k: v for k, v in sent.items() if not _on_page(k, page)} | now


def keep(key: str, default: Any, codec: Codec, *, name: str | None = None, shown: Callable[[Any], str] = str) -> None:
    """Seed session state for ``key`` from the URL (once), before its widget is drawn without a default.

    ``name`` is how the notice names the parameter (default: the key).
    """
    follow_history(page_of(key))
    st.session_state.setdefault(KEYS, set()).add(key)
    st.session_state.setdefault(RUN_KEYS, []).append(key)
    if key in st.session_state:
        return
    raw = url_values(key)
    value = default
    if raw:
        try:
            value = codec.parse(raw)
        except LinkValueError as exc:
            value = exc.value if isinstance(exc, PartialValue) else default
            text = raw[0] if len(raw) == 1 else raw
            what = "uses" if isinstance(exc, PartialValue) else "shows its default"
            st.session_state.setdefault(NOTICES, {})[key] = Notice(
                f"The link sets {key} = {text!r}, which cannot be used ({exc}); {name or key} {what} "
                f"{shown(value)} instead. Change it on the page or in the URL.", value)
    st.session_state[key] = value


def publish(key: str, value: Any, default: Any, codec: Codec, box: Any = None) -> None:
    """Write the widget's value to the URL (left out when it is the default); show a pending link notice."""
    notice = st.session_state.get(NOTICES, {}).get(key)
    if notice is not None:
        if value == notice.fallback:
            (box if box is not None else st).error(notice.message)
        else:  # the user has changed it: the notice has done its job
            del st.session_state[NOTICES][key]
    text = codec.write(value)
    if value == default or text == codec.write(default):
        if url_values(key):
            write_url(key, None)
    elif url_values(key) != text:
        write_url(key, text)


def kept(widget: Callable[..., Any], label: str, *, key: str, default: Any, codec: Codec, box: Any = None,
         name: str | None = None, shown: Callable[[Any], str] = str, **kwargs: Any) -> Any:
    """Draw ``widget(label, key=key, **kwargs)`` with its value kept in session state and the URL."""
    keep(key, default, codec, name=name or label, shown=shown)
    # a link's notice goes above the widget; a slot only when there is one (an element per widget costs every rerun)
    slot = (box if box is not None else st).empty() if key in st.session_state.get(NOTICES, {}) else None
    value = widget(label, key=key, **kwargs)
    publish(key, value, default, codec, slot)
    return value


# ---------------------------------------------------------------------------------------------- views (tabs)
def slug(label: str) -> str:
    """URL text for a view: "Support & steps" → "support-steps", "Eq. (14) explorer" → "eq-14-explorer"."""
    return re.sub(r"[^0-9a-z]+", "-", label.lower()).strip("-")


def view_tabs(labels: Sequence[str], *, key: str) -> Sequence[Any]:
    """``st.tabs`` whose selected tab survives reruns and reloads and is in the URL (``key=slug``).

    The URL takes the slug or the label in any case; the first tab is the default and is left out of the URL.
    """
    labels = list(labels)
    codec = Codec(lambda raw: labels[[slug(x) for x in labels].index(slug(raw[-1]))] if slug(raw[-1]) in
                  [slug(x) for x in labels] else _unknown_view(labels), lambda v: [slug(v)])
    keep(key, labels[0], codec, name="the page", shown=lambda v: f"the {v!r} view")
    if st.session_state.get(key) not in labels:  # a stale label (a tab renamed or not offered now)
        st.session_state[key] = labels[0]
    slot = st.empty()
    tabs = st.tabs(labels, key=key, on_change="rerun")
    publish(key, st.session_state.get(key, labels[0]), labels[0], codec, slot)
    return tabs


def tabs_to_draw(tabs: Sequence[Any], *, always: Sequence[int] = (), export: int | None = None) -> list[bool]:
    """Which of ``view_tabs``' tabs this run draws. Streamlit says which tab is open (lazy tabs), and only that
    one is drawn, with those in ``always`` (a tab holding controls the others read): a slider notch pays for the
    figures on screen, not for every view's, on the server and in the browser. Every tab is drawn when the open
    one is ``export`` (it exports their figures), where Streamlit cannot say (``.open`` is None), and in a
    session that sets ``EVERY_TAB`` (the AppTest harness: a test reads every view's widgets in one run)."""
    opened = [tab.open for tab in tabs]
    if (st.session_state.get(EVERY_TAB) or any(o is None for o in opened)
            or (export is not None and opened[export])):
        return [True] * len(tabs)
    return [bool(o) or i in always for i, o in enumerate(opened)]


def _unknown_view(labels: Sequence[str]) -> Any:
    raise LinkValueError("views: " + ", ".join(slug(x) for x in labels))


# ---------------------------------------------------------------------------------------------- links and loading
def begin_page() -> None:
    """Start a run of a page (``run_page`` calls it): forget the keys of the previous run; URL changes wait
    for ``flush_url`` at the end of the run."""
    st.session_state[RUN_KEYS] = []
    st.session_state[FOLLOWED] = set()
    st.session_state[PENDING] = {}


def page_prefix() -> str | None:
    """The short name of the page that ran ("fd."), from the first key it kept; None when it kept none."""
    keys = [k for k in st.session_state.get(RUN_KEYS) or [] if "." in k]  # not page-wide ones ("present")
    return keys[0].split(".")[0] + "." if keys else None


def link_state(prefix: str | None = None) -> dict[str, str | list[str]]:
    """The URL's parameters (those starting with ``prefix``), one value or a list where repeated."""
    out: dict[str, str | list[str]] = {}
    for k in url_params():
        if prefix is None or k.startswith(prefix):
            values = url_values(k)
            out[k] = values[0] if len(values) == 1 else values
    return out


def share_url(state: Mapping[str, str | list[str]] | None = None) -> str:
    """This page's full address with its state: what "Copy link" gives."""
    base = st.context.url or ""
    query = urlencode(dict(state if state is not None else link_state()), doseq=True)
    return f"{base}?{query}" if query else base


def apply_state(state: Mapping[str, Any], prefix: str) -> None:
    """Replace the page's state by ``state`` (URL form); the next run seeds every widget from it.

    Call from a widget callback (before the script runs), where widget keys may still be changed.
    """
    kept_keys = st.session_state.get(KEYS, set())
    for k in [k for k in kept_keys if k.startswith(prefix)]:
        st.session_state.pop(k, None)
    st.session_state.get(NOTICES, {}).clear()
    for k in [k for k in st.query_params if k.startswith(prefix)]:
        del st.query_params[k]
    for k, v in state.items():
        if isinstance(v, (list, tuple)):
            st.query_params[str(k)] = [str(x) for x in v]
        elif isinstance(v, bool):
            st.query_params[str(k)] = "true" if v else "false"
        elif isinstance(v, (int, float)):
            st.query_params[str(k)] = readable_number(v)
        else:
            st.query_params[str(k)] = str(v)


def read_configuration(text: str | bytes, prefix: str) -> dict[str, Any]:
    """The page state stored in an exported JSON file (``{"link": {...}}``) or a pasted link; LinkValueError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text = text.strip()
    if text.startswith(("http://", "https://", "?")) or ("=" in text and not text.startswith("{")):
        query = urlsplit(text).query if "://" in text else text.lstrip("?")
        pairs = parse_qs(query, keep_blank_values=True)
        state: dict[str, Any] = {k: v[0] if len(v) == 1 else v for k, v in pairs.items()}
    else:
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LinkValueError(f"not JSON and not a link ({exc.msg} at character {exc.pos})") from None
        state = payload.get("link") if isinstance(payload, dict) else None
        if not isinstance(state, dict):
            raise LinkValueError("no \"link\" section: export the configuration from this page's Export tab")
    foreign = sorted(k for k in state if not str(k).startswith(prefix))
    if foreign and len(foreign) == len(state):
        raise LinkValueError(f"it belongs to another page (parameters {', '.join(foreign[:3])}…)")
    return {k: v for k, v in state.items() if str(k).startswith(prefix)}


def share_panel(prefix: str, *, container: Any = None) -> None:
    """Sidebar "Share or load": the link of this view (with a copy button) and a configuration loader."""
    box = container if container is not None else st.sidebar
    message = st.session_state.pop(f"{prefix}load_message", None)  # from a load just done: open the panel
    with box.expander("Share or load this view", icon=":material/link:", expanded=message is not None):
        st.caption("Copy link: the address below reproduces this view (settings and the open tab). "
                   "Use the copy button at its right.")
        st.code(share_url(), language=None, wrap_lines=True)
        st.file_uploader("Load a configuration (exported JSON)", type=["json"], key=f"{prefix}load_file",
                         on_change=_load_from_upload, args=(prefix,),
                         help="The JSON from the Export tab (or any file with a \"link\" section).")
        st.text_input("…or paste a link", key=f"{prefix}load_text", on_change=_load_from_text, args=(prefix,),
                      placeholder="http://…?" + prefix + "methods=…")
        if message:
            (st.success if message[0] == "ok" else st.error)(message[1])


def _load(prefix: str, text: str | bytes, source: str) -> None:
    try:
        state = read_configuration(text, prefix)
    except LinkValueError as exc:
        st.session_state[f"{prefix}load_message"] = ("error", f"Could not load {source}: {exc}.")
        return
    apply_state(state, prefix)
    st.session_state[f"{prefix}load_message"] = ("ok", f"Loaded {len(state)} setting(s) from {source}.")


def _load_from_upload(prefix: str) -> None:
    upload = st.session_state.get(f"{prefix}load_file")
    if upload is not None:
        _load(prefix, upload.getvalue(), upload.name)


def _load_from_text(prefix: str) -> None:
    text = st.session_state.get(f"{prefix}load_text", "")
    if text.strip():
        _load(prefix, text, "the pasted link")

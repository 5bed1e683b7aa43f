"""The dataset picker: bundled, real (from the data directory), synthetic, or an upload."""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import streamlit as st

from solvers import datasets
from solvers.core import InputError, format_bytes
from solvers.datasets import Dataset

from .params import choice, param_form
from .runs import config_key

SOURCES = {"bundled": "Bundled", "real": "Real (data directory)", "synthetic": "Synthetic", "upload": "Upload"}
MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]!<>$~|#])")  # links, images, HTML, LaTeX, emphasis, code
UPLOAD_TYPES = ["csv", "libsvm", "svm", "svmlight", "txt", "npz", "mat"]


@st.cache_resource(max_entries=24, show_spinner="Loading dataset…")
def _load(name: str) -> Dataset:
    return datasets.load(name)


@st.cache_resource(max_entries=24, show_spinner="Generating data…")
def _generate(name: str, frozen: tuple) -> Dataset:
    return datasets.generate(name, **dict(frozen))


def plain(text: str) -> str:
    """Text for st.error with the markdown, HTML and LaTeX punctuation escaped (an upload's name is hostile)."""
    return MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def read_upload(filename: str, raw: bytes, check: Callable[[Dataset], None] | None = None) -> Dataset | None:
    """Parse and check an uploaded file; problems are shown with st.error and give None."""
    try:
        ds = datasets.parse_upload(filename, raw)
        if check is not None:
            check(ds)
    except InputError as exc:
        st.error(plain(f"Upload refused: {exc}"))
        return None
    except Exception as exc:  # untrusted bytes: a parser failure nobody foresaw still gets a message, not a traceback
        st.error(plain(f"Upload refused: {filename} could not be read ({type(exc).__name__}); "
                       f"upload a valid {', '.join(UPLOAD_TYPES)} file"))
        return None
    ds.meta["key"] = "upload:" + config_key(filename, len(raw), raw[:4096].hex(), raw[-4096:].hex())
    return ds


@st.cache_data(ttl=30, show_spinner=False)
def real_sets(family: str, directory: str) -> list[str]:
    """The family's real datasets whose files are in the data ``directory``: looked up at most every 30 s, not on
    every rerun (a file check per set costs more than the rest of the picker on a busy server)."""
    return [n for n, kind in datasets.available(family).items() if kind == "real"]


def dataset_picker(
    family: str,
    *,
    key: str,
    bundled: Sequence[str] = (),
    sources: Sequence[str] = ("bundled", "real", "synthetic", "upload"),
    check: Callable[[Dataset], None] | None = None,
    container: Any = None,
) -> Dataset | None:
    """Sidebar widgets that yield the chosen Dataset (or None with a message shown).

    ``bundled`` lists the scikit-learn sets that suit the family; real sets are the family's
    files present in the data directory; synthetic sets are the generators the family registered.
    ``check(ds)`` may raise InputError to refuse a dataset (e.g. "needs 2 features").
    ``ds.meta["key"]`` identifies the data for run caching.
    """
    box = container if container is not None else st.sidebar
    real = real_sets(family, str(datasets.data_dir()))
    gens = datasets.generators(family if family != "foundations" else "foundations")
    offered = [s for s in sources if (s != "bundled" or bundled) and (s != "real" or real) and (s != "synthetic" or gens)]
    if not offered:
        box.error("No dataset source is available for this page.")
        return None
    source = choice("Data source", offered, format_func=SOURCES.get, key=f"{key}.source", widget="radio",
                    horizontal=True, container=box)
    ds: Dataset | None = None
    try:
        if source == "bundled":
            name = choice("Dataset", list(bundled), key=f"{key}.bundled", container=box)
            ds = _load(name)
            ds.meta.setdefault("key", f"bundled:{name}")
        elif source == "real":
            name = choice("Dataset", real, key=f"{key}.real", container=box,
                          help=f"Files found under {datasets.data_dir()}")
            ds = _load(name)
            ds.meta.setdefault("key", f"real:{name}")
        elif source == "synthetic":
            gname = choice("Generator", list(gens), key=f"{key}.generator", container=box,
                           help="\n\n".join(f"**{n}**: {g.description}" for n, g in gens.items()))
            with box.expander("Generator settings", expanded=False):
                values = param_form(gens[gname].params, key=f"{key}.gen.{gname}")
            frozen = tuple(sorted(values.items()))
            ds = _generate(gname, frozen)
            ds.meta.setdefault("key", f"synthetic:{gname}:{config_key(frozen)}")
        else:
            up = box.file_uploader("Upload a file", type=UPLOAD_TYPES, key=f"{key}.upload",
                                   help="CSV (label column named y/label/target, or the last column), LIBSVM text, "
                                        ".npz or .mat with arrays X and y. Up to "
                                        f"{format_bytes(datasets.MAX_UPLOAD_BYTES)} on disk and "
                                        f"{format_bytes(datasets.upload_budget())} in memory; nothing is executed or "
                                        "unpickled, and links to other files are refused.")
            if up is None:
                box.info("Choose a file to upload.")
                return None
            return read_upload(up.name, up.getvalue(), check)
        if check is not None:
            check(ds)
    except InputError as exc:
        box.error(str(exc))
        return None
    return ds

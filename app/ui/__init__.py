"""Shared Streamlit widgets. Every family page is built from these (see app/views/foundations.py).

A page looks like::

    import streamlit as st
    from app import ui
    from solvers import sparse as fam

    def main():
        ui.page_header("Sparse ℓ0", fam.PAPER, "what you can see here")
        ds = ui.dataset_picker("sparse", key="sp.data", bundled=("diabetes",))      # sidebar
        if ds is None: return
        problem_params = ui.param_form(fam.PROBLEM_PARAMS, key="sp.problem", container=st.sidebar)
        chosen = ui.method_picker(fam.METHODS, key="sp.methods", default=["pg", "apg"])
        per_method = ui.method_params(fam.METHODS, chosen, key="sp.m")
        stop = ui.param_form(STOPPING, key="sp.stop", container=st.sidebar)    # tol, max_iter...
        execute = ui.run_controls("sp", live_default=ds.n_samples * ds.n_features < 1e6)
        problem = fam.make_problem(ds, **problem_params)                         # raises InputError
        jobs = [ui.Job(fam.METHODS[m].label, ui.config_key(ds.meta["key"], problem_params, m, per_method[m], stop),
                       lambda cb, m=m: fam.solve(problem, m, callback=cb, **stop, **per_method[m]), color=m)
                for m in chosen]
        results = ui.run_live(jobs, ui.LiveSpec(y="residual", y_title="residual (24)", tol=stop["tol"],
                                               max_iter=stop["max_iter"]), key="sp", execute=execute)
        tabs = ui.view_tabs(["Convergence", "Solution", "Algorithm", "Export"], key="sp.view")
        with tabs[0]:
            fig = ui.line_chart({k: r.history for k, r in results.items()}, "time", "residual", log_y=True,
                                title="...", x_title="solver time [s]", y_title="residual (24)",
                                color_keys={fam.METHODS[m].label: m for m in chosen})
            st.plotly_chart(fig)
        ...
        with tabs[-1]:
            ui.export_panel({k: r.history for k, r in results.items()}, {"convergence": fig}, key="sparse")

    ui.run_page(main)     # InputError → st.error; nothing shows a traceback

API
- ``page_header(title, paper, summary)``; ``run_page(main)``.
- ``dataset_picker(family, *, key, bundled=(), sources=(...), check=None) -> Dataset | None``: sidebar;
  real sets = the family's files present in the data dir; synthetic = the family's registered generators;
  upload = CSV/LIBSVM/.npz/.mat, validated, errors shown with st.error. ``ds.meta["key"]`` identifies the data.
  ``read_upload(filename, raw, check)`` is the same upload path for pages with their own uploader.
- ``param_form(specs, *, key, container=None) -> dict``: widgets from Param specs (log, or a tiny default on a
  wide linear range → select_slider on a 1–2–5 grid; bounded int → slider; choices → selectbox; bool → toggle),
  every value kept in the URL by page_state (the widget key is the URL parameter), returned validated.
- ``method_picker(METHODS, *, key, default) -> list[str]``; ``method_params(METHODS, chosen, *, key)``.
- ``run_controls(key, *, live_default, cost=None) -> bool``: Run button + live toggle; True when the page should
  compute. ``cost`` (``metric_cost(...)``, ``multitask_cost(...)``, ... from app/ui/cost.py, estimated from shapes
  and parameters) refuses a run beyond memory or time with what to change, and makes one over a few seconds wait
  for Run with its estimate shown. ``awaiting_run(keys, *, key, execute)``: call before building the problem and
  return when true, so a field change in manual mode costs nothing until Run. ``refused(cost)`` shows an extra's
  estimate (or its refusal); ``StoppableProgress(key, text)`` a progress bar with Stop for a loop of runs
  (``.progress``, ``.empty``, or use it in a ``with`` block). ``path_time_limit(wanted, parts)``: a solver's time
  limit for one of ``parts`` calls behind one button, within the page's run limit.
- ``Job(label, key, run, color)``, ``LiveSpec(y, y_title, x, x_title, log_y, title, tol, max_iter)``,
  ``run_live(jobs, spec, *, key, execute) -> {label: Result}``: cached runs come back instantly; others run
  with a live Plotly chart (redrawn ≈3×/s from the solver callback), a progress bar and a Stop button.
  ``config_key(*parts)`` hashes a configuration; ``summary_table(results, measure)``.
- ``line_chart(histories, x, y, *, title, x_title, y_title, log_x, log_y, color_keys)``, ``base_figure``,
  ``add_reference(fig, x, y, name)``, ``positive(values)``; ``method_style(name)`` (Okabe–Ito colour, dash,
  marker per method), ``method_line(name)`` / ``method_marker(name)`` for hand-made traces (``line=``,
  ``marker=``), ``method_color(name)``. ``presenting()``: the sidebar's presentation mode is on (bigger fonts,
  ghost of the previous run in ``line_chart``). ``readable(fig)``: any figure raised to the lab's font sizes
  (≥ 16 px ticks in presentation mode) with near-black (AA) text; ``run_page`` applies it to every
  ``st.plotly_chart`` of a page, so hand-made figures need not call it. ``figure_layout(title, x_title, y_title,
  log_x=, log_y=)``: a new chart's layout as one dict, for ``go.Figure(layout=...)`` (validated once: fast);
  ``subplot_layout(title, {"xaxis2": (title, log), ...}, height=)`` the same for ``make_subplots`` figures, for
  one ``update_layout`` call.
- Page state (app/ui/page_state.py): every widget made here is kept in session state and in the URL with
  readable values; ``view_tabs(labels, key=f"{KEY}.view")`` replaces ``st.tabs`` (the open tab survives reruns
  and is in the URL), and ``tabs_to_draw(tabs, always=, export=)`` says which of them a run draws (the open one
  in a browser); ``choice(label, options, key=..., widget="selectbox"|"radio"|"select_slider")`` and
  ``choices(...)`` (multiselect) and ``slider(label, min, max, value, step, key=...)``, ``number(label, min, max, value, key=...)`` (a whole number,
  e.g. a seed) and ``checkbox(label, value, key=...)`` for a page's own controls (result pickers included: what
  defines a figure belongs in its link); "Share or load this view" (copy link, load an
  exported JSON) is added to the sidebar by ``run_page``, and so is the "Lecture" panel (follow mode,
  app/ui/follow.py) when the server has ``OPTLAB_LECTURER_KEY``: the lecturer's page leads, students' pages follow.
- ``export_panel(histories, figures, *, key, config)``: CSV / JSON / HTML downloads.
- ``Preset(slug, title, values, claim)``, ``preset_buttons(presets, *, key) -> Preset | None``: one-click
  scenarios that set widget values (call before those widgets); ``?preset=<slug>`` applies one from a link.

Keys: prefix every widget key with the page's short name ("sp.", "mt.", ...). Keys become URL parameters.
"""
from .charts import add_reference, base_figure, line_chart, positive, presenting
from .theme import axis_room, figure_layout, readable, subplot_layout
from .colors import method_color, method_line, method_marker, method_style
from .data import dataset_picker, read_upload
from .export import export_panel, histories_long
from .layout import page_header, run_page
from .params import (
    checkbox, choice, choices, format_number, method_params, method_picker, number, param_form, param_widget, slider,
)
from .page_state import link_state, share_panel, tabs_to_draw, view_tabs
from .presets import Preset, apply_preset, preset_buttons
from .cost import (Cost, foundations_cost, metric_cost, path_time_limit, multitask_cost, npsvc_cost, smm_cost,
                   smm_path_cost, sparse_cost, tsne_cost)
from .runs import (
    Job, LiveSpec, awaiting_run, config_key, StoppableProgress, prepare_workers, refused, run_controls, run_live,
    summary_table,
)

__all__ = [
    "add_reference", "base_figure", "line_chart", "positive", "method_color", "method_line", "method_marker", "method_style", "presenting", "dataset_picker", "read_upload",
    "export_panel", "histories_long", "page_header", "run_page", "method_params", "method_picker", "param_form",
    "param_widget", "Job", "LiveSpec", "awaiting_run", "config_key", "prepare_workers", "run_controls", "run_live", "summary_table",
    "refused", "StoppableProgress", "Cost", "path_time_limit", "metric_cost", "multitask_cost", "npsvc_cost",
    "smm_cost", "smm_path_cost", "sparse_cost", "foundations_cost", "checkbox", "choice", "choices", "number", "format_number", "slider", "view_tabs", "tabs_to_draw", "share_panel", "link_state",
    "Preset", "apply_preset", "preset_buttons", "axis_room", "figure_layout", "readable", "subplot_layout",
]

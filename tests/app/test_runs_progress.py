"""The live progress bar's share of work (app/ui/runs._progress)."""
from app.ui.runs import LiveSpec, _progress


def spec(**kw) -> LiveSpec:
    return LiveSpec(y="gap", y_title="gap", **kw)


def test_iterations_over_the_cap_and_decades_towards_tol():
    assert _progress({"iter": 25, "gap": 1.0}, 1.0, spec(max_iter=100)) == 0.25
    # two of four decades from 1 to tol = 1e-4: half way, more than the iterations say
    assert abs(_progress({"iter": 1, "gap": 1e-2}, 1.0, spec(max_iter=100, tol=1e-4)) - 0.5) < 1e-12


def test_a_solvers_own_progress_column_wins_and_is_clipped():
    """TWSVM records ``progress`` (duals done out of K): its ``iter`` runs to K·max_iter, so iter/max_iter
    would fill the bar after the first dual or two."""
    row = {"iter": 300, "gap": 1.0, "progress": 0.2}
    assert _progress(row, 1.0, spec(max_iter=100)) == 0.2
    assert _progress({**row, "progress": 1.7}, 1.0, spec(max_iter=100)) == 1.0
    assert _progress({**row, "progress": float("nan")}, 1.0, spec(max_iter=100)) == 1.0  # NaN: back to iter/max_iter


def status(label, state, rows=(), place=None):
    from app.workers import Status

    return Status(key=label, label=label, seq=0, state=state, rows=list(rows), result=None, error=None, place=place)


def test_runs_in_workers_share_the_bar_and_say_which_iteration_runs():
    """One of two runs finished, the other half way to its cap: three quarters done, the running one named."""
    from app.ui.runs import _pool_progress

    statuses = [status("PG", "done"), status("APG", "running", [{"iter": 1, "gap": 1.0}, {"iter": 50, "gap": 0.5}])]
    done, text = _pool_progress(statuses, spec(max_iter=100), workers=2)
    assert abs(done - 0.75) < 1e-12 and text == "APG: iteration 50"


def test_a_session_waiting_for_a_worker_sees_its_place_in_the_queue():
    from app.ui.runs import _pool_progress

    statuses = [status("PG", "queued", place=4), status("APG", "queued", place=7)]
    done, text = _pool_progress(statuses, spec(max_iter=100), workers=2)
    assert done == 0.0
    assert "number 4 in the queue" in text and "All 2 solver processes are busy" in text and "Stop" in text


def test_sessions_following_the_same_runs_share_each_live_frame():
    """A class watching one run in a worker: the frame for a given number of rows is built once, not per student."""
    import plotly.graph_objects as go

    from app.ui.runs import _shared_live_figure

    builds = []

    def build():
        builds.append(1)
        return go.Figure(go.Scatter(x=[0, 1], y=[1.0, 0.5]))

    first = _shared_live_figure(("run 7", 120), build)
    again = _shared_live_figure(("run 7", 120), build)
    assert again is first and len(builds) == 1
    _shared_live_figure(("run 7", 180), build)  # new rows: a new frame
    assert len(builds) == 2


def test_the_live_chart_waits_for_its_first_frame_then_redraws_at_its_pace(monkeypatch):
    """A run's first live frame comes FIRST_FRAME_SECONDS after its start, not REFRESH_SECONDS: a run that ends
    sooner is drawn once, by the page, not flashed live."""
    from app.ui import runs

    clock = [100.0]
    monkeypatch.setattr(runs.time, "perf_counter", lambda: clock[0])
    view = runs._LiveView(None, None, {}, spec(), {}, "k")
    clock[0] += runs.REFRESH_SECONDS + 0.01
    assert runs.REFRESH_SECONDS < runs.FIRST_FRAME_SECONDS and not view.due()
    clock[0] = 100.0 + runs.FIRST_FRAME_SECONDS
    assert view.due()
    view._last_draw = (clock[0], 0.0)  # a frame drawn now, at no cost: the next one after REFRESH_SECONDS
    clock[0] += runs.REFRESH_SECONDS / 2
    assert not view.due()
    clock[0] += runs.REFRESH_SECONDS
    assert view.due()

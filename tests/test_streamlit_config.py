"""Streamlit's own upload limit stops a file that the lab's readers would refuse anyway, before it is in memory."""
import tomllib
from pathlib import Path

from solvers.datasets import MAX_UPLOAD_BYTES


def test_streamlit_upload_limit_matches_the_readers():
    config = tomllib.loads((Path(__file__).parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_UPLOAD_BYTES


def test_the_lecture_server_has_a_students_toolbar_and_no_reloading():
    """`make serve` (app/serve.py): headless, no file watcher, no run-on-save, the viewer toolbar (no Deploy button)."""
    from app.serve import command

    cmd = command("0.0.0.0", 8501)
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags["--server.address"] == "0.0.0.0" and flags["--server.port"] == "8501"
    assert flags["--server.headless"] == "true" and flags["--server.fileWatcherType"] == "none"
    assert flags["--server.runOnSave"] == "false" and flags["--client.toolbarMode"] == "viewer"
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()
    assert "-m app.serve --host $(HOST) --port $(PORT)" in makefile


def test_the_lecture_server_runs_one_blas_thread_and_two_malloc_arenas_unless_the_lecturer_says(monkeypatch):
    from app.serve import environment

    for name in ("OMP_NUM_THREADS", "MALLOC_ARENA_MAX"):
        monkeypatch.delenv(name, raising=False)
    env = environment()
    assert env["OMP_NUM_THREADS"] == "1" and env["MALLOC_ARENA_MAX"] == "2"
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert environment()["MALLOC_ARENA_MAX"] == "8"

"""Streamlit's own upload limit stops a file that the lab's readers would refuse anyway, before it is in memory."""
import tomllib
from pathlib import Path

from solvers.datasets import MAX_UPLOAD_BYTES


def test_streamlit_upload_limit_matches_the_readers():
    config = tomllib.loads((Path(__file__).parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 2**20 == MAX_UPLOAD_BYTES

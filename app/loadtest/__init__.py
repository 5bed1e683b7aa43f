"""A load harness for the lab as a lecture server: simulated students speaking Streamlit's websocket protocol.

    python -m app.loadtest --students 40 --page foundations --scenario lecture --json report.json

Modules: ``protocol`` (one student's client), ``lessons`` (each page's lesson, drag and heaviest links),
``classroom`` (a class of students and its scenarios), ``server`` (the server under test and its RSS/CPU),
``report`` (percentiles, JSON, Markdown), ``browsers`` (real Chromium pages beside them). See docs/serving.md.
"""
import logging

from streamlit.logger import get_logger

# the harness imports the pages' link helpers outside a Streamlit server; their st.cache_data decorators then
# warn, once per import, that no runtime is running: true and expected here
get_logger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

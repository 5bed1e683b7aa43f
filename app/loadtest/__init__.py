"""A load harness for the lab as a lecture server: simulated students speaking Streamlit's websocket protocol.

    python -m app.loadtest --students 40 --page foundations --scenario lecture --json report.json

Modules: ``protocol`` (one student's client), ``lessons`` (each page's lesson, drag and heaviest links),
``classroom`` (a class of students and its scenarios), ``server`` (the server under test and its RSS/CPU),
``report`` (percentiles, JSON, Markdown), ``browsers`` (real Chromium pages beside them). See docs/serving.md.
"""

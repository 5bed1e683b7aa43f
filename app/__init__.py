"""The Streamlit dashboard: thin pages (app/views) over shared widgets (app/ui) and the solvers."""

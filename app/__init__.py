"""The Streamlit dashboard: thin pages (app/pages) over shared widgets (app/ui) and the solvers."""

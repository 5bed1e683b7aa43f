"""Entry point: `streamlit run app/main.py`. Home, Foundations, and one page per family present."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from solvers import FAMILIES

PAGES = Path(__file__).parent / "views"  # not "pages/": that name switches on Streamlit's legacy page listing
ICONS = {"sparse": ":material/scatter_plot:", "multitask": ":material/hub:", "smm": ":material/grid_on:",
         "metric": ":material/straighten:", "npsvc": ":material/balance:"}
TITLES = {"sparse": "Sparse ℓ0 (APG)", "multitask": "Multi-task (cASO)", "smm": "Support matrix machine",
          "metric": "Metric learning (screening)", "npsvc": "NPSVC++"}

st.set_page_config(page_title="Optimization lab", page_icon=":material/trending_down:", layout="wide")
pages = {
    "Lab": [st.Page(PAGES / "home.py", title="Home", icon=":material/home:", default=True),
            st.Page(PAGES / "foundations.py", title="Foundations", icon=":material/school:")],
    "Methods": [st.Page(PAGES / f"{fam}.py", title=TITLES[fam], icon=ICONS[fam])
                for fam in FAMILIES if (PAGES / f"{fam}.py").is_file()],
}
st.navigation({k: v for k, v in pages.items() if v}).run()

# Two commands do everything on a fresh machine:
#   make run    create .venv, install the lab, start the dashboard on bundled data
#   make test   same install plus the test extras, then the whole test suite
#   make serve  a lecturer's server for a class on HOST:PORT (docs/serving.md)
# Both are idempotent: the install step re-runs only when pyproject.toml or constraints.txt change.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
PORT   ?= 8501
HOST   ?= 0.0.0.0

.PHONY: run serve test install install-test bench-help clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(PY) pyproject.toml constraints.txt
	$(PIP) install --quiet -c constraints.txt -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PIP) install --quiet -c constraints.txt -e ".[test]"
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

run: install
	$(PY) -m streamlit run app/main.py --server.port $(PORT) --browser.gatherUsageStats false

# a lecturer's server (docs/serving.md): on the network, headless, no file watcher, students' toolbar
serve: install
	$(PY) -m app.serve --host $(HOST) --port $(PORT)

test: install-test
	$(PY) -m pytest

bench-help: install
	$(PY) -m solvers.bench --help

clean:
	rm -rf $(VENV) artifacts .pytest_cache .hypothesis

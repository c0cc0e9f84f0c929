# assay: `make demo` runs a real evaluation end to end; `make test` runs the whole suite.
# Each target creates .venv with python3 -m venv if it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamp files: reinstall only when pyproject.toml changes.
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,demo]'
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/python demo/run.py

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

bench: $(VENV)/.installed-dev
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) demo-output .pytest_cache .hypothesis

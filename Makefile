# One-file task runner: every target creates .venv and installs what it needs first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN)/python)
# Arrow's allocator returns idle pages late instead of re-faulting them on every batch.
export MIMALLOC_PURGE_DELAY ?= -1

.PHONY: help install demo test test-slow test-servers test-conformance bench lint layers docs wheel-check clean

help:  ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	@echo "setting up $(VENV): fieldshift with Spark, test and docs tools (about a minute on a fresh machine)"
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[dev]"
	$(BIN)/fieldshift warmup --quiet
	touch $(STAMP)

install: $(STAMP)  ## create .venv and install fieldshift with all extras

demo: $(STAMP)  ## the main job: replay the seed scenarios end to end
	$(BIN)/fieldshift demo

test: $(STAMP)  ## the default test suite (< 10 min on 2 cores)
	$(BIN)/python -m pytest -q -p no:cacheprovider

test-slow: $(STAMP)  ## only the slow tests (many crash iterations, big property runs)
	$(BIN)/python -m pytest -q -p no:cacheprovider -m slow

test-servers: $(STAMP)  ## tests against servers they start: PostgreSQL, S3 (moto), a Spark cluster, Spark Connect
	$(BIN)/python -m pytest -q -p no:cacheprovider -m servers tests/servers

# pypaimon pins an older pyarrow than fieldshift's: it writes and reads the Paimon conformance tables in
# its own virtualenv, driven through a subprocess (tests/conformance/paimon_peer.py).
PAIMON_VENV := .venv-paimon
PAIMON_STAMP := $(PAIMON_VENV)/.installed-stamp
$(PAIMON_STAMP):
	$(PY) -m venv $(PAIMON_VENV)
	$(PAIMON_VENV)/bin/python -m pip install -q "pypaimon==2.1.0"
	touch $(PAIMON_STAMP)

test-conformance: $(STAMP) $(PAIMON_STAMP)  ## tables written by pinned peers (DuckDB 1.5.5 + extensions, PyIceberg 0.12, deltalake, pypaimon 2.1.0), upstream sample tables, read back
	$(BIN)/python -m pip install -q -e ".[conformance]"
	$(BIN)/python -m pytest -q -p no:cacheprovider -m conformance tests/conformance

bench: $(STAMP)  ## benchmarks; writes benchmarks/README.md and the chart
	$(BIN)/python -m pytest benchmarks -p no:cacheprovider --benchmark-enable -m "" \
		--benchmark-json=benchmarks/results.json
	$(BIN)/python benchmarks/report.py benchmarks/results.json

lint: $(STAMP)  ## ruff and the layer check
	$(BIN)/ruff check .
	$(BIN)/python tools/layer_check.py

layers: $(STAMP)  ## the layer check alone: upward imports, import cycles, private imports (tools/layer_check.py)
	$(BIN)/python tools/layer_check.py -v

docs: $(STAMP)  ## API, CLI, concepts and architecture pages into docs/_build (any warning fails)
	$(BIN)/python docs/build.py docs/_build

clean:  ## remove the virtualenv and build output
	rm -rf $(VENV) $(PAIMON_VENV) build dist *.egg-info docs/_build

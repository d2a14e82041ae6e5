# Two commands on a fresh machine with only Python: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run tour test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The daemon in the foreground (Ctrl-C stops it): the HTTP API at /api and MCP at /mcp on
# http://127.0.0.1:8765 and on $COMPOZY_HOME/compozy.sock. SERVE_ARGS adds flags, such as
# SERVE_ARGS="--port 0 --no-uds".
SERVE_ARGS ?=

run: $(STAMP)
	$(BIN)/compozy serve $(SERVE_ARGS)

tour: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" ./scripts/tour.sh

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

test: lint typecheck unit

# Catalog bytes, result bytes and call overhead (FastMCP is installed into .bench/ on first use).
bench: $(STAMP)
	$(BIN)/python -m benchmarks.catalog_bytes --verify-stdio
	$(BIN)/python -m benchmarks.result_bytes
	$(BIN)/python -m benchmarks.call_overhead

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .bench

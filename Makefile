# Two commands on a fresh machine with only Python: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install run tour test lint typecheck unit tests node-deps browser-deps soak bench clean

# Python writes its bytecode caches here even where the environment says not to: without them
# every test process, and every daemon, proxy and agent a test starts, compiles its modules
# (and pytest rewrites every test module) again on each run.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	@echo "install: creating $(VENV) and installing compozy-mcp with its dev tools from PyPI"
	@echo "install: about 55 packages, 200 MB; a minute or so the first time (once only)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -e '.[dev]'
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

# ruff, the formatter, and the layer contracts (an upward import fails here).
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The unit tier: in-process tests only, no subprocess; what to run while working. Work
# stealing: a worker that runs out of tests takes half of what the other has left. On two
# cores, ten runs of each, interleaved: 21.3-22.6 s (mean 22.0) against 21.6-23.8 s (mean 22.7)
# with `--dist load` and the slowest modules' tests first (tests/runstats.py). On 2026-12-05,
# after the store's bounded-wait tests moved to shorter bounds: 18.8-19.4 s on two workers
# (five runs; 23.1-23.8 s before), 35.8 s on one (`-n 1`).
unit: $(STAMP)
	$(BIN)/pytest -m unit -q -n auto --dist worksteal

# The JavaScript MCP clients of the node tier, from their lockfiles (skipped without node).
node-deps:
	./scripts/node-deps.sh

# Debian's Chromium for the browser tier: installed with apt-get when run as root and missing
# (elsewhere the tier is skipped with the reason).
browser-deps:
	./scripts/browser-deps.sh

# Every tier: unit, postgres (a PostgreSQL 16 server from the pgserver wheel, tests/pg.py),
# process (daemons, proxies, the console script), node, browser, bench. One and a half workers
# per core: a process-tier test spends much of its time waiting (a daemon or an agent starting,
# answering, stopping) while another worker computes, but each worker starts its own shared
# daemons, proxies and PostgreSQL server, and the tests are CPU-bound. On two cores, on one
# tree: 3 workers 268-292 s (four runs), 4 workers 287-294 s (two, run beside them), 2 workers
# 349 s; on 2026-12-05, a quiet machine: 3 workers 227-249 s (seven runs), 4 workers 264 s, the
# cores busy 95 % and 99.6 % of the run. tests/proxy's modules go to one worker together
# (tests/runstats.py: they share a session-scoped pool of proxies and daemons, which each worker
# running one of them started for itself). TEST_WORKERS=N sets it.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); echo $$(( n + n / 2 )))

tests: $(STAMP) node-deps browser-deps
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope

# lint and typecheck beside the tests, at the lowest CPU priority (they fill the cycles the tests
# leave while waiting on their daemons); a line per step with its wall seconds at the end, after
# pytest's table of the tiers' times; fails when any step fails.
test: $(STAMP) node-deps browser-deps
	./scripts/test-all.sh "$(MAKE)" $(BIN) $(TEST_WORKERS)

# The soak (about 10 minutes): 20,000 hostile calls against a daemon (HTTP API, /mcp, a stdio
# proxy), the inputs of issue 22, kill -9 during write bursts, and schemathesis against its
# OpenAPI document; figures in .soak/figures.json, written into docs/reliability.md.
soak: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,soak]'
	rm -f .soak/figures.json
	$(BIN)/pytest -m soak -s
	$(BIN)/python -m tests.fuzz.soak_report

# Catalog bytes, result bytes, call overhead, hook overhead, prompt round trip, Loop lint,
# start-up of the CLI, the daemon's memory, streaming over HTTP (FastMCP is installed into .bench/ on first use), and with the real
# agents (node-deps): time to first token and what the model reads.
bench: $(STAMP) node-deps
	$(BIN)/python -m benchmarks.catalog_bytes --verify-stdio
	$(BIN)/python -m benchmarks.result_bytes
	$(BIN)/python -m benchmarks.call_overhead
	$(BIN)/python -m benchmarks.hook_overhead
	$(BIN)/python -m benchmarks.prompt_roundtrip
	$(BIN)/python -m benchmarks.loop_lint
	$(BIN)/python -m benchmarks.worktrees
	$(BIN)/python -m benchmarks.startup
	$(BIN)/python -m benchmarks.memory
	$(BIN)/python -m benchmarks.board_render
	$(BIN)/python -m benchmarks.http_streaming
	$(BIN)/python -m benchmarks.first_token
	$(BIN)/python -m benchmarks.model_reads

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .bench

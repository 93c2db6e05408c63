# Set-up is automatic: every target builds the virtual environment first, from the lock.
#
# .venv/ holds exactly requirements-dev.lock (pip --require-hashes: a version or a file that
# differs from the lock fails the install instead of drifting), then the engine, client,
# server and command line as editable installs with --no-deps, then `pip check`.
# The engine's editable install is compiled: engine/setup.py builds its hot modules with
# mypyc into C extensions beside their sources (engine/spider_engine/*.so; about 15
# CPU-seconds), and every target below builds them again first when an engine source has
# changed since (run `make` after editing the engine, before calling .venv/bin/pytest).
# SPIDER_ENGINE_PURE=1 (`SPIDER_ENGINE_PURE=1 make test`) builds the pure-Python engine
# instead, and the next target without it compiles it again.
# `make lock` re-resolves every dependency to the newest versions that the pyproject and
# setup.py files allow and rewrites requirements.lock (what the server and command line need:
# the Docker image) and requirements-dev.lock (that plus the tests' and linters' tools).
# The lock is resolved on CPython 3.11 for Linux, the project's machines; each entry's hashes
# cover every file of that version on the index (other platforms' wheels too). After a
# `make lock`, raise the floors in the setup.py files to the new locked versions
# (tests/packaging/test_lock.py checks that they match).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
ENGINE_BUILD := $(if $(filter-out 0,$(SPIDER_ENGINE_PURE)),pure,compiled)
STAMP := $(VENV)/.engine-$(ENGINE_BUILD)
ENGINE_SOURCES := $(wildcard engine/spider_engine/*.py) engine/setup.py
ENGINE_BUILT := engine/spider_engine/*.so engine/*.so
LOCKS := requirements.lock requirements-dev.lock
# the workspace but the engine, which $(STAMP) builds
WORKSPACE := -e ./client -e ./server -e .
METADATA := VERSION pyproject.toml setup.py engine/pyproject.toml client/pyproject.toml \
	client/setup.py server/pyproject.toml server/setup.py

.PHONY: run demo test acceptance lint bench lock clean web

run: $(STAMP)  ## the server with its embedded Valkey
	$(BIN)/spider-race serve

demo: $(STAMP)  ## a bot race shown live
	$(BIN)/spider-race demo

# pytest runs two workers per core this process may use (pytest-xdist; a worker with nothing
# left takes tests queued for another: many tests wait on servers, browsers and processes
# more than they compute, so one worker a core leaves the cores idle a third of the time)
# in a random order (pytest-randomly: the seed is printed at the end;
# `PYTEST_ARGS=--randomly-seed=N` replays an order, `-p no:randomly` keeps the files'),
# and prints the twenty slowest steps. WORKERS sets the count (`WORKERS=0`: one process);
# PYTEST_ARGS adds options.
WORKERS ?= $(shell $(PYTHON) -c 'import os; f = getattr(os, "sched_getaffinity", None); \
	print(2 * (len(f(0)) if f else os.cpu_count() or 1))')
PYTEST := $(BIN)/pytest -q -n $(WORKERS) --dist worksteal --durations=20 $(PYTEST_ARGS)

test: $(STAMP)  ## the whole test suite, lint and type checks included
	$(BIN)/ruff check engine client server src tests
	$(BIN)/mypy
	$(PYTEST)

acceptance: $(STAMP)  ## the long demonstrations (the "slow" marker: par of 20 fresh deals per variant, ...)
	$(PYTEST) -m slow

lint: $(STAMP)
	$(BIN)/ruff check engine client server src tests
	$(BIN)/mypy

web:  ## rebuild the browser page's vendored msgpack codec from web/package-lock.json
	cd web && npm ci --no-audit --no-fund && node build.mjs

bench: $(STAMP)
	$(BIN)/spider-race bench engine

$(INSTALLED): $(LOCKS) $(METADATA)
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	$(BIN)/pip install -q --no-deps $(WORKSPACE)
	touch $(INSTALLED)

# the engine, built from its sources as they are now: compiled, or pure with
# SPIDER_ENGINE_PURE=1 (the stamp names which, so that changing the choice builds it again)
$(STAMP): $(INSTALLED) $(ENGINE_SOURCES)
	rm -f $(ENGINE_BUILT) $(VENV)/.engine-*
	$(BIN)/pip install -q --no-deps -e ./engine
	@# said when the build fell back to pure Python (no C compiler): pip -q shows no output
ifeq ($(ENGINE_BUILD),compiled)
	@$(BIN)/python -c "import spider_engine.search as s, sys; s.__file__.endswith('.py') and \
	print('make: the engine was built as pure Python (no C compiler found?): set CC, or' \
	' SPIDER_ENGINE_PURE=1 to ask for the pure engine', file=sys.stderr)"
endif
	$(BIN)/pip check
	touch $(STAMP)

# pip-tools in a throwaway environment of its own; its output is the two lock files.
LOCK_VENV := build/lock-venv
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile --quiet --upgrade \
	--generate-hashes --strip-extras --no-emit-index-url --no-emit-find-links \
	--unsafe-package spider-race --unsafe-package spider-race-engine \
	--unsafe-package spider-race-client --unsafe-package spider-race-server

lock:  ## re-resolve every dependency to the newest allowed versions, with hashes
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install -q pip-tools
	$(PIP_COMPILE) --output-file requirements.lock lock/runtime.in
	$(PIP_COMPILE) --output-file requirements-dev.lock lock/dev.in
	rm -rf $(LOCK_VENV)

clean:
	rm -rf $(VENV) engine/build engine/.mypy_cache
	rm -f $(ENGINE_BUILT)

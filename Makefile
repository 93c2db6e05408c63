# Set-up is automatic: every target builds the virtual environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run demo test acceptance lint bench clean web

run: $(STAMP)  ## the server with its embedded Redis
	$(BIN)/spider-race serve

demo: $(STAMP)  ## a bot race shown live
	$(BIN)/spider-race demo

test: $(STAMP)  ## the whole test suite, lint and type checks included
	$(BIN)/ruff check engine client server src tests
	$(BIN)/mypy
	$(BIN)/pytest -q

acceptance: $(STAMP)  ## the long demonstrations (par of 20 fresh deals per variant)
	$(BIN)/pytest -q -m slow

lint: $(STAMP)
	$(BIN)/ruff check engine client server src tests
	$(BIN)/mypy

web:  ## rebuild the browser page's vendored msgpack codec from web/package-lock.json
	cd web && npm ci --no-audit --no-fund && node build.mjs

bench: $(STAMP)
	$(BIN)/spider-race bench engine

$(STAMP): pyproject.toml engine/pyproject.toml client/pyproject.toml server/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ./engine -e ./client -e ./server -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV)

# Two commands for a newcomer: `make run` (install, migrate, demo data, serve) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: run test lint fmt bench setup setup-dev clean

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is needed"'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(VENV)/bin/python requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: $(VENV)/.installed node_modules/.installed

setup-dev: $(VENV)/.installed-dev node_modules/.installed

## make run: install, migrate, load the demo chronicle, serve on the LAN (SQLite, in-memory layer)
run: setup
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo --verbosity 0
	$(PY) manage.py serve --port $(PORT)

## make test: install and run the whole suite (set DATABASE_URL / REDIS_URL for PostgreSQL / Redis)
test: setup-dev
	@if [ -x /usr/bin/chromium ]; then echo "browser tests: /usr/bin/chromium"; \
	else echo "NOTE: /usr/bin/chromium not found: browser tests will be SKIPPED (apt-get install chromium)"; fi
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) -m pytest $(PYTEST_ARGS)

lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: setup-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

## make bench: the import benchmark, then the live one: fan-out, idle cost, challenge throughput (see bench/fanout.py)
bench: setup-dev
	$(PY) bench/import_grapevine.py
	$(PY) bench/fanout.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) node_modules staticfiles .pytest_cache .ruff_cache

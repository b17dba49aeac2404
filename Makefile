# Two commands for a newcomer: `make run` (install, migrate, demo data, serve) and `make test`.
# `make venue` runs a real game night (no demo data, its own database under var/venue/).
# The interpreter the venv is made from. A distribution's own python3 (Debian's, Ubuntu's) is
# built with profile-guided and link-time optimization; a version manager's (pyenv's by default)
# is not: it served a tap with 5 to 25% more CPU here (bench/tap_cost.py, tap_server.py). So
# /usr/bin/python3 is taken when it is 3.11 or newer with its venv module; else python3.
# PYTHON=... overrides; an existing .venv keeps the interpreter it was made with (make clean).
SYSTEM_PYTHON := $(shell /usr/bin/python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && echo /usr/bin/python3)
PYTHON ?= $(or $(SYSTEM_PYTHON),python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# make test's pytest processes (pytest-xdist); 0 runs the suite in this process, one by one.
TEST_WORKERS ?= 2
# The real night's database and secret key, never the demo's (db.sqlite3, var/secret_key).
VENUE_ENV := SQLITE_PATH=var/venue/db.sqlite3 SECRET_KEY_FILE=var/venue/secret_key

.PHONY: run venue test lint fmt bench setup setup-dev clean prerequisites

# Before installing anything: say plainly what this machine lacks.
prerequisites:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make run needs Python 3.11 or newer as '$(PYTHON)' (apt-get install python3 python3-venv)"; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || { echo "make run needs Python 3.11 or newer; '$(PYTHON)' is $$($(PYTHON) -V 2>&1)"; exit 1; }
	@test -x $(VENV)/bin/python || $(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || { echo "make run needs Python's venv module (apt-get install python3-venv)"; exit 1; }
	@command -v npm >/dev/null 2>&1 || { echo "make run needs Node's npm for the pinned nosleep.js (apt-get install npm, or nodejs.org)"; exit 1; }

$(VENV)/bin/python: | prerequisites
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(VENV)/bin/python requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

node_modules/.installed: package.json package-lock.json | prerequisites
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

setup: prerequisites $(VENV)/.installed node_modules/.installed

setup-dev: prerequisites $(VENV)/.installed-dev node_modules/.installed

## make run: install, migrate, load the demo chronicles, serve on the LAN (SQLite, in-memory layer)
run: setup
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_demo --verbosity 0
	$(PY) manage.py serve --port $(PORT)

## make venue: run a real game night: no demo, its own database, the first storyteller on first run
venue: setup
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(VENUE_ENV) $(PY) manage.py venue --port $(PORT)

## make test: install and run the whole suite (set DATABASE_URL / REDIS_URL for PostgreSQL / Redis)
# Two workers, each with its own test database and channel prefix; the browser and fault tests
# all go to one of them, one after another (tests/conftest.py's ONE_AT_A_TIME).
test: setup-dev
	@if [ -x /usr/bin/chromium ]; then echo "browser tests: /usr/bin/chromium"; \
	else echo "NOTE: /usr/bin/chromium not found: browser tests will be SKIPPED (apt-get install chromium)"; fi
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

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

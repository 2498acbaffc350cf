# Schedscope: `make run` serves the demo on http://127.0.0.1:8000 (embedded: SQLite, in-process scheduler);
# `make test` runs every test, the Django ones against PostgreSQL, Redis and a real Celery worker.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/schedscope
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run test faults install migrate demo demo-reset clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput

# the demo cluster is created on the first run only: later runs serve what it holds (objects made with kubectl
# included); `make demo-reset` replaces it by the bundled scenario
demo: migrate
	$(PY) manage.py ensureadmin
	$(PY) manage.py demo

demo-reset: migrate
	$(PY) manage.py demo --reset

run: demo
	@echo "Schedscope on http://$(HOST):$(PORT)/  (sign in as admin, password above on first run; Ctrl-C stops)"
	$(VENV)/bin/python -m dashboard.serve -b $(HOST) -p $(PORT) dashboard.asgi:application

test: install
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest tests -q

# Fault tests: real Celery workers killed, a private PostgreSQL and Redis stopped and restarted (never the shared ones).
faults: install
	$(PY) tests/faults/harness.py -- $(PY) -m pytest tests/faults -q -s -p no:cacheprovider

clean:
	rm -rf $(VENV) schedscope.sqlite3* schedscope-test.sqlite3* staticfiles

# The two commands of the README, idempotent: the virtual env (exactly the
# versions requirements.lock pins) and the Kafka jars are made once and reused.
# `make help` lists the targets.
VENV ?= .venv
KPERF := $(VENV)/bin/kperf
# The stamp holds the sha256 of the lock it installed (kperf.lockfile.INSTALLED_STAMP).
STAMP := $(VENV)/.installed
PROFILE ?=
ARGS ?=
CHROMIUM ?= /usr/bin/chromium
# uv resolves the lock (make lock) and installs it; pinned, and kept in its own env.
UV_VERSION := 0.13.9
UV_HOME := .cache/uv-$(UV_VERSION)
UV := $(UV_HOME)/bin/uv
export UV_PYTHON_DOWNLOADS := never

.PHONY: help study test test-unit check docs kafka chromium lock clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  make \1\t/' | expand -t 20

study: kafka  ## run the whole study on a local 3-broker cluster (or BOOTSTRAP=host:port,...; ARGS: more options)
	$(KPERF) study $(if $(PROFILE),--profile $(PROFILE)) $(if $(BOOTSTRAP),--bootstrap $(BOOTSTRAP)) $(ARGS)

test: check kafka chromium  ## every test: lint, types, layers, unit, against real local clusters (tests/cluster), every notebook (nbval), the report in Chromium
	KPERF_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pytest

test-unit: check  ## the pure-code tests alone (tests/unit: no Kafka, no network), in under a minute
	$(VENV)/bin/pytest tests/unit

check: $(STAMP)  ## ruff (lint) over the package and the tests, mypy (types) and the layer contracts (lint-imports) over the package, as pyproject.toml configures them
	$(VENV)/bin/ruff check kperf tests conftest.py
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

docs: $(STAMP)  ## build the documentation site (docs/, mkdocs.yml) into site/ in strict mode: a broken link fails
	$(VENV)/bin/mkdocs build --strict

chromium:  ## Debian's Chromium for the report's render test, installed when missing (needs root)
	@test -x $(CHROMIUM) || { test "$$(id -u)" = 0 && { apt-get install -y -q chromium > /dev/null \
	  || { apt-get update -q > /dev/null && apt-get install -y -q chromium > /dev/null; }; }; } \
	|| { echo "make: the report test needs Chromium: run 'apt-get install chromium' as root, or set CHROMIUM=/path/to/it"; exit 1; }

kafka: $(STAMP)  ## fetch the pinned Kafka jars and the JMX exporter agent with Maven (once)
	$(KPERF) kafka fetch

# Installs only from the lock: a lock older than pyproject.toml's dependencies is refused, never re-resolved.
$(STAMP): requirements.lock build.lock pyproject.toml | $(UV)
	@python3 -m kperf.lockfile check
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(UV) pip sync --quiet --python $(VENV)/bin/python --require-hashes requirements.lock
	$(UV) pip install --quiet --python $(VENV)/bin/python --no-deps --build-constraints build.lock --require-build-hashes -e .
	sha256sum requirements.lock | cut -d' ' -f1 > $(STAMP)  # what kperf.lockfile.fingerprint() records

$(UV):
	python3 -m venv $(UV_HOME)
	$(UV_HOME)/bin/python -m pip install --quiet uv==$(UV_VERSION)

lock: | $(UV)  ## resolve pyproject.toml's dependencies anew into requirements.lock and build.lock (UPGRADE=1: newest allowed)
	$(UV) pip compile --quiet pyproject.toml --extra test --universal --python-version 3.11 --generate-hashes \
	  $(if $(UPGRADE),--upgrade) --custom-compile-command 'make lock' -o requirements.lock
	mkdir -p .cache && python3 -m kperf.lockfile build-requirements > .cache/build-requirements.in
	$(UV) pip compile --quiet .cache/build-requirements.in --generate-hashes \
	  $(if $(UPGRADE),--upgrade) --custom-compile-command 'make lock' -o build.lock
	python3 -m kperf.lockfile stamp

clean:  ## stop the local cluster and remove the env and the Kafka cache (results in data/ are kept)
	-$(KPERF) cluster down
	rm -rf $(VENV) .cache

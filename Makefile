# The two commands of the README, idempotent: the virtual env (exactly the
# versions requirements.lock pins) and the Kafka jars are made once and reused.
# `make help` lists the targets.
VENV ?= .venv
KPERF := $(VENV)/bin/kperf
# The stamp holds the sha256 of the lock it installed (kperf.lockfile.INSTALLED_STAMP).
STAMP := $(VENV)/.installed
PROFILE ?=
ARGS ?=
# make test's lanes: tests that mostly wait on brokers, timers and paced loads run this many at once, a file per
# lane (pytest-xdist); those that measure this host's CPU or speed then run alone (conftest.ALONE), in one lane (a
# test that hangs past its limit ends its lane's process, and another lane takes over: conftest.HARD_AFTER_S).
# Three on the project's 2 cores: with two, a fifth of the cores sat idle while tests waited on timers (vmstat), and a
# fresh-clone run's lanes took 1,300 s with three against 1,474-1,520 s with two (docs/development.md, "The suite").
LANES ?= 3
CHROMIUM ?= /usr/bin/chromium
# uv resolves the lock (make lock) and installs it; pinned, and kept in its own env.
UV_VERSION := 0.13.9
UV_HOME := .cache/uv-$(UV_VERSION)
UV := $(UV_HOME)/bin/uv
export UV_PYTHON_DOWNLOADS := never

# librdkafka's own rdkafka_performance, kperf bench's ceiling: the example source of the librdkafka the npm
# package node-rdkafka vendors (3.6.1 carries librdkafka 2.12.0, of all its releases the closest to the wheel's
# 2.16.0), compiled against the librdkafka the confluent-kafka wheel ships (found by its import, linked by rpath).
# The example uses librdkafka's public API and a few inline helpers of its headers; the empty config.h and the
# -D flags stand in for what librdkafka's own configure writes on Linux with gcc (its atomics).
NODE_RDKAFKA := 3.6.1
NODE_RDKAFKA_SHA256 := 148f7e7b65c510314c70762d8f1be052c8fe1fdf03a128e6c78083a729a57a30
# Where kperf looks for it (kperf.paths.cache_dir).
RDKAFKA_DIR := $(or $(KPERF_CACHE),.cache)/rdkafka-perf
RDKAFKA_PERF := $(RDKAFKA_DIR)/rdkafka_performance
RDKAFKA_ATOMICS := -DWITH_GCC -DHAVE_ATOMICS_32 -DHAVE_ATOMICS_32_ATOMIC -DHAVE_ATOMICS_64 -DHAVE_ATOMICS_64_ATOMIC \
  '-DATOMIC_OP32(O1,O2,P,V)=__atomic_\#\#O1\#\#_\#\#O2(P,V,__ATOMIC_SEQ_CST)' \
  '-DATOMIC_OP64(O1,O2,P,V)=__atomic_\#\#O1\#\#_\#\#O2(P,V,__ATOMIC_SEQ_CST)'
# kperf's native loops (kperf/drivers/native, issue 25), compiled against the same librdkafka the confluent-kafka
# wheel ships, so the Python and native loops differ only in their language. The wheel ships librdkafka 2.16.0 without
# its header, and no registry here serves 2.16.0's: PyPI's confluent-kafka sdist has none, the Go module proxy refuses
# confluent-kafka-go 2.16, the Rust crate rdkafka-sys carries 2.12.1. The closest release any serves is 2.15.1, in the npm
# package @confluentinc/kafka-javascript 1.10.1: its rdkafka.h alone is taken (pinned by sha256), and
# kperf.drivers.native.library checks the loaded librdkafka's version against it (the same major, both recorded).
KAFKA_JS := 1.10.1
KAFKA_JS_SHA256 := ada7d703bb1d3237e2292bfabf438d663b6160c9f1ac2a2406b5dc4257c81b66
# Where kperf looks for it (kperf.drivers.native.library).
NATIVE_DIR := $(or $(KPERF_CACHE),.cache)/native
NATIVE_LIB := $(NATIVE_DIR)/libkperf_loops.so
NATIVE_INCLUDE := $(NATIVE_DIR)/librdkafka-2.15.1
NATIVE_HEADER := $(NATIVE_INCLUDE)/rdkafka.h
NATIVE_SOURCES := $(wildcard kperf/drivers/native/*.c kperf/drivers/native/*.h)
# A Kafka-API broker that is not Apache Kafka, for tests/cluster/test_kafka_api.py: franz-go's kfake (in memory,
# one process) behind our own small main (tools/kfake), every module pinned by checksum in its go.sum.
KFAKE_DIR := $(or $(KPERF_CACHE),.cache)/kfake
KFAKE := $(KFAKE_DIR)/kfake-broker
TOXIPROXY_DIR := $(or $(KPERF_CACHE),.cache)/toxiproxy
TOXIPROXY := $(TOXIPROXY_DIR)/toxiproxy-server
LOSSY_DIR := $(or $(KPERF_CACHE),.cache)/lossy
LOSSY := $(LOSSY_DIR)/lossy
WHEEL_LIBRDKAFKA := import confluent_kafka, pathlib; \
  print(next((pathlib.Path(confluent_kafka.__file__).parents[1] / "confluent_kafka.libs").glob("librdkafka*.so*")))

.PHONY: help study test test-unit check bytecode docs kafka chromium compose rdkafka-perf native kfake toxiproxy lossy lock clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  make \1\t/' | expand -t 20

study: kafka bytecode  ## run the whole study on a local 3-broker cluster (or BOOTSTRAP=host:port,...; ARGS: more options)
	$(KPERF) study $(if $(PROFILE),--profile $(PROFILE)) $(if $(BOOTSTRAP),--bootstrap $(BOOTSTRAP)) $(ARGS)

# What the suite needs, made side by side once the env is (a fresh clone: the checks' 16 s beside Kafka's fetch and the
# builds, 2026-12-03); each target's output kept together.
TEST_NEEDS := check bytecode kafka chromium compose rdkafka-perf native kfake toxiproxy lossy

test: $(STAMP)  ## every test: lint, types, layers, unit, against real local clusters (tests/cluster; rdkafka_performance, the native loops, kfake, toxiproxy and the loss helper built first), every notebook (nbval), the report in Chromium; ends with the slowest tests
	$(MAKE) --no-print-directory -j 4 --output-sync=target $(TEST_NEEDS)
	KPERF_CHROMIUM=$(CHROMIUM) $(VENV)/bin/python -m tests.suite $(LANES)

test-unit: check bytecode native  ## the pure-code tests alone (tests/unit: no Kafka, no network; the native loops built first), in under a minute
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

compose:  ## Debian's docker-compose (the file's own parser, no engine) for the compose file's test, installed when missing (needs root)
	@command -v docker-compose > /dev/null || { test "$$(id -u)" = 0 && { apt-get install -y -q --no-install-recommends docker-compose > /dev/null \
	  || { apt-get update -q > /dev/null && apt-get install -y -q --no-install-recommends docker-compose > /dev/null; }; }; } \
	|| { echo "make: the compose file's test needs docker-compose: run 'apt-get install docker-compose' as root"; exit 1; }

kafka: $(STAMP)  ## fetch the pinned Kafka jars and the JMX exporter agent with Maven (once)
	$(KPERF) kafka fetch

rdkafka-perf: $(STAMP)  ## build librdkafka's rdkafka_performance (kperf bench's ceiling) into .cache against the wheel's librdkafka; skipped without gcc or npm
	@if command -v gcc > /dev/null && command -v npm > /dev/null; then $(MAKE) --no-print-directory $(RDKAFKA_PERF); \
	else echo "make: rdkafka-perf skipped (it needs gcc and npm): kperf bench leaves out its rows"; fi

$(RDKAFKA_PERF): $(STAMP)
	rm -rf $(RDKAFKA_DIR) && mkdir -p $(RDKAFKA_DIR)/librdkafka
	cd $(RDKAFKA_DIR) && npm pack --silent node-rdkafka@$(NODE_RDKAFKA) > /dev/null
	echo "$(NODE_RDKAFKA_SHA256)  $(RDKAFKA_DIR)/node-rdkafka-$(NODE_RDKAFKA).tgz" | sha256sum --check --quiet
	tar xzf $(RDKAFKA_DIR)/node-rdkafka-$(NODE_RDKAFKA).tgz -C $(RDKAFKA_DIR)/librdkafka --strip-components=3 \
	  package/deps/librdkafka/examples/rdkafka_performance.c package/deps/librdkafka/src package/deps/librdkafka/LICENSE
	touch $(RDKAFKA_DIR)/librdkafka/config.h
	lib=$$($(VENV)/bin/python -c '$(WHEEL_LIBRDKAFKA)') || { echo "make: the confluent-kafka wheel ships no librdkafka here"; exit 1; }; \
	gcc -O2 $(RDKAFKA_ATOMICS) -I$(RDKAFKA_DIR)/librdkafka/src -o $@.tmp $(RDKAFKA_DIR)/librdkafka/examples/rdkafka_performance.c \
	  "$$lib" -Wl,-rpath,"$$(dirname "$$(realpath "$$lib")")" -lpthread -lm
	mv $@.tmp $@

native: $(STAMP)  ## build kperf's native producer and consumer loops into .cache against the wheel's librdkafka; skipped without gcc or npm
	@if command -v gcc > /dev/null && command -v npm > /dev/null; then $(MAKE) --no-print-directory $(NATIVE_LIB); \
	else echo "make: native loops skipped (they need gcc and npm): kperf runs its Python loops"; fi

$(NATIVE_HEADER):
	rm -rf $(NATIVE_INCLUDE) && mkdir -p $(NATIVE_INCLUDE)
	cd $(NATIVE_DIR) && npm pack --silent @confluentinc/kafka-javascript@$(KAFKA_JS) > /dev/null
	echo "$(KAFKA_JS_SHA256)  $(NATIVE_DIR)/confluentinc-kafka-javascript-$(KAFKA_JS).tgz" | sha256sum --check --quiet
	tar xzf $(NATIVE_DIR)/confluentinc-kafka-javascript-$(KAFKA_JS).tgz -C $(NATIVE_INCLUDE) --strip-components=4 \
	  package/deps/librdkafka/src/rdkafka.h
	rm $(NATIVE_DIR)/confluentinc-kafka-javascript-$(KAFKA_JS).tgz

# -isystem: the warnings of librdkafka's header are not ours.
$(NATIVE_LIB): $(NATIVE_SOURCES) $(NATIVE_HEADER) $(STAMP)
	lib=$$($(VENV)/bin/python -c '$(WHEEL_LIBRDKAFKA)') || { echo "make: the confluent-kafka wheel ships no librdkafka here"; exit 1; }; \
	gcc -O2 -shared -fPIC -Wall -Wextra -isystem $(NATIVE_INCLUDE) -o $@.tmp $(filter %.c,$(NATIVE_SOURCES)) \
	  "$$lib" -Wl,-rpath,"$$(dirname "$$(realpath "$$lib")")" -lm
	mv $@.tmp $@

kfake: ## build kfake-broker (a Kafka-API broker that is not Apache Kafka, for the tests) into .cache; skipped without Go
	@if command -v go > /dev/null; then $(MAKE) --no-print-directory $(KFAKE); \
	else echo "make: kfake skipped (it needs Go): the Kafka-API cluster tests are skipped"; fi

$(KFAKE): tools/kfake/main.go tools/kfake/go.mod tools/kfake/go.sum
	mkdir -p $(KFAKE_DIR)
	cd tools/kfake && GOFLAGS=-mod=readonly go build -trimpath -o $(abspath $@).tmp .
	mv $@.tmp $@

toxiproxy: ## build Shopify's toxiproxy (the TCP proxy a local cluster's links run through, for latency and bandwidth faults) into .cache, at the version and checksums tools/toxiproxy pins; skipped without Go
	@if command -v go > /dev/null; then $(MAKE) --no-print-directory $(TOXIPROXY); \
	else echo "make: toxiproxy skipped (it needs Go): link faults are refused, their tests skipped"; fi

$(TOXIPROXY): tools/toxiproxy/go.mod tools/toxiproxy/go.sum
	mkdir -p $(TOXIPROXY_DIR)
	cd tools/toxiproxy && GOFLAGS=-mod=readonly go build -trimpath -o $(abspath $@).tmp github.com/Shopify/toxiproxy/v2/cmd/server
	mv $@.tmp $@

lossy: ## build kperf's loss helper (tools/lossy: a kernel nftables rule dropping a share of a port's packets, for loss faults) into .cache, at the versions and checksums its go.sum pins; skipped without Go
	@if command -v go > /dev/null; then $(MAKE) --no-print-directory $(LOSSY); \
	else echo "make: lossy skipped (it needs Go): loss faults are refused, their tests skipped"; fi

$(LOSSY): tools/lossy/main.go tools/lossy/go.mod tools/lossy/go.sum
	mkdir -p $(LOSSY_DIR)
	cd tools/lossy && GOFLAGS=-mod=readonly go build -trimpath -o $(abspath $@).tmp .
	mv $@.tmp $@

# Installs only from the lock: a lock older than pyproject.toml's dependencies is refused, never re-resolved. Again
# when this Makefile changes (it says how to install).
$(STAMP): requirements.lock build.lock pyproject.toml Makefile | $(UV)
	@python3 -m kperf.lockfile check
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(VENV)/bin/python --require-hashes requirements.lock
	$(UV) pip install --quiet --python $(VENV)/bin/python --no-deps --build-constraints build.lock --require-build-hashes -e .
	sha256sum requirements.lock | cut -d' ' -f1 > $(STAMP)  # what kperf.lockfile.fingerprint() records

# Where PYTHONDONTWRITEBYTECODE is set (this machine's shell sets it), Python keeps no bytecode, so every process
# compiles again whatever it imports. A study or the suite starts hundreds (kperf commands, notebook kernels, load
# processes): the dependencies are compiled as they are installed (uv --compile-bytecode, above), kperf's own
# modules here before each run (only those changed since; a tree it cannot write to is left as it is).
# tests/cluster/test_compare_exits.py took 76 s on a fresh clone without bytecode and 37 s with it (2026-11-28).
bytecode: $(STAMP)
	@$(VENV)/bin/python -m compileall -q kperf || echo "make: kperf's bytecode not written: each process compiles it"

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

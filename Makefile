# The two commands of the README, idempotent: the virtual env and the Kafka jars
# are made once and reused.
VENV ?= .venv
KPERF := $(VENV)/bin/kperf
STAMP := $(VENV)/.installed
PROFILE ?=
ARGS ?=
CHROMIUM ?= /usr/bin/chromium

.PHONY: study test kafka chromium clean

study: kafka  ## run the whole study on a local 3-broker cluster (or BOOTSTRAP=host:port,...; ARGS: more options)
	$(KPERF) study $(if $(PROFILE),--profile $(PROFILE)) $(if $(BOOTSTRAP),--bootstrap $(BOOTSTRAP)) $(ARGS)

test: kafka chromium  ## every test: unit, integration against real local clusters, every notebook (nbval), the report in Chromium
	KPERF_CHROMIUM=$(CHROMIUM) $(VENV)/bin/pytest

chromium:  ## Debian's Chromium for the report's render test, installed when missing (needs root)
	@test -x $(CHROMIUM) || { test "$$(id -u)" = 0 && { apt-get install -y -q chromium > /dev/null \
	  || { apt-get update -q > /dev/null && apt-get install -y -q chromium > /dev/null; }; }; } \
	|| { echo "make: the report test needs Chromium: run 'apt-get install chromium' as root, or set CHROMIUM=/path/to/it"; exit 1; }

kafka: $(STAMP)
	$(KPERF) kafka fetch

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

clean:  ## stop the local cluster and remove the env and the Kafka cache (results in data/ are kept)
	-$(KPERF) cluster down
	rm -rf $(VENV) .cache

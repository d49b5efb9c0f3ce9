# The two commands of the README, idempotent: the virtual env and the Kafka jars
# are made once and reused.
VENV ?= .venv
KPERF := $(VENV)/bin/kperf
STAMP := $(VENV)/.installed
PROFILE ?=
ARGS ?=

.PHONY: study test kafka clean

study: kafka  ## run the whole study on a local 3-broker cluster (or BOOTSTRAP=host:port,...; ARGS: more options)
	$(KPERF) study $(if $(PROFILE),--profile $(PROFILE)) $(if $(BOOTSTRAP),--bootstrap $(BOOTSTRAP)) $(ARGS)

test: kafka  ## every test: unit, integration against real local clusters, every notebook (nbval)
	$(VENV)/bin/pytest

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

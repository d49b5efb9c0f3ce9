"""The form of a Dask scheduler's address as users give it (``--workers``, ``$KPERF_WORKERS``, the study's
``workers`` parameter).

A base module of its own because two layers check it: the study's parameters
(:mod:`kperf.study.experiment`, which the analysis imports, so it may not reach
the drivers) and the drivers' load hosts (:mod:`kperf.drivers.load_hosts.scheduler`).
"""

from __future__ import annotations

import re

ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d+")

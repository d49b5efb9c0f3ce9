"""Whether a trial had kperf's local cluster's host to itself, read from its record.

On kperf's local cluster the brokers and the clients share one host, and kperf samples the host's CPU, the
brokers' and its own clients' (:mod:`kperf.drivers.resources`). What the host used beyond those two is load kperf
did not start (another tenant, a build, a test suite): it competes with the brokers for the cores, and a latency
SLO's tail shows it. Measured on this project's 2-core machine in S1's capacity runs of 2026-11-28 (docs/sizing.md):
host less brokers less clients was -3 to +5% of a core in undisturbed trials, and 35 to 73% in the trials that
failed alone among their rate's. ``FOREIGN_MAX_PCT`` lies between.

Figures are the whole trial's (``res.*``), not its steady windows': an SLO's percentile is over the whole trial.
Only the local cluster with its load on this host is judged: elsewhere the host sampled is not the brokers', and load
from load hosts (``res.load_host_busy_pct``) runs where kperf's client figure does not look.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kperf.limits import number

FOREIGN_MAX_PCT = 25.0  # % of one core


def foreign_cpu_pct(row: Mapping[str, Any]) -> float:
    """The host's CPU less the brokers' and kperf's clients' (% of one core); NaN where it cannot be told."""
    if row.get("env.cluster") != "local" or math.isfinite(number(row, "res.load_host_busy_pct")):
        return math.nan
    return number(row, "res.host_cpu_pct") - number(row, "res.broker_cpu_pct") - number(row, "res.client_cpu_pct")


def disturbance(row: Mapping[str, Any]) -> str | None:
    """Why the record ``row`` did not have the host to itself, with its numbers; None when it did, or when that
    cannot be told."""
    foreign = foreign_cpu_pct(row)
    if not foreign > FOREIGN_MAX_PCT:
        return None
    return (f"disturbed: the host used {foreign:.0f}% of a core beyond the brokers' "
            f"{number(row, 'res.broker_cpu_pct'):.0f}% and kperf's clients' {number(row, 'res.client_cpu_pct'):.0f}% "
            f"(other load on it; at most {FOREIGN_MAX_PCT:.0f}% is a trial's own)")

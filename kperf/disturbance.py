"""Whether a trial had kperf's local cluster's host to itself, read from its record.

On kperf's local cluster the brokers and the clients share one host, and kperf samples the host's CPU, the
brokers' and its own clients' (:mod:`kperf.drivers.resources`). What the host used beyond those two is load kperf
did not start (another tenant, a build, a test suite): it competes with the brokers for the cores, and a latency
SLO's tail shows it. In the 60 sustain and headroom trials of the seven capacity runs recorded on this project's
2-core machine (tests/data/sizing-run, 2026-11-27/28), host less brokers less clients was -10 to +19% of a core in
56, and 27 to 73% in 4: the two trials of S1's run of 10:30 that failed where the others at their rate held (61 and
73%), one at 5,208 records/s (35%), and a sustain trial far over a cold cluster's capacity (27%: the kernel's own
work, writeback and interrupts, lands here too when the host is overloaded). ``FOREIGN_MAX_PCT`` lies between.

Figures are the whole trial's (``res.*``), not its steady windows': an SLO's percentile is over the whole trial.
Only the local cluster with its load on this host is judged: elsewhere the host sampled is not the brokers', and with
load hosts (``res.load_host_busy_pct``) the client figure is theirs, not this host's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kperf.row_values import number

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

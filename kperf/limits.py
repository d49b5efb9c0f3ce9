"""What limited a measured point, read from its own record, with the numbers that show it.

A point measures Kafka only when nothing else held it back. The rules, in order:

1. **rate cap**: a paced producer (or a consumer reading it as it sends)
   achieved at least ``AT_CAP`` of the offered rate, so it measured the rate
   asked for, not a limit;
2. **load generator**: the busiest client process used at least ``BUSY`` of
   one core on average. A Python client's sending or reading loop runs on one
   thread (with librdkafka's threads beside it), and so does each stock tool's,
   so such a process is most likely held back by itself. CPU is read per
   process, not per thread, so this is the likely limit, not a proven one;
3. **host CPU**: on kperf's local cluster, brokers and clients together used at
   least ``BUSY`` of the host's cores: they competed for them;
4. **broker CPU**: the brokers used at least ``BUSY`` of the host's cores alone;
5. **none found**: none of these, so the limit is elsewhere (Kafka itself,
   disk, network) or was not measured.

CPU figures are means over the whole run (``res.*_cpu_pct``, 100 = one core),
sampled only where kperf sees the processes: a remote cluster's brokers are
not, so rules 3 and 4 need the local cluster.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

AT_CAP = 0.95
BUSY = 0.80
RATE_CAP, LOAD_GENERATOR, HOST_CPU, BROKER_CPU, NONE_FOUND = (
    "rate cap", "load generator", "host CPU", "broker CPU", "none found"
)


def _number(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def limit(row: Mapping[str, Any]) -> tuple[str, str]:
    """The limit of one result row (its flat columns) and the evidence, in words."""
    achieved = _number(row, "steady_records_per_s")
    if math.isnan(achieved):
        achieved = _number(row, "records_per_s")
    offered = _number(row, "param.rate")
    if offered > 0 and achieved >= AT_CAP * offered:  # a paced producer, or a consumer reading it as it sends
        return RATE_CAP, f"achieved {achieved:,.0f} of the {offered:,.0f} records/s offered"
    client, busiest, broker, cores = (
        _number(row, k) for k in ("res.client_cpu_pct", "res.client_cpu_pct_busiest", "res.broker_cpu_pct", "env.cpu_count")
    )
    if busiest >= BUSY * 100:
        return LOAD_GENERATOR, f"the busiest client process used {busiest:.0f}% of a core (its loop runs on one thread)"
    if row.get("env.cluster") == "local" and client + broker >= BUSY * 100 * cores:
        return HOST_CPU, f"brokers {broker:.0f}% and clients {client:.0f}% of the host's {cores:.0f} cores (100% = one core)"
    if broker >= BUSY * 100 * cores:
        return BROKER_CPU, f"brokers {broker:.0f}% of the host's {cores:.0f} cores (100% = one core)"
    if math.isnan(client):
        return NONE_FOUND, "no CPU was sampled"
    return NONE_FOUND, f"clients {client:.0f}%, brokers {'unseen' if math.isnan(broker) else f'{broker:.0f}%'} CPU"

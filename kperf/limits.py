"""What limited a measured point, read from its own record, with the numbers that show it.

A point measures Kafka only when nothing else held it back. The rules, in order:

1. **rate cap**: a paced producer (or a consumer reading it as it sends)
   achieved at least ``AT_CAP`` of the offered rate, so it measured the rate
   asked for, not a limit;
2. **load generator**: the busiest client process used at least ``BUSY`` of
   one core. A Python client's sending or reading loop runs on one thread
   (with librdkafka's threads beside it), and so does each stock tool's, so
   such a process is most likely held back by itself (CPU is read per
   process, not per thread: the likely limit, not a proven one). On a
   cluster elsewhere, the load host's CPU at ``BUSY`` of its cores is this
   limit too: the host generating the load was full, and so is any load
   host (Dask workers, ``--workers``) whose cores were busy at least ``BUSY``
   of the time (``load_host_busy_pct``: the busiest load host);
3. **host CPU**: on kperf's local cluster, the host's cores (brokers, clients
   and anything else running) were busy at least ``BUSY`` of the time: they
   competed for them;
4. **broker CPU**: the brokers used at least ``BUSY`` of the host's cores alone
   (seen only on the local cluster; the host rule above usually fires first);
   **broker threads**: on any cluster whose metrics kperf reads, the brokers'
   request handler or network threads were idle less than ``1 - BUSY`` of
   the time (Kafka's own idle ratios, ``broker.*_idle_pct``);
5. **disk**: the busiest disk of the local cluster's host had a request in
   flight at least ``BUSY`` of the time (``iostat``'s %util);
6. **network**: the load host's busiest network interface carried at least
   ``BUSY`` of its link speed (interfaces that report one; loopback does not);
7. **replication**: none of these, and an unthrottled producer's requests spent at
   least ``WAITED`` of their time in Kafka's remote time, waiting for the
   followers to fetch (acks=all on a replicated topic; ``broker.*``, from the
   brokers' metrics). With nothing saturated, a producer's rate is what it
   has in flight over how long a request takes (Little's law), and most of
   that time was the replication round trip: the point measured Kafka's
   replication latency, not a resource;
8. **none found**: none of these, so the limit is elsewhere (Kafka itself, a
   remote cluster's brokers) or was not measured.

The rate judged is the one :mod:`kperf.achieved` gives (the steady rate, else
the whole run's). Figures are means over the point's steady windows
(``steady_res.*``, see :func:`kperf.steady.steady_resources`) where it has
them, else over the whole run (``res.*``); CPU in % with 100 = one core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kperf.achieved import steady_else_whole

AT_CAP = 0.95
BUSY = 0.80
WAITED = 0.5  # the share of a produce request's time in remote time that makes replication its largest part
RATE_CAP, LOAD_GENERATOR, HOST_CPU, BROKER_CPU, BROKER_THREADS, DISK, NETWORK, REPLICATION, NONE_FOUND = (
    "rate cap", "load generator", "host CPU", "broker CPU", "broker threads", "disk", "network", "replication",
    "none found"
)


def _number(row: Mapping[str, Any], key: str) -> float:
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan


def _resource(row: Mapping[str, Any], figure: str) -> float:
    """A resource figure over the steady windows, else over the whole run (NaN: not sampled)."""
    steady = _number(row, f"steady_res.{figure}")
    return steady if math.isfinite(steady) else _number(row, f"res.{figure}")


def limit(row: Mapping[str, Any]) -> tuple[str, str]:
    """The limit of one result row (its flat columns) and the evidence, in words."""
    achieved = steady_else_whole(_number(row, "steady_records_per_s"), _number(row, "steady_windows"),
                                 _number(row, "records_per_s"))
    offered = _number(row, "param.rate")
    if offered > 0 and achieved >= AT_CAP * offered:  # a paced producer, or a consumer reading it as it sends
        return RATE_CAP, f"achieved {achieved:,.0f} of the {offered:,.0f} records/s offered"
    client, busiest, broker, host, disk, network = (
        _resource(row, f) for f in
        ("client_cpu_pct", "client_cpu_pct_busiest", "broker_cpu_pct", "host_cpu_pct", "disk_busy_pct", "net_busy_pct")
    )
    cores, local = _number(row, "env.cpu_count"), row.get("env.cluster") == "local"
    if math.isnan(host) and local:
        host = client + broker  # records before the host was sampled (schema 3)
    if busiest >= BUSY * 100:
        return LOAD_GENERATOR, f"the busiest client process used {busiest:.0f}% of a core (its loop runs on one thread)"
    load_hosts = _resource(row, "load_host_busy_pct")
    if load_hosts >= BUSY * 100:
        return LOAD_GENERATOR, f"the busiest load host's cores were {load_hosts:.0f}% busy (of {row.get('env.load_hosts')})"
    if not local and host >= BUSY * 100 * cores and math.isnan(load_hosts):
        return LOAD_GENERATOR, f"the load host's {cores:.0f} cores were {host / cores:.0f}% busy"
    if local and host >= BUSY * 100 * cores:
        return HOST_CPU, (f"the host's {cores:.0f} cores were {host / cores:.0f}% busy: brokers {broker:.0f}%, "
                          f"clients {client:.0f}% (100% = one core)")
    if broker >= BUSY * 100 * cores:
        return BROKER_CPU, f"brokers {broker:.0f}% of the host's {cores:.0f} cores (100% = one core)"
    for threads, column in (("request handler", "broker.handler_idle_pct"), ("network", "broker.network_idle_pct")):
        idle = _number(row, column)
        if idle <= (1 - BUSY) * 100:
            return BROKER_THREADS, f"the brokers' {threads} threads were idle {idle:.0f}% of the time (Kafka's own ratio)"
    if local and disk >= BUSY * 100:
        return DISK, f"the busiest disk was busy {disk:.0f}% of the time"
    if network >= BUSY * 100:
        return NETWORK, f"the busiest network interface carried {network:.0f}% of its link speed"
    if math.isnan(client):
        return NONE_FOUND, "no CPU was sampled"
    remote, total = _number(row, "broker.produce_remote_ms"), _number(row, "broker.produce_total_ms")
    unthrottled = _number(row, "param.rate") < 0  # a paced producer's rate is its cap, not a limit to explain
    if row.get("role") == "producer" and unthrottled and total > 0 and remote >= WAITED * total:
        return REPLICATION, (f"no resource was saturated, and the brokers' produce requests spent {remote / total:.0%} "
                             f"of their {total:.1f} ms waiting for the followers to fetch (Kafka's remote time)")
    seen = [f"clients {client:.0f}%", f"brokers {'unseen' if math.isnan(broker) else f'{broker:.0f}%'} CPU"]
    seen += [f"{name} {value:.0f}% busy" for name, value in (("disk", disk), ("network", network)) if math.isfinite(value)]
    return NONE_FOUND, ", ".join(seen)

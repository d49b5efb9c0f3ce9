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
``WORDS`` says, for each limit, what the points it held back measured, as the
report says it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kperf import broker_columns
from kperf.achieved import steady_else_whole
from kperf.row_values import number

AT_CAP = 0.95
BUSY = 0.80
WAITED = 0.5  # the share of a produce request's time in remote time that makes replication its largest part
RATE_CAP, LOAD_GENERATOR, HOST_CPU, BROKER_CPU, BROKER_THREADS, DISK, NETWORK, REPLICATION, NONE_FOUND = (
    "rate cap", "load generator", "host CPU", "broker CPU", "broker threads", "disk", "network", "replication",
    "none found"
)
UNSAMPLED = "no CPU was sampled"  # NONE_FOUND's evidence when nothing was seen: no resource can be ruled out
Found = tuple[str, str] | None  # a rule's limit and its evidence, or None: the rule does not hold


def _share(fraction: float) -> str:
    """A threshold in the report's words: "half", else a percentage."""
    return "half" if fraction == 0.5 else f"{fraction:.0%}"


# What the points each limit held back measured, in the report's order and words ("3 of 9 points <words>").
WORDS = {
    LOAD_GENERATOR: "measure the load generator, not Kafka: a client process, whose sending or reading loop "
                    f"runs on one thread, used {_share(BUSY)} or more of a core (or the load host's cores were full)",
    HOST_CPU: "measure this host's CPU, which the brokers and the clients shared, not Kafka",
    BROKER_CPU: "were bound by the brokers' CPU",
    BROKER_THREADS: f"were bound by the brokers' request handler or network threads (idle {_share(1 - BUSY)} or less)",
    RATE_CAP: "ran at the rate they were asked for: they show latency at that load, not a limit",
    DISK: f"were bound by the disk the brokers write to (busy {_share(BUSY)} or more of the time)",
    NETWORK: f"were bound by the load host's network interface ({_share(BUSY)} or more of its link speed)",
    REPLICATION: "measure Kafka's replication latency: with nothing saturated, their produce requests spent "
                 f"{_share(WAITED)} their time or more waiting for the followers (acks=all)",
    NONE_FOUND: "show no limit kperf can see on this host: Kafka itself, or a remote cluster's brokers",
}


def resource(row: Mapping[str, Any], figure: str) -> float:
    """A resource figure over the steady windows, else over the whole run (NaN: not sampled)."""
    steady = number(row, f"steady_res.{figure}")
    return steady if math.isfinite(steady) else number(row, f"res.{figure}")


@dataclass(frozen=True)
class _Figures:
    """What a row says of the resources its point used (CPU in %, 100 = one core), as the rules read them."""

    client: float
    busiest: float  # the busiest client process
    broker: float
    host: float
    disk: float
    network: float
    load_hosts: float  # the busiest load host's cores (Dask workers)
    cores: float
    local: bool  # on kperf's local cluster

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> _Figures:
        client, busiest, broker, host, disk, network, load_hosts = (resource(row, f) for f in (
            "client_cpu_pct", "client_cpu_pct_busiest", "broker_cpu_pct", "host_cpu_pct", "disk_busy_pct",
            "net_busy_pct", "load_host_busy_pct"))
        local = row.get("env.cluster") == "local"
        if math.isnan(host) and local:
            host = client + broker  # records before the host was sampled (schema 3)
        return cls(client, busiest, broker, host, disk, network, load_hosts, number(row, "env.cpu_count"), local)


def limit(row: Mapping[str, Any]) -> tuple[str, str]:
    """The limit of one result row (its flat columns) and the evidence, in words: the first rule that holds."""
    figures = _Figures.of(row)
    return (_rate_cap(row) or _load_generator(row, figures) or _cpu(figures) or _broker_threads(row)
            or _disk_or_network(figures) or _unsampled(figures) or _replication(row) or (NONE_FOUND, _seen(figures)))


def _rate_cap(row: Mapping[str, Any]) -> Found:
    achieved = steady_else_whole(number(row, "steady_records_per_s"), number(row, "steady_windows"),
                                 number(row, "records_per_s"))
    offered = number(row, "param.rate")
    if offered > 0 and achieved >= AT_CAP * offered:  # a paced producer, or a consumer reading it as it sends
        return RATE_CAP, f"achieved {achieved:,.0f} of the {offered:,.0f} records/s offered"
    return None


def _load_generator(row: Mapping[str, Any], f: _Figures) -> Found:
    if f.busiest >= BUSY * 100:
        return LOAD_GENERATOR, f"the busiest client process used {f.busiest:.0f}% of a core (its loop runs on one thread)"
    if f.load_hosts >= BUSY * 100:
        return LOAD_GENERATOR, f"the busiest load host's cores were {f.load_hosts:.0f}% busy (of {row.get('env.load_hosts')})"
    if not f.local and f.host >= BUSY * 100 * f.cores and math.isnan(f.load_hosts):
        return LOAD_GENERATOR, f"the load host's {f.cores:.0f} cores were {f.host / f.cores:.0f}% busy"
    return None


def _cpu(f: _Figures) -> Found:
    if f.local and f.host >= BUSY * 100 * f.cores:
        return HOST_CPU, (f"the host's {f.cores:.0f} cores were {f.host / f.cores:.0f}% busy: brokers {f.broker:.0f}%, "
                          f"clients {f.client:.0f}% (100% = one core)")
    if f.broker >= BUSY * 100 * f.cores:
        return BROKER_CPU, f"brokers {f.broker:.0f}% of the host's {f.cores:.0f} cores (100% = one core)"
    return None


def _broker_threads(row: Mapping[str, Any]) -> Found:
    for threads, column in (("request handler", broker_columns.HANDLER_IDLE_PCT), ("network", broker_columns.NETWORK_IDLE_PCT)):
        idle = number(row, column)
        if idle <= (1 - BUSY) * 100:
            return BROKER_THREADS, f"the brokers' {threads} threads were idle {idle:.0f}% of the time (Kafka's own ratio)"
    return None


def _disk_or_network(f: _Figures) -> Found:
    if f.local and f.disk >= BUSY * 100:
        return DISK, f"the busiest disk was busy {f.disk:.0f}% of the time"
    if f.network >= BUSY * 100:
        return NETWORK, f"the busiest network interface carried {f.network:.0f}% of its link speed"
    return None


def _unsampled(f: _Figures) -> Found:
    return (NONE_FOUND, UNSAMPLED) if math.isnan(f.client) else None


def _replication(row: Mapping[str, Any]) -> Found:
    remote, total = (number(row, broker_columns.time_ms(broker_columns.PRODUCE, phase))
                     for phase in ("remote", broker_columns.TOTAL))
    unthrottled = number(row, "param.rate") < 0  # a paced producer's rate is its cap, not a limit to explain
    if row.get("role") == "producer" and unthrottled and total > 0 and remote >= WAITED * total:
        return REPLICATION, (f"no resource was saturated, and the brokers' produce requests spent {remote / total:.0%} "
                             f"of their {total:.1f} ms waiting for the followers to fetch (Kafka's remote time)")
    return None


def _seen(f: _Figures) -> str:
    seen = [f"clients {f.client:.0f}%", f"brokers {'unseen' if math.isnan(f.broker) else f'{f.broker:.0f}%'} CPU"]
    seen += [f"{name} {value:.0f}% busy" for name, value in (("disk", f.disk), ("network", f.network)) if math.isfinite(value)]
    return ", ".join(seen)

"""Where a run's load came from and what its processes used there: ``env.load_*`` and the ``res.*`` figures of
load processes on Dask workers."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from distributed import Client

T = TypeVar("T")
CLOCK_PINGS = 5  # round trips per host for its clock offset; the shortest one is kept


@dataclass(frozen=True)
class TaskReport(Generic[T]):
    """What a Dask task returns: its driver's report, and where it ran and what it used there."""

    result: T
    host: str
    worker: str
    hostname: str
    cores: int
    resources: Mapping[str, float]  # its process's CPU and RSS, and its host's, over the run (ResourceSampler)


@dataclass(frozen=True)
class Ran(Generic[T]):
    """The reports of a run's load processes, with where the load came from (``Measurement.load``) and what the
    processes used (``Measurement.resources``: empty on this host, where the caller samples them itself)."""

    results: list[T]
    load: Mapping[str, Any]
    resources: Mapping[str, float] = field(default_factory=dict)


def here(hostname: str, processes: int) -> dict[str, Any]:
    """The load record of ``processes`` load processes on this host."""
    return {"load_hosts": hostname, "load_processes": processes, "clock_offset_ms": 0.0}


def clock_offsets(client: Client, hosts: Mapping[str, str]) -> dict[str, float]:
    """Each host's clock minus this one's, ms: the middle of the shortest of CLOCK_PINGS round trips (via one of
    its workers), good to half that round trip. End-to-end latency across hosts is off by it."""
    offsets = {}
    for host, worker in hosts.items():
        best = (math.inf, 0.0)
        for _ in range(CLOCK_PINGS):
            before = time.time()
            theirs = client.run(time.time, workers=[worker])[worker]
            after = time.time()
            best = min(best, (after - before, theirs - (before + after) / 2))
        offsets[host] = best[1] * 1000
    return offsets


def load_record(reports: Sequence[TaskReport[Any]], offsets: Mapping[str, float]) -> dict[str, Any]:
    """``env.load_hosts``, ``env.load_processes``, ``env.clock_offset_ms`` (the largest, by size) and, per host,
    its processes, workers, cores, CPU, the load processes' RSS and its clock offset (``env.load_detail``, JSON)."""
    detail: dict[str, dict[str, Any]] = {}
    for r in reports:
        host = detail.setdefault(r.host, {"hostname": r.hostname, "processes": 0, "workers": [], "cores": r.cores,
                                          "host_cpu_pct": 0.0, "client_cpu_pct": 0.0, "client_rss_mib_max": 0.0,
                                          "clock_offset_ms": round(offsets.get(r.host, math.nan), 3)})
        host["processes"] += 1
        host["workers"] = sorted({*host["workers"], r.worker})
        host["host_cpu_pct"] = max(host["host_cpu_pct"], r.resources.get("host_cpu_pct", 0.0))
        host["client_cpu_pct"] += r.resources.get("client_cpu_pct", 0.0)
        host["client_rss_mib_max"] += r.resources.get("client_rss_mib_max", 0.0)  # an upper bound: peaks summed
    return {
        "load_hosts": ",".join(sorted(detail)),
        "load_processes": len(reports),
        "clock_offset_ms": max((abs(v) for v in offsets.values()), default=0.0),
        "load_detail": json.dumps(detail, sort_keys=True),
    }


def load_resources(reports: Sequence[TaskReport[Any]]) -> dict[str, float]:
    """The load processes' CPU and RSS wherever they ran (the figures the local sampler gives on this host), and
    the busiest load host's CPU share of its cores (``load_host_busy_pct``, 100 = every core busy)."""
    figures = [r.resources for r in reports]
    return {
        "client_cpu_pct": sum(f.get("client_cpu_pct", 0.0) for f in figures),
        "client_cpu_pct_busiest": max(f.get("client_cpu_pct_busiest", 0.0) for f in figures),
        "client_cpu_pct_max": sum(f.get("client_cpu_pct_max", 0.0) for f in figures),  # an upper bound, as RSS
        "client_rss_mib_max": sum(f.get("client_rss_mib_max", 0.0) for f in figures),
        "load_host_busy_pct": max(f.get("host_cpu_pct", 0.0) / r.cores for f, r in zip(figures, reports, strict=True)),
    }

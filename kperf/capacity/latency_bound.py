"""A capacity run's limit set by a latency SLO that no resource explains: what a plan counted by resources cannot
promise.

``kperf plan`` counts brokers from measured resource costs (CPU, disk, network). When the workload's own capacity run
missed a latency SLO at its lowest failing rate while kperf's limit rules found no resource at its limit there
(:data:`kperf.limits.NONE_FOUND`), the measured cluster's limit was latency, below every resource's: brokers sized
by resources carry the volume, not that SLO. S1 on the 2-core host is such a workload (docs/sizing.md). The plan
says so beside its count, rather than leaving a reader to find it in ``--validate``'s disagreement. Only on kperf's
local cluster, where every resource (the brokers', the clients', the host's disk and network) was sampled:
elsewhere "none found" may be a resource kperf could not see.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kperf.capacity.slo import E2E_LATENCY, PRODUCE_LATENCY
from kperf.limits import NONE_FOUND, UNSAMPLED
from kperf.sizing.measured import on_local_cluster

LATENCY_SLOS = (PRODUCE_LATENCY, E2E_LATENCY)  # an SLO's recorded name starts with one ("produce latency p99")


@dataclass(frozen=True)
class LatencyBound:
    """The workload's capacity run failed the latency SLOs ``slos`` at ``high`` records/s (the lowest rate
    confirmed to fail), no resource at its limit there (``evidence``: what each was at)."""

    workload: str
    high: float
    slos: tuple[str, ...]
    evidence: str

    def line(self) -> str:
        return (f"Latency: kperf capacity measured {self.workload} failing {', '.join(self.slos)} at {self.high:,.0f} "
                f"records/s with no resource at kperf's limits ({self.evidence}). Brokers counted by resources carry "
                "the volume, not that SLO: measure the cluster you buy with kperf capacity.")


def of(found: Mapping[str, Any]) -> LatencyBound | None:
    """The latency bound a capacity verdict (its capacity.json) shows, or None: no limit confirmed, no latency SLO
    failed there, a resource at its limit explains it, or kperf could not see every resource (another cluster, or
    nothing sampled)."""
    headroom = found.get("headroom") or {}
    failed = tuple(name for name in headroom.get("failed") or () if name.startswith(LATENCY_SLOS))
    held = headroom.get("limited_by")
    if (headroom.get("high") is None or not failed or not held or held[0] != NONE_FOUND or held[1] == UNSAMPLED
            or not on_local_cluster(found)):
        return None
    return LatencyBound(found["workload"]["name"], float(headroom["high"]), failed, held[1])

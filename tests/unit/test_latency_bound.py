"""A capacity verdict's latency bound: shown only when a latency SLO failed at the lowest failing rate and kperf's
limit rules found no resource at its limit there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kperf.capacity import latency_bound
from kperf.limits import HOST_CPU, NONE_FOUND, UNSAMPLED

RECORDED = Path(__file__).parents[1] / "data" / "sizing-run"


def verdict(run: str, cluster: str = "local", **headroom: Any) -> dict[str, Any]:
    """A recorded capacity run's verdict, its headroom changed as given, on ``cluster``."""
    found = json.loads((RECORDED / run / "capacity.json").read_text())
    found["headroom"] = {**found["headroom"], **headroom}
    found["environment"] = {**found["environment"], "cluster": cluster}
    return found


@pytest.mark.parametrize("found, slos", [
    # S1 on this project's host: its produce p99 missed at 5,208 records/s, no resource at its limit.
    (verdict("s1-capacity"), ("produce latency p99",)),
    (verdict("s1-capacity", failed=["consumer lag", "end-to-end latency p99", "produce latency p99"]),
     ("end-to-end latency p99", "produce latency p99")),
    # A resource at its limit explains the latency: the plan's count speaks to it.
    (verdict("s1-capacity", limited_by=[HOST_CPU, "the host's 2 cores were 92% busy"]), None),
    # No latency SLO failed (keep-up, lag): a resource's limit, which the plan counts.
    (verdict("s1-capacity", failed=["keep-up", "consumer lag"]), None),
    # Nothing sampled, or a cluster whose brokers' disks and network kperf does not see: no resource ruled out.
    (verdict("s1-capacity", limited_by=[NONE_FOUND, UNSAMPLED]), None),
    (verdict("s1-capacity", cluster="remote"), None),
    (verdict("s1-capacity", limited_by=None), None),
    # No rate confirmed to fail, or a run without a search.
    (verdict("s1-capacity", high=None), None),
    ({"workload": {"name": "w"}}, None),
    # S5: limited by the load generator.
    (verdict("s5-capacity"), None),
])
def test_a_latency_bound_is_a_latency_slo_missed_with_no_resource_at_its_limit(
        found: dict[str, Any], slos: tuple[str, ...] | None) -> None:
    bound = latency_bound.of(found)
    if slos is None:
        assert bound is None
        return
    assert bound is not None and bound.slos == slos and bound.high == found["headroom"]["high"]
    assert bound.evidence == "clients 32%, brokers 88% CPU, disk 3% busy"  # what the rules saw at 5,208 records/s
    assert f"failing {', '.join(slos)} at 5,208 records/s" in bound.line()

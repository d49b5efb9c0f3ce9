"""Partition count (S1.3, S4), with one or more producers: a scaling curve (linear, Amdahl or USL)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [
        point(f"partitions={count}", workload(s, partitions=count, rate=s["rate"], producers=s["producers"]))
        for count in s["partition_counts"]
    ]


def rules(s: Settings) -> None:
    if s.get("producers", 1) > 1 and "java" in s.get("clients", ()):
        raise KperfError("parameter 'producers' of experiment 'partitions': more than 1 needs clients [python]")


def analyze(results: pd.DataFrame) -> Finding:
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    return findings.scaled("partitions", results, (("producer", "param.partitions", "partitions"),))


register(Experiment(
    name="partitions",
    title="Partition count",
    question="How many partitions write fastest?",
    order=30,
    params={
        **common("records", "record_size", "replication_factor", "acks", "batch_size", "linger_ms"),
        "partition_counts": Param(int, "partition-count grid", many=True, minimum=1),
        "producers": Param(int, "producer processes per point", minimum=1),
        "rate": Param(float, "total producer rate cap (records/s); -1: unthrottled", minimum=1, unthrottled=True),
    },
    profiles={
        "smoke": {"partition_counts": [1, 3], "replication_factor": 3, "producers": 1, "rate": -1},
        "quick": {"partition_counts": [1, 3, 6, 9, 12, 15, 18], "replication_factor": 3, "producers": 1, "rate": -1},
        # S1.3: rf 3, target 300,000 records/s, 10M records (the table's count).
        "seed": {"partition_counts": [3, 6, 9, 12, 15, 18, 21], "replication_factor": 3, "producers": 1, "rate": 300_000},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(Panel("producer", "param.partitions", y) for y in ("records_per_s", "latency_ack_p99_ms")),
    rules=rules,
))

"""Producer processes 1..P (S1.4), then consumer processes 1..C of one group reading a filled topic (S1.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.errors import KperfError
from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [point(f"producers={p}", workload(s, producers=p)) for p in s["producer_counts"]] + [
        point(f"consumers={c}", workload(s, consumers=c, measure_producer=False)) for c in s["consumer_counts"]
    ]


def rules(s: Settings) -> None:
    if "java" in s.get("clients", ()):
        raise KperfError(
            "parameter 'clients' of experiment 'threads': the stock tools run one process per client, "
            "so the threads experiment measures the python client only"
        )


def analyze(results: pd.DataFrame) -> Finding:
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    return findings.scaled("threads", results, (("producer", "param.producers", "producer processes"),
                                                ("consumer", "param.consumers", "consumer processes")))


register(Experiment(
    name="threads",
    title="Producer and consumer processes",
    question="How many producer processes write fastest?",
    order=40,
    params={
        **common("records", "record_size", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "producer_counts": Param(int, "producer-process grid", many=True, minimum=1),
        "consumer_counts": Param(int, "consumer-process grid (one group)", many=True, minimum=1),
    },
    profiles={
        "smoke": {"producer_counts": [1, 2], "consumer_counts": [1, 2], "partitions": 2},
        "quick": {"producer_counts": [1, 2, 4], "consumer_counts": [1, 2, 4], "partitions": 6, "replication_factor": 3,
                  "records": 200_000},
        # S1.4 and S1.5: 15 partitions, rf 3; 10M records produced, and read back by 1..18 consumers.
        "seed": {"producer_counts": [1, 3, 6, 9, 15, 18], "consumer_counts": [1, 3, 6, 9, 12, 15, 18],
                 "partitions": 15, "replication_factor": 3, "clients": ["python"]},
    },
    grid=grid,
    analyze=analyze,
    panels=(Panel("producer", "param.producers", "records_per_s"), Panel("consumer", "param.consumers", "records_per_s")),
    rules=rules,
))

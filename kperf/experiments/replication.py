"""Replication factor x acks, with min.insync.replicas (S4, Kreps' sync and async replication): the cost of safety."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.study.experiment import ACKS, Experiment, Panel, Param, Point, Settings, common, min_insync, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [
        point(
            f"replication.factor={rf} acks={acks}",
            workload(s, {"acks": acks}, replication_factor=rf, topic_config=min_insync(s, rf)),
        )
        for rf in s["replication_factors"]
        for acks in s["acks_values"]
    ]


def named(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a ``setting`` column naming each replication point: ``rf=3 acks=all``."""
    return rows.assign(setting="rf=" + rows["param.replication_factor"].astype(str) + " acks=" + rows["param.acks"].astype(str))


def analyze(results: pd.DataFrame) -> Finding:
    """Throughput per replication factor and acks, ranked, and the cost of the safest setting."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings, stats

    producer = named(results[results["role"] == "producer"])
    parts = []
    for client in findings.clients(producer):
        mine = producer[producer["param.client"] == client]
        text, table = findings.ranking(mine, "setting", "records_per_s", "producer records/s", True, client)
        cheapest = mine.sort_values(["param.replication_factor", "param.acks"]).iloc[0]["setting"]
        safest = mine[mine["param.acks"] == "all"].sort_values("param.replication_factor")
        if not safest.empty and safest.iloc[-1]["setting"] != cheapest:
            costly = safest.iloc[-1]["setting"]
            cost = stats.compare(cheapest, mine.loc[mine["setting"] == cheapest, "records_per_s"],
                                 costly, mine.loc[mine["setting"] == costly, "records_per_s"])
            text += (f" The safest setting, {costly}, carried {1 / cost.ratio:.0%} of {cheapest}'s throughput "
                     f"({cost.sentence()}).")
        parts.append((text, table))
    return findings.tabled("replication", parts)


register(Experiment(
    name="replication",
    title="Replication factor and acks",
    question="Which replication factor and acks write fastest (and what does safety cost)?",
    order=60,
    params={
        **common("records", "record_size", "partitions", "batch_size", "linger_ms"),
        "replication_factors": Param(int, "replication-factor grid", many=True, minimum=1),
        "acks_values": Param(str, "producer acks grid", many=True, choices=ACKS),
        "min_insync_replicas": Param(int, "topic min.insync.replicas (capped at each point's replication factor)",
                                     minimum=1),
    },
    profiles={
        "smoke": {"replication_factors": [1, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2},
        "quick": {"replication_factors": [1, 2, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2,
                  "partitions": 3},
        # S4 and Kreps: 100-byte records, 6 partitions, rf 1-3 with acks 1 and all.
        "seed": {"replication_factors": [1, 2, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2,
                 "record_size": 100, "partitions": 6},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel("producer", "param.replication_factor", y, ("param.client", "param.acks"))
        for y in ("records_per_s", "latency_ack_p99_ms")
    ),
))

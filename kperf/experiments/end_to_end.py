"""A paced producer and a consumer at once: produce-to-consume latency against load (S4, Kreps)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, paced_records, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [
        point(
            f"rate={rate:g}",
            workload(s, records=paced_records(s, rate), rate=rate, consumers=1, concurrent=True,
                     round_trips=s["round_trips"]),
            duration_s=s["duration_s"],
            round_trips=s["round_trips"],
        )
        for rate in s["rates"]
    ]


def analyze(results: pd.DataFrame) -> Finding:
    """End-to-end latency per offered rate and client: the median p50 and p99 with their intervals."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    rows = results.dropna(subset=["latency_e2e_p99_ms"]) if "latency_e2e_p99_ms" in results else results.iloc[0:0]
    parts = []
    for client in findings.clients(rows):
        steps, table = findings.latency_by_rate(rows[rows["param.client"] == client])
        note = " (the stock EndToEndLatency tool does synchronous round trips at every rate)" if client == "java" else ""
        parts.append((f"End-to-end latency, {client}{note}: {steps}.", table.assign(client=client)))
    return findings.tabled("end_to_end", parts)


register(Experiment(
    name="end_to_end",
    title="End-to-end latency",
    question="At which offered rate is end-to-end p99 latency lowest?",
    measure=("latency_e2e_p99_ms", "lowest"),
    order=80,
    params={
        **common("record_size", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "rates": Param(float, "producer rates (records/s) while the consumer reads", many=True, minimum=1),
        "duration_s": Param(float, "seconds of load per point", minimum=0.1),
        "round_trips": Param(int, "records sent one at a time by Kafka's EndToEndLatency (java client)", minimum=1),
    },
    profiles={
        # 5 s: the consumer joins about 2 s into the load here. With 2 s, it read for 0.2 s, under the 1 s a rate
        # needs, and calibration ran the point again for 21 s (the whole-study test, 2026-11-28); with 5 s it once
        # read for 0.84 s (its join 4 s in, the host busy) and ran again for 21 s: 8 s leave room.
        "smoke": {"clients": ["python", "java"], "rates": [2_000], "duration_s": 8.0, "round_trips": 200},
        "quick": {"rates": [1_000, 10_000, 40_000], "duration_s": 6.0, "round_trips": 2_000, "clients": ["python", "java"]},
        # S4's producer and consumer at once, 100-byte records, 6 partitions.
        "seed": {"rates": [100_000, 500_000, 1_000_000], "duration_s": 60.0, "round_trips": 10_000, "record_size": 100,
                 "partitions": 6},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(Panel("latency", "param.rate", y, log_x=True) for y in ("latency_e2e_p50_ms", "latency_e2e_p99_ms")),
))

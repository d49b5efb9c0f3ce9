"""Producer batch.size x linger.ms x rate cap: S1.1's capped sweep, and the same uncapped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.study.experiment import Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [
        point(
            f"batch.size={size} linger.ms={linger} throughput={cap:g}",
            workload(s, {"batch.size": size, "linger.ms": linger}, rate=cap),
        )
        for cap in s["throughputs"]
        for linger in s["linger_ms"]
        for size in s["batch_sizes"]
    ]


def analyze(results: pd.DataFrame) -> Finding:
    """Best batch.size and linger.ms unthrottled, and whether S1.1's cap hides the effect."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    producer = results[results["role"] == "producer"]
    parts = []
    for client in findings.clients(producer):
        mine = producer[producer["param.client"] == client].assign(
            setting=lambda t: "batch.size=" + t["param.batch.size"].astype(str) + " B, linger.ms=" + t["param.linger.ms"].astype(str))
        free = mine[mine["param.rate"] == -1]
        if not free.empty:
            ranked = findings.ranked(free, "setting", "records_per_s", higher_is_better=True)
            smallest = free[free["param.batch.size"] == free["param.batch.size"].min()]
            best, best_small = ranked.iloc[0], findings.ranked(smallest, "setting", "records_per_s", True).iloc[0]
            text = (
                f"Unthrottled, the {client} producer was fastest at {best['setting']}: {findings.interval(best)}, "
                f"x{best['median'] / best_small['median']:.1f} the best at the smallest batch.size "
                f"({best_small['setting']})."
            )
            versus = findings.top_two(free, "setting", "records_per_s", ranked)
            text += f" Against the runner-up, {versus.sentence()}." if versus else ""
            parts.append((text, ranked.assign(client=client, rate="unthrottled")))
        for rate, at_rate in mine[mine["param.rate"] > 0].groupby("param.rate"):
            summary = findings.ranked(at_rate, "setting", "records_per_s", higher_is_better=True)
            at_cap = summary[summary["median"] >= 0.95 * rate]
            text = (f"Capped at {rate:,.0f} records/s (as S1.1 did), {len(at_cap)} of {len(summary)} {client} settings "
                    f"reached the cap within 5%" + (": the cap hides what batch.size does above them." if len(at_cap) else "."))
            parts.append((text, summary.assign(client=client, rate=f"{rate:,.0f}")))
    return findings.tabled("batch", parts)


register(Experiment(
    name="batch",
    title="Producer batch.size and linger.ms",
    question="Which batch.size and linger.ms write fastest, unthrottled?",
    order=10,
    params={
        **common("records", "record_size", "partitions", "replication_factor", "acks"),
        "batch_sizes": Param(int, "producer batch.size grid (bytes)", many=True, minimum=1),
        "linger_ms": Param(int, "producer linger.ms grid", many=True, minimum=0),
        "throughputs": Param(float, "producer rate caps (records/s); -1: unthrottled", many=True, minimum=1, unthrottled=True),
    },
    profiles={
        "smoke": {"batch_sizes": [8192, 131072], "linger_ms": [5], "throughputs": [-1, 100_000]},  # paced: 2 s
        "quick": {"batch_sizes": [4096, 16384, 65536, 262144], "linger_ms": [0, 10], "throughputs": [-1, 30_000],
                  "records": 100_000},
        # S1.1: 1M records, capped at 30,000/s as published and uncapped; Kafka 2.3 defaults (acks 1, linger 0).
        "seed": {"batch_sizes": [5000, 10000, 20000, 40000, 60000, 80000], "linger_ms": [0],
                 "throughputs": [30_000, -1], "records": 1_000_000},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel("producer", "param.batch.size", y, ("param.client", "param.rate", "param.linger.ms"), log_x=True)
        for y in ("records_per_s", "latency_ack_p99_ms")
    ),
))

"""compression.type, producing and consuming compressible records (S3, S5): ranked by throughput, ratio, latency, CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kperf.results import with_derived
from kperf.study.experiment import CODECS, PAYLOADS, Experiment, Panel, Param, Point, Settings, common, point, register, workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd


def grid(s: Settings) -> list[Point]:
    return [
        point(
            f"compression.type={codec}",
            workload(s, {"compression.type": codec}, payload=s["payload"], consumers=1),
            payload=s["payload"],
        )
        for codec in s["codecs"]
    ]


METRICS = (  # (role, column, what, higher is better)
    ("producer", "records_per_s", "producer records/s", True),
    ("consumer", "records_per_s", "consumer records/s", True),
    ("producer", "compression_ratio", "compression ratio", True),
    ("producer", "latency_ack_p99_ms", "producer p99 latency (ms)", False),
    ("producer", "res.client_cpu_pct", "producer CPU %", False),
)


def analyze(results: pd.DataFrame) -> Finding:
    """Codecs ranked by throughput, compression ratio, latency and CPU, with a test between the top two."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings

    derived = with_derived(results)
    parts = []
    for role, column, what, higher in METRICS:
        rows = derived[derived["role"] == role]
        if column not in rows or rows[column].isna().all():
            continue
        for client in findings.clients(rows):
            parts.append(findings.ranking(rows[rows["param.client"] == client], "param.compression.type", column, what, higher, client))
    return findings.tabled("codecs", parts)


register(Experiment(
    name="codecs",
    title="Compression codecs",
    question="Which compression codec writes fastest?",
    order=50,
    params={
        **common("records", "record_size", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "codecs": Param(str, "compression.type grid", many=True, choices=CODECS),
        "payload": Param(str, "random (incompressible) or text (JSON-like, compressible)", choices=PAYLOADS),
    },
    profiles={
        # Consumers read 100-byte text records at 0.7 to 1.7 million a second here: the profile's 200,000 ran too
        # briefly for a rate, and each point was measured again once or twice (kperf.study.calibration; its codecs
        # took 84 s of the smoke study of 2026-11-28, the stock tools' JVMs starting each time). 1.5 million give a
        # consumer 1.5 s or more at the 0.8-1.0 million a second the whole-study test's read (2026-12-02), where 2
        # million cost its producers 5-10 s a point.
        "smoke": {"clients": ["python", "java"], "codecs": ["none", "lz4"], "payload": "text", "records": 1_500_000},
        # The profile's 150,000 records: its consumers read them in about half a second, five tenth-second windows.
        "quick": {"codecs": list(CODECS), "payload": "text"},
        # S3: 1 KB records, one single-partition topic per codec; 60M records each.
        "seed": {"codecs": list(CODECS), "payload": "text", "record_size": 1024, "records": 60_000_000},
    },
    grid=grid,
    analyze=analyze,
    panels=tuple(
        Panel(role, "param.compression.type", y, categorical=True)
        for role, y in (
            ("producer", "records_per_s"),
            ("consumer", "records_per_s"),
            ("producer", "compression_ratio"),
            ("producer", "latency_ack_p99_ms"),
            ("producer", "res.client_cpu_pct"),
            ("producer", "res.broker_cpu_pct"),
        )
    ),
))

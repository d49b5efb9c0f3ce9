"""The experiments: each turns its checked settings into a grid of named points.

A point is one workload (see :mod:`kperf.workloads`) with the parameters it is
recorded under: Kafka's names for client and topic settings (``batch.size``,
``compression.type``), kperf's own for the rest (``records``, ``producers``).
The grids follow the published studies (README, "Published studies"): one
thing varies per experiment, everything else stays at the profile's values.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kperf.errors import KperfError
from kperf.load import Fault, Workload
from kperf.results import MIB

if TYPE_CHECKING:
    from kperf.target import Target

Settings = Mapping[str, Any]
GIB = 2**30


@dataclass(frozen=True)
class Point:
    """One grid point: a stable name (unique in its experiment), its recorded parameters, its load."""

    name: str
    params: Mapping[str, Any]
    workload: Workload


def _workload(s: Settings, producer: Mapping[str, Any] | None = None, **varied: Any) -> Workload:
    """The experiment's fixed load from its settings, with ``varied`` fields and ``producer`` client settings
    (Kafka names) on top of the fixed ``batch.size``, ``linger.ms`` and ``acks``."""
    fixed_producer = {"batch.size": s.get("batch_size"), "linger.ms": s.get("linger_ms"), "acks": s.get("acks")}
    config = {k: v for k, v in {**fixed_producer, **(producer or {})}.items() if v is not None}
    fields = {
        "record_size": s.get("record_size"),
        "records": s.get("records"),
        "partitions": s.get("partitions"),
        "replication_factor": s.get("replication_factor"),
    }
    return Workload(**{**{k: v for k, v in fields.items() if v is not None}, **varied}, producer_config=config)


def _point(name: str, workload: Workload, **params: Any) -> Point:
    """A point recorded with its workload's shape and client settings, plus ``params``."""
    recorded = {
        "records": workload.records,
        "record_size": workload.record_size,
        "rate": workload.rate,
        "partitions": workload.partitions,
        "replication_factor": workload.replication_factor,
        "producers": workload.producers,
        "consumers": workload.consumers,
        **workload.producer_config,
        **workload.topic_config,
        **params,
    }
    return Point(name, recorded, workload)


def _paced_records(s: Settings, rate: float) -> int:
    return max(1, round(rate * s["duration_s"]))


def batch(s: Settings) -> list[Point]:
    """batch.size x linger.ms x rate cap: S1.1's capped sweep and the same uncapped."""
    return [
        _point(
            f"batch.size={size} linger.ms={linger} throughput={cap:g}",
            _workload(s, {"batch.size": size, "linger.ms": linger}, rate=cap),
        )
        for cap in s["throughputs"]
        for linger in s["linger_ms"]
        for size in s["batch_sizes"]
    ]


def throughput(s: Settings) -> list[Point]:
    """Offered load (a paced producer) from well below to past saturation (S1.2)."""
    return [
        _point(f"rate={rate:g}", _workload(s, records=_paced_records(s, rate), rate=rate), duration_s=s["duration_s"])
        for rate in s["rates"]
    ]


def partitions(s: Settings) -> list[Point]:
    """Partition count (S1.3, S4), with one or more producers."""
    return [
        _point(f"partitions={count}", _workload(s, partitions=count, rate=s["rate"], producers=s["producers"]))
        for count in s["partition_counts"]
    ]


def threads(s: Settings) -> list[Point]:
    """Producer processes 1..P (S1.4), then consumer processes 1..C of one group reading a filled topic (S1.5)."""
    return [_point(f"producers={p}", _workload(s, producers=p)) for p in s["producer_counts"]] + [
        _point(f"consumers={c}", _workload(s, consumers=c, measure_producer=False)) for c in s["consumer_counts"]
    ]


def codecs(s: Settings) -> list[Point]:
    """compression.type, producing and consuming compressible records (S3, S5)."""
    return [
        _point(
            f"compression.type={codec}",
            _workload(s, {"compression.type": codec}, payload=s["payload"], consumers=1),
            payload=s["payload"],
        )
        for codec in s["codecs"]
    ]


def replication(s: Settings) -> list[Point]:
    """Replication factor x acks, with min.insync.replicas (S4, Kreps' sync and async replication)."""
    return [
        _point(
            f"replication.factor={rf} acks={acks}",
            _workload(
                s, {"acks": acks}, replication_factor=rf,
                topic_config={"min.insync.replicas": str(min(s["min_insync_replicas"], rf))},
            ),
        )
        for rf in s["replication_factors"]
        for acks in s["acks_values"]
    ]


def message_size(s: Settings) -> list[Point]:
    """Record size (S2, S4): fewer records for big sizes, so each point moves at most max_mib."""
    return [
        _point(
            f"record_size={size}",
            _workload(s, record_size=size, records=max(1, min(s["records"], int(s["max_mib"] * MIB // size))),
                      consumers=1),
        )
        for size in s["record_sizes"]
    ]


def end_to_end(s: Settings) -> list[Point]:
    """A paced producer and a consumer at once: produce-to-consume latency against load (S4, Kreps)."""
    return [
        _point(
            f"rate={rate:g}",
            _workload(s, records=_paced_records(s, rate), rate=rate, consumers=1, concurrent=True,
                      round_trips=s["round_trips"]),
            duration_s=s["duration_s"],
            round_trips=s["round_trips"],
        )
        for rate in s["rates"]
    ]


def faults(s: Settings) -> list[Point]:
    """A steady producer while the leader of partition 0 is killed and restarted, per acks (kperf's own)."""
    fault = Fault(s["kill_at_s"], s["restart_at_s"])
    return [
        _point(
            f"acks={acks}",
            _workload(
                s, {"acks": acks, **({"enable.idempotence": True} if acks == "all" else {})},
                records=_paced_records(s, s["rate"]), rate=s["rate"], fault=fault,
                topic_config={"min.insync.replicas": str(min(s["min_insync_replicas"], s["replication_factor"]))},
            ),
            duration_s=s["duration_s"], kill_at_s=fault.kill_at_s, restart_at_s=fault.restart_at_s,
        )
        for acks in s["acks_values"]
    ]


GRIDS: dict[str, Callable[[Settings], list[Point]]] = {
    "batch": batch,
    "throughput": throughput,
    "partitions": partitions,
    "threads": threads,
    "codecs": codecs,
    "replication": replication,
    "message_size": message_size,
    "end_to_end": end_to_end,
    "faults": faults,
}


def points(experiment: str, settings: Settings) -> list[Point]:
    return GRIDS[experiment](settings)


def validate(experiment: str, settings: Settings, target: Target) -> None:
    """What can only be checked against the cluster or the client library, before any load: replication
    factors within the live broker count and every client setting accepted by librdkafka (``check``),
    room on the brokers' disk when kperf knows it (its own cluster), and for faults, brokers this host
    can kill and restart."""
    check(experiment, settings, target.brokers)
    if target.local is not None:
        check_disk(experiment, settings, target.local.directory)
    if experiment == "faults":
        from kperf.faults import broker_ports, find_broker  # the drivers: only when checking against a cluster

        for node_id, port in broker_ports(target.bootstrap):
            find_broker(node_id, port)


def point_bytes(point: Point) -> int:
    """What one point writes to the brokers' disks at most: its records, every replica (compression only saves)."""
    w = point.workload
    return w.records * w.record_size * w.replication_factor


def check_disk(experiment: str, settings: Settings, directory: Path) -> None:
    """Refuse a grid whose largest point would not fit the local brokers' disk (at ``directory``).

    Twice the largest point is asked for: a deleted topic's files stay on disk for
    ``log.segment.delete.delay.ms`` (a minute) after the point that wrote them."""
    largest = max(points(experiment, settings), key=point_bytes)
    needed, free = 2 * point_bytes(largest), shutil.disk_usage(directory).free
    if needed > free:
        raise KperfError(
            f"experiment {experiment!r} needs about {needed / GIB:,.1f} GiB free on the brokers' disk ({directory}): "
            f"its largest point, {largest.name}, writes {point_bytes(largest) / GIB:,.1f} GiB, and a deleted topic "
            f"lingers a minute; {free / GIB:,.1f} GiB are free"
        )


def check(experiment: str, settings: Settings, brokers: int) -> None:
    """The checks needing only the live broker count and the client library."""
    for name in ("replication_factor", "replication_factors"):
        values = settings.get(name)
        highest = max(values) if isinstance(values, list) else values
        if highest is not None and highest > brokers:
            raise KperfError(
                f"parameter {name!r} of experiment {experiment!r}: {highest} is above the {brokers} live broker(s)"
            )
    from kperf import clients  # librdkafka: only when checking settings, never for a plan

    configs = {tuple(sorted(p.workload.producer_config.items())) for p in points(experiment, settings)}
    for config in configs:
        clients.check_config(dict(config), role="producer")

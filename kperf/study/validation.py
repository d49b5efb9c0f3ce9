"""What can only be checked against the cluster, the client library or the drivers, before any load starts."""

from __future__ import annotations

import shutil
from pathlib import Path

from kperf import drivers
from kperf.drivers import fault_kinds, group_changes
from kperf.drivers.point import check_point
from kperf.errors import KperfError
from kperf.kafka import clients, features
from kperf.kafka.target import Target
from kperf.study import experiment
from kperf.study.experiment import Point, Settings

GIB = 2**30


def validate(name: str, settings: Settings, target: Target) -> None:
    """Replication factors within the live broker count, every point runnable by every client's driver
    (librdkafka accepts its settings), what its points need answered by the cluster (kafka.features),
    room on the brokers' disk when kperf knows it (its own cluster), and for points with a fault, brokers it can
    reach (kperf.drivers.fault_kinds.require_reachable)."""
    check(name, settings, target.brokers)
    points = experiment.get(name).points(settings)
    features.require(target.bootstrap, needs(points, settings["clients"]))
    for p in points:  # a level a point measures at, which it sets (kperf.kafka.feature_levels)
        features.require_settable(target.bootstrap, p.workload.features)
    if target.local is not None:
        check_disk(name, settings, target.local.directory)
    fault_kinds.require_reachable([p.workload.fault for p in points if p.workload.fault is not None], target.bootstrap)
    for change in {p.workload.group_change for p in points if p.workload.group_change is not None}:
        group_changes.check_timeout(target.bootstrap, change)  # a kill needs more than the cluster's session time-out


def check(name: str, settings: Settings, brokers: int) -> None:
    """The checks needing only the live broker count, the client library and the drivers."""
    for key in ("replication_factor", "replication_factors"):
        values = settings.get(key)
        highest = max(values) if isinstance(values, list) else values
        if highest is not None and highest > brokers:
            raise KperfError(f"parameter {key!r} of experiment {name!r}: {highest} is above the {brokers} live broker(s)")
    check_points(name, settings)
    for client in settings["clients"]:
        drivers.get(client).check_hosts()


def check_points(name: str, settings: Settings) -> None:
    """What needs no cluster: every point runnable by every client's driver (the window within the point, ...),
    and its producer settings accepted by librdkafka. ``kperf study`` applies them before connecting, and
    ``--plan`` too."""
    points = experiment.get(name).points(settings)
    for client in settings["clients"]:
        driver = drivers.get(client)
        for point in (p for p in points if p.runs_on(client)):
            try:
                check_point(point.workload, driver, "127.0.0.1:9092")  # the specs
            except KperfError as exc:
                raise KperfError(f"experiment {name!r}, point {point.name} ({client}): {exc}") from None
    # The Java client checks its own settings only when a tool starts: librdkafka judges them all up front.
    for config in {tuple(sorted(p.workload.producer_config.items())) for p in points}:
        clients.check_config(dict(config), role="producer")


def needs(points: list[Point], clients: list[str]) -> list[features.Need]:
    """What the points ask of the cluster with each client: their producers' settings (a codec, idempotence,
    transactions), a consumer group, a share group, a read-process-write processor; their topics primed."""
    wanted = [n for p in points for c in clients
              for n in features.for_producer(p.workload.producer_config, c == "java", p.workload.transactions is not None)]
    for p in points:  # an end-to-end point's reader too; a group protocol as its consumers ask (the rebalance points)
        if (p.workload.consumers and p.workload.share is None) or p.workload.concurrent:
            wanted += features.for_consumer(p.workload.consumer_config)
    if any(p.workload.consumers and p.workload.share is not None for p in points):
        wanted += features.for_consumer({}, share=True)
    if any(p.workload.processed is not None for p in points):  # a processor: transactions committing its offsets
        wanted += [*features.TRANSACTIONS, *features.OFFSETS_IN_TRANSACTIONS]
    wanted += features.PRIMED  # every point's topic (kperf.drivers.point); last: what a client needs is told first
    return list(dict.fromkeys(wanted))


def point_bytes(point: Point) -> int:
    """What one point writes to the brokers' disks at most: its records, every replica (compression only saves), twice
    when a processor copies them to a second topic (read-process-write)."""
    w = point.workload
    return w.records * w.record_size * w.replication_factor * (2 if w.processed is not None else 1)


def check_disk(name: str, settings: Settings, directory: Path) -> None:
    """Refuse a grid whose largest point would not fit the local brokers' disk (at ``directory``).

    Twice the largest point is asked for: a deleted topic's files stay on disk for
    ``log.segment.delete.delay.ms`` (a minute) after the point that wrote them."""
    largest = max(experiment.get(name).points(settings), key=point_bytes)
    needed, free = 2 * point_bytes(largest), shutil.disk_usage(directory).free
    if needed > free:
        raise KperfError(
            f"experiment {name!r} needs about {needed / GIB:,.1f} GiB free on the brokers' disk ({directory}): "
            f"its largest point, {largest.name}, writes {point_bytes(largest) / GIB:,.1f} GiB, and a deleted topic "
            f"lingers a minute; {free / GIB:,.1f} GiB are free"
        )

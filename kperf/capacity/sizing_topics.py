"""A capacity workload as :mod:`kperf.sizing` sizes it: each topic's peak, records, layout, groups, codec and retention."""

from __future__ import annotations

from kperf.capacity.workload import CapacityWorkload
from kperf.sizing.costs import NO_CODEC
from kperf.sizing.needs import Topic


def topics(workload: CapacityWorkload) -> tuple[Topic, ...]:
    """The workload's streams as plan topics (a share group reads every record as a consumer group does)."""
    return tuple(Topic(
        name=stream.name, records_per_s=stream.rate, record_bytes=stream.mean_record_size,
        replication_factor=stream.replication_factor, partitions=stream.partitions, groups=len(stream.groups),
        codec=str(stream.producer_config.get("compression.type", NO_CODEC)), daily_bytes=stream.daily_bytes,
        retention_hours=stream.retention_hours,
    ) for stream in workload.streams)

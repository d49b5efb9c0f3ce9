"""Consumer groups as the cluster sees them: a new group's name, and waiting, within a bound, until groups have formed.

A producer whose load is to be read as it is sent (a capacity trial) waits here
before its clock starts, so that a group that forms slowly (a Kafka-API system,
a busy coordinator, a large group.initial.rebalance.delay.ms) delays the trial
instead of passing for end-to-end latency or lag.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from confluent_kafka import ConsumerGroupState, KafkaException
from confluent_kafka.admin import AdminClient

from kperf.errors import MeasurementFailed
from kperf.kafka import clients

POLL_S = 0.1  # how often the groups are asked for
REQUEST_TIMEOUT_S = 5.0
NOT_FORMED = "consumer group did not form"  # the MeasurementFailed cause, as the consumer's own


def fresh_name(label: str = "") -> str:
    """A group of kperf's own that no one used before: it holds no committed offset, so it reads from where kperf
    says (a consumer group: earliest; a share group: the start kperf sets on it)."""
    return f"kperf-{label + '-' if label else ''}{uuid.uuid4().hex[:12]}"


def formed(admin: AdminClient, groups: Sequence[str]) -> bool:
    """Whether every group in ``groups`` is stable with members (its partitions assigned)."""
    found = admin.describe_consumer_groups(list(groups), request_timeout=REQUEST_TIMEOUT_S)
    try:
        described = [future.result() for future in found.values()]
    except KafkaException:  # not known yet (no member has reached its coordinator)
        return False
    return all(d.state == ConsumerGroupState.STABLE and d.members for d in described)


def wait_formed(bootstrap: str, groups: Sequence[str], timeout_s: float) -> None:
    """Return once every group in ``groups`` has formed; fail the unit in one line after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    admin = clients.admin(bootstrap)
    while not formed(admin, groups):
        if time.monotonic() >= deadline:
            raise MeasurementFailed(f"consumer group {', '.join(groups)} did not form within {timeout_s:g} s on {bootstrap} "
                                    f"(raise join_timeout_s if the cluster forms groups slowly)", NOT_FORMED, timed_out=True)
        time.sleep(POLL_S)

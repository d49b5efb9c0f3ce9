"""Topics made for one measured point and removed after it, so disk use stays bounded."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

from confluent_kafka import OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import ConfigResource, NewTopic, ResourceType

from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import clients

TIMEOUT_S = 30.0
ANSWER_MARGIN_S = 5.0  # a client's own wait past the time-out it gave the broker, so the broker's answer comes first
PROPAGATION_S = 5.0  # brokers learn of a new topic from the controller one by one, not at once


def create(
    bootstrap: str,
    name: str,
    partitions: int,
    replication_factor: int,
    config: Mapping[str, str] | None = None,
) -> None:
    """Create ``name`` and wait until every partition has a leader."""
    admin = clients.admin(bootstrap)
    live = len(admin.list_topics(timeout=TIMEOUT_S).brokers)
    if partitions < 1:
        raise KperfError(f"partitions must be at least 1, got {partitions}")
    if not 1 <= replication_factor <= live:
        raise KperfError(f"replication factor {replication_factor} needs 1 to {live} live brokers ({bootstrap} has {live})")
    topic = NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=dict(config or {}))
    try:
        admin.create_topics([topic], operation_timeout=TIMEOUT_S)[name].result(timeout=TIMEOUT_S)
    except KafkaException as exc:
        raise KperfError(f"could not create topic {name}: {exc.args[0].str()}") from None
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic=name, timeout=TIMEOUT_S).topics.get(name)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions:
            if all(p.leader >= 0 for p in meta.partitions.values()):
                return
        time.sleep(0.05)
    raise MeasurementFailed(f"topic {name} has partitions without a leader after {TIMEOUT_S:.0f} s",
                            "partitions without a leader", timed_out=True)


def _prime(bootstrap: str, names: Sequence[str]) -> None:
    """Write one record to each partition of the fresh topics ``names`` with acks=all, then delete them: every
    follower then fetches every partition before the load starts, and the topics are empty again (their log start
    offset 1). A fresh topic's first acks=all writes to a partition wait for its followers to start fetching it:
    S1's paced producer (15 partitions, rf 3, 2,604 records/s, 8 s) on a fresh topic of a warm 3-broker cluster had a
    p99 of 215 to 1,195 ms in six runs, its first seconds' windows up to 1.3 s, and 13 to 24 ms in six runs on
    primed ones (2026-11-28), so an unprimed trial measured the topic's creation, not the load.

    All of them at once: each step waits on the followers (a fetch's wait, 0.5 s by Kafka's default, for the
    deletion), so priming a topic took about 1 s on a warm local 3-broker cluster (rf 3), and two took no longer."""
    every = [TopicPartition(name, p, OFFSET_END) for name in names
             for p in sorted(clients.metadata_with(bootstrap, name).topics[name].partitions)]
    failed: list[KafkaError] = []
    # A record not acknowledged within TIMEOUT_S gets its delivery report then, carrying the broker's refusal.
    producer = clients.producer(bootstrap, {"acks": "all", "linger.ms": 0, "message.timeout.ms": int(TIMEOUT_S * 1000)})
    for tp in every:
        producer.produce(tp.topic, b"", partition=tp.partition,
                         on_delivery=lambda err, _msg: failed.append(err) if err is not None else None)
    name = ("topic " if len(names) == 1 else "topics ") + ", ".join(names)
    if producer.flush(TIMEOUT_S + ANSWER_MARGIN_S) or failed:
        _unprimed(name, failed[0] if failed else None,
                  f"a record to each partition was not acknowledged by all its replicas within {TIMEOUT_S:.0f} s")
    admin = clients.admin(bootstrap)  # held until the results are in: a collected client cancels them
    deleting = admin.delete_records(every, operation_timeout=TIMEOUT_S, request_timeout=TIMEOUT_S + ANSWER_MARGIN_S)
    try:
        for future in deleting.values():
            future.result(timeout=TIMEOUT_S + 2 * ANSWER_MARGIN_S)
    except KafkaException as exc:
        _unprimed(name, exc.args[0], "the priming records were not deleted")
    except FutureTimeout:
        _unprimed(name, None, f"the priming records were not deleted within {TIMEOUT_S:.0f} s")


# The broker's refusals that only the user can lift, and what they need: an error naming it. Any other (a time-out,
# a leader moving) fails the measurement, which is tried again.
_COMPACTED = "kperf's topics need cleanup.policy=delete: a compacted topic takes no record without a key and deletes none"
_RIGHTS = "kperf needs the right to write to and delete records of the topics it creates"
REFUSALS = {KafkaError.POLICY_VIOLATION: _COMPACTED, KafkaError.INVALID_RECORD: _COMPACTED,
            KafkaError.TOPIC_AUTHORIZATION_FAILED: _RIGHTS, KafkaError.CLUSTER_AUTHORIZATION_FAILED: _RIGHTS}


def _unprimed(name: str, error: KafkaError | None, what: str) -> NoReturn:
    """Priming ``name`` ("topic t" or "topics t, u") failed with the broker's ``error`` (None: no answer in time)."""
    if error is not None and (need := REFUSALS.get(error.code())) is not None:
        raise KperfError(f"could not prime {name}: {error.str()}; {need}")
    raise MeasurementFailed(f"{name}: {what} ({'no answer' if error is None else error.str()})",
                            "topic not primed", timed_out=True)


def require(bootstrap: str, name: str, partitions: int | None = None) -> None:
    """Refuse to load a topic that is not there (brokers may auto-create it with other settings), or that has
    other than the ``partitions`` the caller's numbers assume."""
    deadline = time.monotonic() + PROPAGATION_S
    meta = clients.metadata(bootstrap).topics.get(name)
    while (meta is None or meta.error is not None) and time.monotonic() < deadline:
        time.sleep(0.1)  # a topic just created may not have reached the broker this client asked yet
        meta = clients.metadata(bootstrap).topics.get(name)
    if meta is None or meta.error is not None:
        raise KperfError(f"topic {name} does not exist at {bootstrap}: create it first")
    if partitions is not None and len(meta.partitions) != partitions:
        raise KperfError(f"topic {name} has {len(meta.partitions)} partition(s), not the {partitions} "
                         "--partitions asks for: use another topic or change --partitions")


def disk_bound(bootstrap: str, name: str, writes_bytes: float) -> float:
    """The most bytes a run writing ``writes_bytes`` of records to ``name`` leaves on the brokers' disks: every
    replica's copy, or at most what the topic's retention.bytes keeps, plus one open segment, per partition replica
    (no bound when retention.bytes is -1: Kafka's default)."""
    meta = clients.metadata_with(bootstrap, name).topics[name]  # its caller may have just made it
    replicas = sum(len(p.replicas) for p in meta.partitions.values())
    resource, admin = ConfigResource(ResourceType.TOPIC, name), clients.admin(bootstrap)  # admin held for the result
    try:
        found = admin.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result(timeout=TIMEOUT_S)
    except KafkaException as exc:
        raise KperfError(f"could not read topic {name}'s retention at {bootstrap}: {exc.args[0].str()}") from None
    retained = int(found["retention.bytes"].value)
    kept = math.inf if retained < 0 else replicas * (retained + int(found["segment.bytes"].value))
    return min(writes_bytes * replicas / len(meta.partitions), kept)


def held(bootstrap: str, name: str) -> int:
    """The records ``name`` holds now (:func:`holding`), or an error naming the topic. A partition's leader that has
    not yet learnt of a topic just made answers "unknown topic" (seen on a busy host): asked again until TIMEOUT_S."""
    reader = clients.consumer(bootstrap, {"group.id": "kperf-watermarks"})  # never joins: offsets only
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while True:
            try:
                return holding(reader, name, TIMEOUT_S)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART or time.monotonic() >= deadline:
                    raise KperfError(f"could not count the records of topic {name} at {bootstrap}: "
                                     f"{exc.args[0].str()}") from None
            time.sleep(0.1)
    finally:
        reader.close()


def holding(reader: Consumer, name: str, timeout: float) -> int:
    """The records ``name`` holds: each partition's high watermark less its log start, asked through ``reader`` (a
    consumer that never joins). KafkaException, or KeyError for a topic not in the answer, when it cannot tell."""
    partitions = reader.list_topics(name, timeout=timeout).topics[name].partitions
    return sum(high - low for low, high in (reader.get_watermark_offsets(TopicPartition(name, p), timeout=timeout)
                                            for p in partitions))


def delete(bootstrap: str, name: str) -> None:
    """Delete ``name``; a topic already gone is fine."""
    admin = clients.admin(bootstrap)  # held until the result is in: a collected client cancels it
    try:
        admin.delete_topics([name], operation_timeout=TIMEOUT_S)[name].result(timeout=TIMEOUT_S)
    except KafkaException as exc:
        if exc.args[0].name() != "UNKNOWN_TOPIC_OR_PART":
            raise


def delete_temporary(bootstrap: str, prefix: str) -> list[str]:
    """Delete the topics :func:`temporary` made with ``prefix`` that are still there (an interrupted run's)."""
    names = [t for t in clients.metadata(bootstrap).topics if t.startswith(f"kperf-{prefix}-")]
    for name in names:
        delete(bootstrap, name)
    return names


@dataclass(frozen=True)
class Layout:
    """A temporary topic's name prefix, partitions, replication factor and settings."""

    prefix: str
    partitions: int
    replication_factor: int
    config: Mapping[str, str] | None = None


@contextmanager
def temporaries(bootstrap: str, layouts: Sequence[Layout], primed: bool = False) -> Iterator[list[str]]:
    """Fresh uniquely named topics, one of each layout, for the block, deleted afterwards whatever happens.
    ``primed`` (:func:`_prime`, all at once) for a measured load: their records are deleted, so they are made with
    cleanup.policy=delete whatever the cluster's default (a compacted topic refuses DeleteRecords)."""
    names: list[str] = []
    try:
        for layout in layouts:
            name = f"kperf-{layout.prefix}-{uuid.uuid4().hex[:8]}"
            config = {"cleanup.policy": "delete", **(layout.config or {})} if primed else layout.config
            create(bootstrap, name, layout.partitions, layout.replication_factor, config)
            names.append(name)
        if primed and names:
            _prime(bootstrap, names)
        yield list(names)
    finally:
        _delete_each(bootstrap, names)


def _delete_each(bootstrap: str, names: Sequence[str]) -> None:
    """Delete every one of ``names``, the others too when one fails (that first error then raised)."""
    first: Exception | None = None
    for name in names:
        try:
            delete(bootstrap, name)
        except Exception as exc:  # noqa: BLE001 - the rest are still deleted; this one is raised after them
            first = first or exc
    if first is not None:
        raise first


@contextmanager
def temporary(
    bootstrap: str,
    prefix: str,
    partitions: int,
    replication_factor: int,
    config: Mapping[str, str] | None = None,
    primed: bool = False,
) -> Iterator[str]:
    """A fresh uniquely named topic for the block (:func:`temporaries`, one layout)."""
    with temporaries(bootstrap, [Layout(prefix, partitions, replication_factor, config)], primed) as (name,):
        yield name

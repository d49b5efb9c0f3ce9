"""confluent-kafka clients built one way: the settings every kperf client shares."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata

from kperf.errors import KperfError

# librdkafka prints connection failures to stderr by default; route them to
# logging so progress output and executed notebooks stay readable.
RDKAFKA_LOG = logging.getLogger("kperf.rdkafka")
UNREACHABLE = "127.0.0.1:1"  # for building a client only to validate its settings
REACH_TIMEOUT_S = 10.0


def client_config(bootstrap: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """librdkafka settings for ``bootstrap`` plus the caller's ``extra`` ones."""
    return {"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG, **(extra or {})}


def admin(bootstrap: str) -> AdminClient:
    """An admin client for topic management and cluster metadata."""
    return AdminClient(client_config(bootstrap))


def metadata(bootstrap: str, timeout: float = REACH_TIMEOUT_S) -> ClusterMetadata:
    """The cluster's brokers and topics; an error if no broker answers within ``timeout``."""
    try:
        return admin(bootstrap).list_topics(timeout=timeout)
    except KafkaException as exc:
        raise KperfError(f"cannot reach Kafka at {bootstrap} within {timeout:.0f} s ({exc.args[0].str()})") from None


def producer(bootstrap: str, extra: Mapping[str, Any] | None = None) -> Producer:
    """A producer with the caller's settings (batch.size, linger.ms, acks, ...)."""
    return Producer(client_config(bootstrap, extra))


def consumer(bootstrap: str, extra: Mapping[str, Any] | None = None) -> Consumer:
    """A consumer with the caller's settings (group.id, fetch.min.bytes, ...)."""
    return Consumer(client_config(bootstrap, extra))


def check_config(config: Mapping[str, Any], role: str) -> None:
    """Refuse settings librdkafka rejects (unknown name, bad value, unknown codec) before any load."""
    factory = producer if role == "producer" else consumer
    extra = dict(config) if role == "producer" else {"group.id": "kperf-check", **config}
    try:
        factory(UNREACHABLE, extra)
    except KafkaException as exc:
        raise KperfError(f"invalid {role} setting: {exc.args[0].str()}") from None


SECRET_MARKERS = ("password", "secret", "jaas", "token", "ssl.key")


def redact(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` fit to be written down: values of secret settings (passwords, keys, JAAS) masked."""
    return {k: "***" if any(m in k.lower() for m in SECRET_MARKERS) else v for k, v in config.items()}

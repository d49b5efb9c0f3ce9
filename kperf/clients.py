"""confluent-kafka clients built one way: the settings every kperf client shares."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

# librdkafka prints connection failures to stderr by default; route them to
# logging so progress output and executed notebooks stay readable.
RDKAFKA_LOG = logging.getLogger("kperf.rdkafka")


def client_config(bootstrap: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """librdkafka settings for ``bootstrap`` plus the caller's ``extra`` ones."""
    return {"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG, **(extra or {})}


def admin(bootstrap: str) -> AdminClient:
    """An admin client for topic management and cluster metadata."""
    return AdminClient(client_config(bootstrap))


def producer(bootstrap: str, extra: Mapping[str, Any] | None = None) -> Producer:
    """A producer with the caller's settings (batch.size, linger.ms, acks, ...)."""
    return Producer(client_config(bootstrap, extra))

"""confluent-kafka clients built one way: the settings every kperf client shares."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaException, Producer, ShareConsumer
from confluent_kafka.admin import AdminClient, ClusterMetadata

from kperf.errors import KperfError
from kperf.kafka import security
from kperf.kafka.security import Security

# librdkafka prints connection failures to stderr by default; route them to
# logging so progress output and executed notebooks stay readable.
RDKAFKA_LOG = logging.getLogger("kperf.rdkafka")
UNREACHABLE = "127.0.0.1:1"  # for building a client only to validate its settings
REACH_TIMEOUT_S = 10.0
# Signals whose Python handlers may raise (Ctrl-C's KeyboardInterrupt, a study's SIGTERM): held while a client is made.
HELD = (signal.SIGINT, signal.SIGTERM)
Client = TypeVar("Client")


def made(kind: Callable[[dict[str, Any]], Client], config: Mapping[str, Any]) -> Client:
    """``kind(config)``, a confluent-kafka client, with the :data:`HELD` signals' handlers held until it exists: an
    interrupt whose handler raises while confluent-kafka reads the settings comes out as "TypeError: expected
    configuration property name as type unicode string" (4 of 400 tries), hiding the Ctrl-C. Held, it is raised
    as itself once the client is made. Python runs handlers in the main thread alone, so only there is it held."""
    if threading.current_thread() is not threading.main_thread():
        return kind(dict(config))
    caught: list[int] = []
    handlers = {s: h for s in HELD if callable(h := signal.getsignal(s))}
    for number in handlers:
        signal.signal(number, lambda signum, _: caught.append(signum))
    try:
        return kind(dict(config))
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        for signum in caught:
            signal.raise_signal(signum)


def client_config(
    bootstrap: str, extra: Mapping[str, Any] | None = None, secured: Security | None = None
) -> dict[str, Any]:
    """librdkafka settings for ``bootstrap``: its security (``secured``, else this process's), then ``extra``."""
    connection = (secured or security.current()).librdkafka()
    return {"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG, **connection, **(extra or {})}


def admin(bootstrap: str, secured: Security | None = None) -> AdminClient:
    """An admin client for topic management and cluster metadata."""
    return made(AdminClient, client_config(bootstrap, secured=secured))


def metadata(bootstrap: str, timeout: float = REACH_TIMEOUT_S, secured: Security | None = None) -> ClusterMetadata:
    """The cluster's brokers and topics; an error if no broker answers within ``timeout``."""
    connection = secured or security.current()
    try:
        return admin(bootstrap, connection).list_topics(timeout=timeout)
    except KafkaException as exc:
        hint = (f"; if it is secured, give its client properties (--client-config or ${security.CONFIG_ENV})"
                if connection.protocol == "PLAINTEXT" else f" over {connection.protocol}")
        raise KperfError(f"cannot reach Kafka at {bootstrap} within {timeout:.0f} s ({exc.args[0].str()}){hint}") from None


def metadata_with(bootstrap: str, topic: str, timeout: float = REACH_TIMEOUT_S) -> ClusterMetadata:
    """The cluster's metadata once it lists ``topic`` with its partitions: a topic just created can be unknown for
    a moment to the broker that answers (each learns it from the controller in its own time); an error after
    ``timeout``."""
    deadline = time.monotonic() + timeout
    while (meta := metadata(bootstrap, max(0.1, deadline - time.monotonic()))).topics.get(topic) is None \
            or meta.topics[topic].error is not None or not meta.topics[topic].partitions:
        if time.monotonic() >= deadline:
            raise KperfError(f"topic {topic} is not in the metadata of the cluster at {bootstrap} after {timeout:.0f} s")
        time.sleep(0.1)
    return meta


def producer(bootstrap: str, extra: Mapping[str, Any] | None = None) -> Producer:
    """A producer with the caller's settings (batch.size, linger.ms, acks, ...)."""
    return made(Producer, client_config(bootstrap, extra))


def consumer(bootstrap: str, extra: Mapping[str, Any] | None = None) -> Consumer:
    """A consumer with the caller's settings (group.id, fetch.min.bytes, ...)."""
    return made(Consumer, client_config(bootstrap, extra))


def check_config(config: Mapping[str, Any], role: str) -> None:
    """Refuse settings librdkafka rejects (unknown name, bad value, unknown codec; for a share consumer, ``role``
    "share", also a consumer group's settings, which belong to its group) before any load."""
    security.refuse_in_parameters(config, role)
    extra = dict(config) if role == "producer" else {"group.id": "kperf-check", **config}
    try:
        if role == "share":
            made(ShareConsumer, client_config(UNREACHABLE, extra))
        else:
            (producer if role == "producer" else consumer)(UNREACHABLE, extra)
    except KafkaException as exc:
        raise KperfError(f"invalid {role} setting: {exc.args[0].str()}") from None
    except ValueError as exc:  # the share consumer's refusal of a consumer group's setting
        raise KperfError(f"invalid share consumer setting: {exc} (a share group's own settings: --group-setting)") from None


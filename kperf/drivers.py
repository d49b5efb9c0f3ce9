"""Load drivers: confluent-kafka clients that produce and measure.

The producer measures throughput from the first send to the last
acknowledgement, and per-record latency from send to acknowledgement (as
librdkafka reports it) into an HdrHistogram, whose memory stays bounded
whatever the record count. Delivery errors are counted by kind.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, Message
from hdrh.histogram import HdrHistogram

from kperf import clients
from kperf.errors import KperfError
from kperf.results import Measurement

# Latency range the histogram resolves: 1 us to 10 min, 3 significant digits.
HISTOGRAM_MAX_US = 600_000_000
POLL_EVERY = 1000  # serve delivery callbacks every N sends


def latency_summary(histogram: HdrHistogram) -> dict[str, float]:
    """avg, p50, p95, p99, p99.9 and max of a microsecond histogram, in ms."""
    if histogram.get_total_count() == 0:
        return {}
    at = histogram.get_value_at_percentile
    values_us = {
        "avg": histogram.get_mean_value(),
        "p50": at(50.0),
        "p95": at(95.0),
        "p99": at(99.0),
        "p999": at(99.9),
        "max": histogram.get_max_value(),
    }
    return {k: v / 1000.0 for k, v in values_us.items()}


def produce(
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    config: Mapping[str, Any] | None = None,
) -> Measurement:
    """Send ``records`` random (incompressible) payloads of ``record_size`` bytes, as fast as possible."""
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    if record_size < 1:
        raise KperfError(f"record size must be at least 1 byte, got {record_size}")
    producer = clients.producer(bootstrap, config)
    payload = os.urandom(record_size)
    histogram = HdrHistogram(1, HISTOGRAM_MAX_US, 3)
    errors: Counter[str] = Counter()
    acked = 0

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        nonlocal acked
        if err is not None:
            errors[err.name()] += 1
            return
        acked += 1
        histogram.record_value(max(1, int((msg.latency() or 0.0) * 1e6)))

    start = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, payload, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: let librdkafka drain it
                producer.poll(0.01)
        if i % POLL_EVERY == 0:
            producer.poll(0)
    remaining = producer.flush(60)
    seconds = time.perf_counter() - start
    if remaining:
        errors["NOT_DELIVERED_IN_TIME"] += remaining
    return Measurement(
        role="producer",
        client="python",
        records=acked,
        bytes=acked * record_size,
        seconds=seconds,
        latency_ms={"ack": latency_summary(histogram)},
        errors=dict(errors),
    )

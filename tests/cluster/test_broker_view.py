"""The brokers' own view on a real local cluster: the JMX exporter each broker carries answers during a run.

(A metrics URL that does not answer is refused in tests/unit/test_broker_metrics.py: it needs no cluster.)"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kperf.kafka import broker_metrics, clients, topics
from kperf.kafka.broker_metrics import BrokerMetrics, between, kafka_version
from tests.helpers import kperf, status

pytestmark = pytest.mark.cluster

RECORDS = 2_000


def test_the_exporters_scrape_returns_broker_request_metrics_during_a_run(tmp_path: Path) -> None:
    # Started detached, as `kperf cluster up` does: the endpoints are found later in its state file.
    up = kperf(tmp_path, "cluster", "up", "--brokers", "1")
    assert up.returncode == 0, up.stderr
    try:
        info = status(tmp_path)
        urls = [broker["metrics_url"] for broker in info["brokers"]]
        assert all(url.startswith("http://127.0.0.1:") for url in urls)
        metrics = BrokerMetrics(urls)
        assert kafka_version(metrics.check()) == info["kafka_version"]

        with topics.temporary(info["bootstrap"], "broker-metrics", 1, 1) as topic:
            before = metrics.scrape()
            producer = clients.producer(info["bootstrap"], {"acks": "all", "linger.ms": 0})
            for i in range(RECORDS):
                producer.produce(topic, b"x" * 100)
                if i % 100 == 99:
                    assert producer.flush(30) == 0  # many produce requests, not one batch
            assert producer.flush(30) == 0
            after = metrics.scrape()
    finally:
        down = kperf(tmp_path, "cluster", "down")
    assert down.returncode == 0, down.stderr

    produce_times = broker_metrics.REQUEST_TIME_COUNT.format(phase="totaltimems")
    assert after.total(produce_times, request="Produce") > before.total(produce_times, request="Produce")
    assert before.at < after.at  # each scrape dated while it was taken
    columns = between(before, after, seconds=1.0)  # the rates are per this nominal second: only growth is checked
    assert columns["broker.produce_requests"] >= RECORDS // 100
    assert columns["broker.bytes_in_mib_per_s"] * 2**20 >= RECORDS * 100
    assert columns["broker.messages_in_per_s"] >= RECORDS
    for part in ("total", "request_queue", "local", "remote", "response_queue", "response_send"):
        assert math.isfinite(columns[f"broker.produce_{part}_ms"]) and columns[f"broker.produce_{part}_ms"] >= 0
    assert 0 <= columns["broker.handler_idle_pct"] <= 100 and 0 <= columns["broker.network_idle_pct"] <= 100
    assert columns["broker.cpu_cores"] > 0  # the exporter's agent reports its JVM's CPU seconds
    # One broker replicates nothing, and says so: the meters are exported (NaN would mean they are not).
    assert columns["broker.replication_bytes_in_mib_per_s"] == 0 == columns["broker.replication_bytes_out_mib_per_s"]


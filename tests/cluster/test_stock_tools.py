"""kperf.drivers.stock_tools: Kafka's stock tools run on a real one-broker cluster.

(Saved tool output imported as Measurements needs no cluster: tests/unit/test_stock_tools_import.py.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kperf.drivers.stock_tools import STOPPED_SHORT, java_consume, java_end_to_end, java_produce
from kperf.errors import MeasurementFailed
from kperf.kafka import topics
from kperf.results import Measurement
from tests.helpers import local_cluster


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_cluster(1, tmp_path_factory.mktemp("tools") / "cluster") as cluster:
        yield cluster.bootstrap


@pytest.fixture(scope="module")
def produced(bootstrap: str) -> tuple[str, int]:
    """A topic holding 90 000 records of 100 bytes (the unthrottled and throttled runs)."""
    topics.create(bootstrap, "tools-perf", partitions=1, replication_factor=1)
    m = java_produce(bootstrap, "tools-perf", 50_000, 100)
    assert (m.role, m.client, m.records, m.bytes) == ("producer", "java", 50_000, 5_000_000)
    assert m.errors == {}
    assert m.series is not None and (sum(m.series.records), sum(m.series.bytes)) == (m.records, m.bytes)
    ack = m.latency_ms["ack"]
    assert 0 <= ack["p50"] <= ack["p99"] <= ack["max"]
    throttled = java_produce(bootstrap, "tools-perf", 40_000, 100, throughput=20_000)
    assert throttled.records == 40_000 and throttled.errors == {}
    # The stock tool's throttle, measured by the tool itself: never above the cap (a busy
    # machine may keep it below: CI once measured 14,981 records/s, so no lower bound).
    assert 0 < throttled.records_per_s <= 20_000 * 1.05
    return "tools-perf", 90_000


@pytest.mark.cluster
def test_java_produce_and_consume(bootstrap, produced):
    topic, records = produced
    m = java_consume(bootstrap, topic, records, config={"fetch.min.bytes": 1}, group="kperf-tools-test")
    assert (m.role, m.client) == ("consumer", "java")
    assert m.records >= records  # it reads whole batches
    assert m.bytes == pytest.approx(m.records * 100, abs=60)
    assert m.errors == {}
    assert {"rebalance_ms", "fetch_ms"} <= set(m.measures)
    assert m.seconds > 0


@pytest.mark.cluster
def test_java_producer_and_consumer_series_add_up(bootstrap):
    """A paced producer (8 s at 20 000 records/s) read as it writes: both runs' windows hold their records."""
    topics.create(bootstrap, "tools-series", partitions=1, replication_factor=1)
    consumed: list[Measurement] = []
    reader = threading.Thread(target=lambda: consumed.append(java_consume(bootstrap, "tools-series", 160_000)))
    reader.start()
    produced = java_produce(bootstrap, "tools-series", 160_000, 100, throughput=20_000)
    reader.join()
    for m in (produced, *consumed):
        assert m.series is not None, m.role
        assert sum(m.series.records) == m.records >= 160_000
        assert sum(m.series.bytes) == m.bytes
        # The series runs from the tool's start, the consumer's join included (its seconds run from the join).
        assert m.series.starts_s[-1] + m.series.seconds[-1] <= m.seconds + m.measures.get("rebalance_ms", 0) / 1000 + 1e-6
        assert "steady_records_per_s" in m.row()  # at least one whole window under load
    (m,) = consumed
    assert m.bytes == pytest.approx(m.records * 100, rel=1e-4)  # kperf.drivers.stock_tools_measurements.BYTES_PRECISION


@pytest.mark.cluster
def test_java_consume_short_topic_fails_its_unit(bootstrap, produced):
    topic, records = produced
    with pytest.raises(MeasurementFailed, match=rf"stopped after \d+ of the {records + 100_000} records asked of {topic}: "
                       rf"nothing more arrived within 15 s on {bootstrap} \(a join bound of 5 s") as caught:
        java_consume(bootstrap, topic, records + 100_000, join_timeout_s=5)
    assert (caught.value.cause, caught.value.timed_out) == (STOPPED_SHORT, True)


@pytest.mark.cluster
def test_java_end_to_end(bootstrap):
    topics.create(bootstrap, "tools-e2e", partitions=1, replication_factor=1)
    m = java_end_to_end(bootstrap, "tools-e2e", 500, 100)
    assert (m.role, m.client, m.records, m.bytes) == ("end-to-end", "java", 500, 50_000)
    e2e = m.latency_ms["e2e"]
    assert set(e2e) == {"avg", "p50", "p99", "p999"}
    # The tool floors each latency to whole ms, so a fast round trip shows 0;
    # its average is exact.
    assert e2e["avg"] > 0
    assert 0 <= e2e["p50"] <= e2e["p99"] <= e2e["p999"]
    assert m.seconds > 0


@pytest.mark.cluster
def test_java_produce_nobody_listening_counts_each_failed_send():
    # Each send waits max.block.ms for metadata, fails, and the tool prints the
    # exception and exits 0: the failures are counted, not raised.
    m = java_produce("127.0.0.1:1", "nowhere", 3, 100, config={"max.block.ms": 3000})
    assert m.records == 0
    assert m.errors == {"TimeoutException": 3}
    assert m.latency_ms == {}


@pytest.mark.cluster
def test_java_tool_failure_is_one_line(bootstrap):
    with pytest.raises(MeasurementFailed, match=r"e2e-latency failed \(exit code 1\): .*requires synchronous acknowledgement") as info:
        java_end_to_end(bootstrap, "tools-e2e", 10, 100, acks="0")
    assert "\n" not in str(info.value)
    assert (info.value.cause, info.value.timed_out) == ("e2e-latency failed", False)  # a failed unit, not tried again

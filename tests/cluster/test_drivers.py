"""The Python producer and consumer drivers against real Kafka, with each hot loop (the ``loop`` fixture): counts,
pacing, verification, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from kperf.drivers import latency
from kperf.drivers.consumer import consume
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.payloads import Payloads, identity_header
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import clients, topics
from kperf.kafka.cluster import LocalCluster
from kperf.results import Verification

pytestmark = pytest.mark.cluster


def test_produced_records_are_all_consumed_once(bootstrap: str, loop: str) -> None:
    with topics.temporary(bootstrap, "drv", 3, 3) as topic:
        sent = produce(ProducerSpec(bootstrap, topic, 200, records=20_000, warmup_records=500, config={"acks": "all"}, loop=loop))
        assert sent.records == 20_000 and sent.bytes == 20_000 * 200 and sent.errors == {}
        ack = sent.latency_ms["ack"]
        assert 0 < ack["p50"] <= ack["p99"] <= ack["max"]
        got = consume(ConsumerSpec(bootstrap, topic, records=20_500, idle_timeout_s=3, loop=loop))
    assert sent.loop == got.loop == loop  # each record says which loop measured it
    assert got.records == 20_500  # the warm-up records are in the topic too, sequence numbers 0..499
    assert got.verification == Verification(expected=20_500, missing=0, duplicated=0)
    assert got.measures["rebalance_ms"] > 0 and got.measures["fetches"] >= 1
    assert got.seconds >= got.measures["fetch_ms"] / 1000  # from the join, which comes before the first record


def test_two_producer_processes_and_two_consumers(bootstrap: str, loop: str) -> None:
    with topics.temporary(bootstrap, "drv", 4, 1) as topic:
        sent = produce(ProducerSpec(bootstrap, topic, 100, records=10_001, producers=2, loop=loop))
        assert sent.records == 10_001
        got = consume(ConsumerSpec(bootstrap, topic, consumers=2, idle_timeout_s=3, loop=loop))
    assert got.records == 10_001 and got.verification is not None and got.verification.ok
    for measured in (sent, got):  # the processes' windows merge without losing or adding a record
        assert measured.series is not None and sum(measured.series.records) == 10_001
        assert sum(measured.series.bytes) == measured.bytes


def test_paced_rate_never_exceeds_the_target_and_intended_latency_recorded(bootstrap: str, loop: str) -> None:
    with topics.temporary(bootstrap, "drv", 1, 1) as topic:
        sent = produce(ProducerSpec(bootstrap, topic, 100, records=12_000, rate=4_000, loop=loop))
    # The pacer's promise is the cap: a busy shared machine may fall short of 4,000/s
    # (CI once measured 2,060), which the intended-time latency below then shows.
    assert sent.records == 12_000 and 0 < sent.records_per_s <= 4_000 * 1.05
    assert sent.latency_ms["intended"]["p99"] >= sent.latency_ms["ack"]["p50"]
    assert sent.series is not None and sum(sent.series.records) == 12_000 and len(sent.series.records) >= 3
    # A window no record was acknowledged in (the first may last a few ms, to the next whole second) has no latency.
    # The run's maximum comes from its HDR histogram, which keeps SIGNIFICANT_DIGITS: within that of the windows'
    # (CI once saw 15.1246 ms in a window against the histogram's 15.127).
    assert sent.series.latency == "intended" and np.nanmax(sent.series.latency_max_ms) >= (
        sent.latency_ms["intended"]["max"] * (1 - 10 ** -latency.SIGNIFICANT_DIGITS))
    # The cap is the whole run's (above): a window may carry more than the rate when the pacer catches up after a
    # stall (CI saw a steady 4,300/s of windows after one), and a window's count is taken when the loop returns.
    steady = sent.steady  # three seconds of paced load: the windows under load have a steady rate
    assert steady["steady_records_per_s"] > 0 and steady["steady_windows"] >= 1


def test_verification_catches_a_skipped_and_a_repeated_sequence(bootstrap: str, loop: str) -> None:
    producer_id, payload = 7, b"x" * 10
    with topics.temporary(bootstrap, "drv", 1, 1) as topic:
        producer = clients.producer(bootstrap)
        for sequence in [*range(50), *range(51, 100), 7]:  # 50 skipped, 7 sent twice
            producer.produce(topic, payload, headers=identity_header(producer_id, sequence, time.time_ns()))
        assert producer.flush(30) == 0
        got = consume(ConsumerSpec(bootstrap, topic, idle_timeout_s=3, expected={producer_id: 100}, loop=loop))
    assert got.verification == Verification(expected=100, missing=1, duplicated=1)


def test_ledger_merge_counts_overlap_as_duplicates() -> None:
    one, two = SequenceLedger(), SequenceLedger()
    for s in range(10):
        one.add(1, s)
    for s in range(8, 20):
        two.add(1, s)
    one.merge(two)
    assert one.verification({1: 21}) == Verification(expected=21, missing=1, duplicated=2)


def test_delivery_errors_are_counted_when_the_cluster_goes_down(tmp_path: Path, loop: str) -> None:
    cluster = LocalCluster(1, directory=tmp_path / "cluster")
    cluster.start()
    try:
        bootstrap = cluster.bootstrap
        topics.create(bootstrap, "doomed", 1, 1)
        threading.Timer(1.0, cluster.stop).start()
        sent = produce(
            ProducerSpec(bootstrap, "doomed", 100, records=30_000, rate=5_000, config={"message.timeout.ms": 3000}, loop=loop)
        )
    finally:
        cluster.stop()
    assert sent.errors and sum(sent.errors.values()) + sent.records == 30_000
    assert sent.records < 30_000
    # The series has them too, in the windows they happened in: none in the first second, while the broker was up.
    assert sent.series is not None and sum(sent.series.errors) == sum(sent.errors.values())
    assert sent.series.errors[0] == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (dict(record_size=0), "record size must be at least 1 byte"),
        (dict(config={"compression.type": "lz5"}), 'invalid producer setting: Invalid value "lz5"'),
        (dict(payload="json"), "unknown payload kind 'json'"),
        (dict(rate=0), "target rate must be positive"),
        (dict(topic="no-such-topic"), "topic no-such-topic does not exist"),
        (dict(bootstrap="127.0.0.1:1"), "cannot reach Kafka at 127.0.0.1:1 within 10 s"),
    ],
)
def test_bad_producer_input_is_refused_before_any_load(bootstrap: str, spec: dict, message: str) -> None:
    with topics.temporary(bootstrap, "drv", 1, 1) as topic:
        with pytest.raises(KperfError, match=message):
            produce(ProducerSpec(**{"bootstrap": bootstrap, "topic": topic, "record_size": 100, "records": 10, **spec}))
        assert clients.metadata_with(bootstrap, topic).topics[topic].partitions[0].id == 0  # the refusal left it be
        # Nothing was sent: asked as kperf counts a topic, again while the leader has not yet learnt of a topic this
        # new (CI once saw "Unknown partition" asking it once, 2026-11-29).
        assert topics.held(bootstrap, topic) == 0


def test_text_payloads_compress_and_random_ones_do_not() -> None:
    import zlib

    text, random = Payloads("text", 1000), Payloads("random", 1000)
    text_batch = b"".join(text.next() for _ in range(100))
    random_batch = b"".join(random.next() for _ in range(100))
    assert len(zlib.compress(text_batch)) < 0.5 * len(text_batch)
    assert len(zlib.compress(random_batch)) > 0.99 * len(random_batch)


def test_end_to_end_latency_with_a_producer_running(bootstrap: str, loop: str) -> None:
    with topics.temporary(bootstrap, "drv", 1, 1) as topic:
        producing = threading.Thread(
            target=produce, args=(ProducerSpec(bootstrap, topic, 100, records=6_000, rate=2_000, loop=loop),)
        )
        producing.start()
        got = consume(ConsumerSpec(bootstrap, topic, records=6_000, end_to_end=True, loop=loop))
        producing.join()
    e2e = got.latency_ms["e2e"]
    assert got.records == 6_000 and got.verification is not None and got.verification.ok
    assert 0 < e2e["p50"] <= e2e["p99"] < 10_000  # from intended send time to consumption, on loopback
    assert got.series is not None and got.series.latency == "e2e" and sum(got.series.records) == 6_000
    assert any(p99 >= 0 for p99 in got.series.latency_p99_ms)  # the windows after the consumer joined

"""The two hot loops of the Python client held to one another, and to what a paused broker or a crash does, on a
real cluster: the same records bit for bit, the same counts and acknowledgements, latency recorded alike."""

from __future__ import annotations

import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest
from confluent_kafka import TopicPartition

from kperf.drivers import latency, loops, producer
from kperf.drivers.broker_process import find_broker, leader_port
from kperf.drivers.consumer import consume
from kperf.drivers.load_hosts.child import DIED
from kperf.drivers.payloads import Keys, Payloads, identities
from kperf.drivers.producer import produce, produce_one
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients, topics
from kperf.results import Verification
from tests.helpers import load_processes

pytestmark = pytest.mark.cluster

RATE = 2_000  # records/s: a pace either loop sustains on any machine that runs the suite
RECORDS = 6_000
PRODUCER = 7  # the producer id of a loop run in this process (it seeds the keys: both loops get the same)
WAIT_S = 60  # the longest a test waits for records to arrive or a process to appear
PRECISION = 0.002  # an HdrHistogram of three significant digits: a value read back within 0.1%, twice for safety


def test_both_loops_record_each_acknowledged_records_wait_from_its_intended_time(bootstrap: str) -> None:
    """Each loop paced, its acknowledgements tracked, then read back by the same loop: the same verified counts; the
    records meant for one schedule (record i at start + i / rate); and the intended-time latency it recorded is the
    distribution of its records' acknowledgement times less their intended send times, at least their send-time
    latency. That holds whether or not a loop kept its schedule on a busy machine, which it need not."""
    for loop in loops.LOOPS:
        with topics.temporary(bootstrap, "loops", 1, 1) as topic:
            spec = ProducerSpec(bootstrap, topic, 100, records=RECORDS, rate=RATE, loop=loop, track_acks=True)
            spec.check()
            report = produce_one(spec, producer_id=PRODUCER)
            ended = time.time()
            read = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, loop=loop))
        assert (report.loop, read.loop, report.acked, report.errors) == (loop, loop, RECORDS, {})
        assert read.verification == Verification(expected=RECORDS, missing=0, duplicated=0)
        acks = np.array(report.acks)  # sequence, partition, acknowledged at, intended at
        acks = acks[np.argsort(acks[:, 0])]
        assert np.allclose(np.diff(acks[:, 3]), 1 / RATE, rtol=0, atol=1e-6), loop
        waited_ms = (acks[:, 2] - acks[:, 3]) * 1000
        assert waited_ms.min() >= 0 and acks[:, 2].max() <= ended, loop
        intended, sent = (latency.summary(latency.merge([h])) for h in (report.intended_histogram, report.ack_histogram))
        # Within the histogram's precision (three significant digits), and a percentile either side of each for the
        # records whose two clock readings (the Python loop's) a busy machine held apart
        for stat, q in (("p50", 50), ("p99", 99)):
            low, high = np.percentile(waited_ms, [q - 1, min(q + 1, 100)])
            assert low * (1 - PRECISION) <= intended[stat] <= high * (1 + PRECISION), (loop, stat, intended, low, high)
            assert intended[stat] >= sent[stat] * (1 - PRECISION), (loop, stat, intended, sent)


def test_a_paused_broker_shows_in_the_intended_time_latency(bootstrap: str, loop: str) -> None:
    """A broker stopped (SIGSTOP) for a second under a paced producer: a record meant to be sent just after it
    stopped is acknowledged only after it resumed, so the intended-time latency's maximum is at least the pause,
    less one record's interval (and the histogram's 0.1%)."""
    with topics.temporary(bootstrap, "paused", 1, 1) as topic:
        broker = find_broker(*leader_port(bootstrap, topic)).process
        pause: list[float] = []
        over = threading.Event()  # the run ended: no pause after it

        def pause_once_sending() -> None:
            """Once the producer's records arrive (within a minute), stop the broker for a second."""
            watcher, until = clients.consumer(bootstrap, {"group.id": "kperf-watch"}), time.time() + 60
            while watcher.get_watermark_offsets(TopicPartition(topic, 0), timeout=5)[1] < RATE // 2:
                if over.wait(0.05) or time.time() > until:
                    return
            broker.send_signal(signal.SIGSTOP)
            stopped = time.time()  # (after the signal was sent, and before it is undone: the broker was stopped
            try:                   # all that time, so the pause measured is never longer than the real one)
                over.wait(1.0)  # the fault's length (the run lasts longer), not a synchronisation
            finally:  # a fault the test injects is always undone
                pause.append(time.time() - stopped)
                broker.send_signal(signal.SIGCONT)

        pausing = threading.Thread(target=pause_once_sending)
        pausing.start()
        try:
            sent = produce(ProducerSpec(bootstrap, topic, 100, records=4 * RATE, rate=RATE, loop=loop))
        finally:
            over.set()
            pausing.join()
    assert sent.records == 4 * RATE and sent.loop == loop
    assert pause, "the pause never happened: the run ended before it"
    assert sent.latency_ms["intended"]["max"] / 1000 >= (pause[0] - 2 / RATE) * 0.999


def test_a_send_the_client_refuses_fails_the_unit_naming_the_cause(bootstrap: str, loop: str) -> None:
    """A record larger than the client's message.max.bytes is refused by librdkafka at send time: the unit fails
    with its cause, in either loop, instead of recording a rate."""
    with topics.temporary(bootstrap, "refused", 1, 1) as topic:
        with pytest.raises(MeasurementFailed, match=f"cannot produce to {topic}: .*too large"):
            produce(ProducerSpec(bootstrap, topic, 20_000, records=10, config={"message.max.bytes": 10_000}, loop=loop))


@pytest.mark.parametrize("how", [{}, {"rate": RATE}, {"warmup_records": 1_000}], ids=["unthrottled", "paced", "warm-up"])
def test_a_producer_whose_brokers_take_nothing_fails_its_unit_naming_the_cause(
        bootstrap: str, loop: str, how: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The leader of a one-partition topic stopped (SIGSTOP) before a producer whose queue holds 100 records: the
    queue fills and stays full, and the unit fails naming the cause once kperf's bound has passed (shortened here;
    the loops used to retry until librdkafka's own message time-out, five minutes, again and again)."""
    monkeypatch.setattr(producer, "QUEUE_FULL_TIMEOUT_S", 1.0)
    with topics.temporary(bootstrap, "stalled", 1, 1) as topic:
        broker = find_broker(*leader_port(bootstrap, topic)).process
        spec = ProducerSpec(bootstrap, topic, 100, duration_s=WAIT_S, config={"queue.buffering.max.messages": 100},
                            loop=loop, **how)
        broker.send_signal(signal.SIGSTOP)
        try:  # (a run that never stalls ends after WAIT_S and its flush's bound, without the failure: the test fails)
            with pytest.raises(MeasurementFailed, match=f"queue of records to {topic} stayed full .* brokers took none"):
                produce_one(spec, PRODUCER)
        finally:  # a fault the test injects is always undone
            broker.send_signal(signal.SIGCONT)


Record = tuple[bytes | None, bytes, tuple[int, int]]  # key, value, (producer id, sequence) of the identity header


def read_back(bootstrap: str, topic: str, count: int) -> list[Record]:
    """The first ``count`` records of a one-partition ``topic``, in order (within WAIT_S)."""
    reader = clients.consumer(bootstrap, {"group.id": f"kperf-bits-{uuid.uuid4().hex[:8]}",
                                          "auto.offset.reset": "earliest", "enable.auto.commit": False})
    reader.subscribe([topic])
    got: list[Record] = []
    until = time.time() + WAIT_S
    try:
        while len(got) < count and time.time() < until:
            for message in reader.consume(1000, timeout=1):
                if message.error() is None:
                    (identity,) = identities([message.headers()])
                    got.append((message.key(), message.value(), (int(identity["producer"]), int(identity["sequence"]))))
    finally:
        reader.close()
    return got


@pytest.mark.parametrize("setting", ["text, sized, Zipf keys", "payload file, keys", "random",
                                     "payload file, keys, a queue of 10"])
def test_both_loops_send_the_same_records_bit_for_bit(bootstrap: str, tmp_path: Path, setting: str) -> None:
    """Warm-up and measured records of one producer id, each loop to its own one-partition topic, read back in order:
    the same identities, keys and payloads (random ones: their sizes; their bytes are drawn anew per producer) as
    the Python reference's own schedules give (kperf.drivers.payloads)."""
    lines = tmp_path / "lines.txt"
    lines.write_bytes(b"\n".join(b"line %d %s" % (i, b"x" * i) for i in range(1, 30)))
    options: dict[str, Any] = {
        "text, sized, Zipf keys": {"payload": "text", "record_size": 300, "sizes": ((50, 1.0), (120, 2.0), (300, 1.0)),
                                   "keys": 40, "key_zipf_s": 1.1},
        "payload file, keys": {"record_size": 100, "payload_file": lines, "keys": 5},
        "random": {"payload": "random", "record_size": 200},
        # Full nearly all the time, at many window ends: a record the full queue held back keeps its payload and key.
        "payload file, keys, a queue of 10": {"record_size": 100, "payload_file": lines, "keys": 5, "window_s": 0.01,
                                              "config": {"queue.buffering.max.messages": 10}},
    }[setting]
    warm, measured = 50, 3_000
    sent = {}
    for loop in loops.LOOPS:
        with topics.temporary(bootstrap, "bits", 1, 1) as topic:
            spec = ProducerSpec(bootstrap=bootstrap, topic=topic, records=measured, warmup_records=warm, loop=loop, **options)
            spec.check()
            report = produce_one(spec, producer_id=PRODUCER)
            assert (report.loop, report.acked, report.errors) == (loop, measured, {})
            sent[loop] = read_back(bootstrap, topic, warm + measured)
    payloads = Payloads(spec.payload, spec.record_size, spec.payload_file, sizes=spec.sizes)
    keys = Keys(spec.keys, spec.key_zipf_s, seed=PRODUCER)
    expected = [(keys.next(), payloads.next()) for _ in range(warm + measured)]
    for loop, records in sent.items():
        assert [identity for _, _, identity in records] == [(PRODUCER, s) for s in range(warm + measured)], loop
        assert [key for key, _, _ in records] == [key for key, _ in expected], loop
        if spec.payload == "random" and spec.payload_file is None:
            assert [len(value) for _, value, _ in records] == [len(value) for _, value in expected], loop
        else:
            assert [value for _, value, _ in records] == [value for _, value in expected], loop


@pytest.mark.parametrize("rate", [-1, 5_000])
def test_every_acknowledgement_is_tracked_with_its_partition_and_times(bootstrap: str, loop: str, rate: int) -> None:
    """What the fault experiment counts losses against: each measured record acknowledged once, in order, with its
    partition, its acknowledgement after its intended send time (unthrottled: its send time)."""
    warm, measured = 100, 10_000
    with topics.temporary(bootstrap, "acks", 3, 1) as topic:
        spec = ProducerSpec(bootstrap, topic, 100, records=measured, warmup_records=warm, rate=rate, track_acks=True,
                            loop=loop)
        spec.check()
        report = produce_one(spec, producer_id=PRODUCER)
    acks = np.array(report.acks)
    assert report.acked == len(acks) == measured
    assert sorted(acks[:, 0].astype(int).tolist()) == list(range(warm, warm + measured))  # measured ones, each once
    assert set(acks[:, 1].astype(int).tolist()) <= {0, 1, 2}
    assert (np.diff(acks[:, 2]) >= 0).all() and (acks[:, 2] >= acks[:, 3]).all() and (acks[:, 3] >= report.started).all()


def test_a_duration_bounded_paced_run_sends_every_record_meant_before_its_end(bootstrap: str, loop: str) -> None:
    """Record i is meant for start + i / rate; the run sends those meant before start + duration, no more."""
    with topics.temporary(bootstrap, "duration", 1, 1) as topic:
        sent = produce(ProducerSpec(bootstrap, topic, 100, duration_s=2, rate=RATE, loop=loop))
    assert (sent.records, sent.errors, sent.loop) == (2 * RATE, {}, loop)


@pytest.mark.parametrize("producers", [1, 2])
def test_a_load_process_that_crashes_fails_its_unit_naming_how(bootstrap: str, producers: int) -> None:
    """A load process killed by SIGSEGV (what a crash in the native loops' C would do) mid-run: the measurement
    fails naming it, the other processes of its run are stopped, and the caller (a study) lives on."""
    ours = psutil.Process()

    with topics.temporary(bootstrap, "crash", 1, 1) as topic:
        crashed: list[int] = []

        def crash_one_sending() -> None:
            until = time.time() + WAIT_S
            watcher = clients.consumer(bootstrap, {"group.id": "kperf-watch"})
            while watcher.get_watermark_offsets(TopicPartition(topic, 0), timeout=5)[1] < RATE // 2:
                if time.time() > until:
                    return
                time.sleep(0.05)
            victim = load_processes(ours)[0]
            victim.send_signal(signal.SIGSEGV)
            crashed.append(victim.pid)

        crashing = threading.Thread(target=crash_one_sending)
        crashing.start()
        try:
            with pytest.raises(MeasurementFailed, match=r"a load process died before reporting \(killed by SIGSEGV\)") as failed:
                produce(ProducerSpec(bootstrap, topic, 100, records=30 * RATE, rate=RATE, producers=producers))
        finally:
            crashing.join()
    assert crashed and failed.value.cause == DIED
    assert load_processes(ours) == []  # none left running

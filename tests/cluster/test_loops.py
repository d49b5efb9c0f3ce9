"""The two hot loops of the Python client held to one another, and to what a paused broker does, on a real cluster."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from confluent_kafka import TopicPartition

from kperf.drivers.consumer import consume
from kperf.drivers.faults import find_broker, leader_port
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients, topics
from kperf.results import Measurement, Verification

pytestmark = pytest.mark.cluster

RATE = 2_000  # records/s: a pace either loop sustains on any machine that runs the suite
RECORDS = 6_000


def test_both_loops_verify_the_same_counts_with_the_same_latency_distribution(bootstrap: str) -> None:
    """Both loops at once (so a busy machine slows both alike), each on its own topic, paced, then each read back
    by the same loop: the same verified counts, and intended-time latencies of the same order."""
    produced: dict[str, Measurement] = {}
    with topics.temporary(bootstrap, "loops", 1, 1) as one, topics.temporary(bootstrap, "loops", 1, 1) as two:
        runs = {"python": one, "native": two}
        threads = [threading.Thread(target=lambda loop=loop, topic=topic: produced.__setitem__(
            loop, produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS, rate=RATE, loop=loop))))
            for loop, topic in runs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        read = {loop: consume(ConsumerSpec(bootstrap, topic, records=RECORDS, loop=loop)) for loop, topic in runs.items()}
    for loop in runs:
        assert (produced[loop].loop, read[loop].loop) == (loop, loop)
        assert produced[loop].records == read[loop].records == RECORDS and produced[loop].errors == {}
        assert read[loop].verification == Verification(expected=RECORDS, missing=0, duplicated=0)
    python, native = (produced[loop].latency_ms["intended"] for loop in runs)
    # linger.ms (5) and the broker's round trip dominate both medians: the loops add little. The tails are the
    # machine's (two producers and a cluster on shared cores): each median lies within the other's p99.
    assert 0.5 <= native["p50"] / python["p50"] <= 2, (native, python)
    assert native["p50"] <= python["p99"] and python["p50"] <= native["p99"], (native, python)


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

"""The Python producer loop (confluent-kafka): the portable reference the native loop is held to.

A Python call each way per record (``produce`` and its delivery callback) is what bounds it: see docs/bench.md.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from kperf.drivers import latency, transactions
from kperf.drivers.loop import BEHIND, BOUNDARY, DONE, FULL, ProducerLoop, TurnAcks
from kperf.drivers.payloads import Keys, Payloads, identity_header
from kperf.drivers.specs import ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients
from kperf.latency_bins import Bins

POLL_EVERY = 1000  # serve delivery callbacks every N sends when unthrottled
POLL_RESOLUTION_S = 0.001  # librdkafka's poll waits whole milliseconds: a shorter time-out returns at once


def wait_turn(producer: Producer, seconds: float) -> None:
    """Wait ``seconds`` for a paced record's turn, serving delivery reports as they come: in poll for the whole
    milliseconds (it returns at the first report), asleep for the rest. Polling the rest, as this loop did, spun a
    core at any pace: 7.9 s of CPU for 8 s at 1,000 records/s, against the native loop's 0.6 s (2026-11-29), and
    on 2 cores that starved the brokers it measured. A report due in that last millisecond is served at its end."""
    if seconds >= POLL_RESOLUTION_S:
        producer.poll(seconds)
    elif seconds > 0:
        time.sleep(seconds)


class PythonProducerLoop(ProducerLoop):
    name = "python"

    def __init__(self, spec: ProducerSpec, producer_id: int) -> None:
        self._spec, self._id = spec, producer_id
        transactional = spec.transactions is not None
        self._producer = clients.producer(
            spec.bootstrap, transactions.settings(spec.config, spec.topic, producer_id) if transactional else spec.config)
        self._transactions = (transactions.PythonTransactions(self._producer, spec.transactions)
                              if spec.transactions is not None else None)
        self._payloads = Payloads(spec.payload, spec.record_size, spec.payload_file, sizes=spec.sizes)
        self._keys = Keys(spec.keys, spec.key_zipf_s, seed=producer_id)
        # The time series has the latency a user waits for: from the intended send time when paced.
        self._windowed = latency.WindowedRecorder() if spec.record_series else latency.Recorder()
        self._ack, self._intended = ((latency.Recorder(), self._windowed) if spec.rate > 0
                                     else (self._windowed, latency.Recorder()))
        self._errors: Counter[str] = Counter()
        self._counts = [0, 0]  # acknowledged, their bytes
        self._acks: list[tuple[int, int, float, float]] = []
        self._sequence = 0  # of the next record, warm-up records first
        self._started = 0.0
        self._on_delivery: Callable[..., None] | None = None  # none while warming up: those are not counted
        self._held: tuple[bytes, bytes | None] | None = None  # a record's payload and key a full queue held back

    def warm_up(self, records: int, until: float) -> bool:
        if self._transactions is not None and records:
            self._transactions.warming()
        while self.warmed < records:
            if not self._send(time.time(), paced=False, until=until):
                return False
            self.warmed += 1
        if self._transactions is not None:
            self._transactions.warmed()
        return True

    def flush(self, timeout_s: float) -> int:
        return self._producer.flush(timeout_s)

    def start(self, started: float) -> None:
        self._started = started
        self._on_delivery = self._counter()
        if self._transactions is not None:
            self._transactions.start()

    def _counter(self) -> Callable[..., None]:
        spec, counts, errors, acks = self._spec, self._counts, self._errors, self._acks
        record_ack, record_intended = self._ack.add, self._intended.add

        def on_delivery(err: KafkaError | None, msg: Message, intended: float | None = None, sequence: int = -1) -> None:
            """Count an acknowledgement; ``intended`` (paced runs) is the record's intended send time,
            ``sequence`` its number (given only when acknowledgements are tracked).

            This runs once per record, so it does the least it can: len(msg) is the
            payload's length without copying it, and the clock is read only for
            paced records.
            """
            if err is not None:
                errors[err.name()] += 1
                return
            counts[0] += 1
            counts[1] += len(msg)
            if sequence >= 0:
                acks.append((sequence, msg.partition() or 0, time.time(), intended or 0.0))  # always set on delivery
            if spec.record_latency:
                record_ack(msg.latency() or 0.0)
                if intended is not None:
                    record_intended(time.time() - intended)

        return on_delivery

    def _send(self, intended: float, paced: bool, until: float) -> bool:
        """Queue the next record; False (not sent) when the client's queue was still full at ``until``."""
        sequence, spec = self._sequence, self._spec
        headers = identity_header(self._id, sequence, int(intended * 1e9))
        value, key = self._held or (self._payloads.next(), self._keys.next())  # each drawn once, sent or not
        self._held = None
        # Delivery reports carry no headers: a paced record's intended time travels with its callback.
        callback = self._on_delivery
        if callback is not None and spec.track_acks:
            callback = partial(callback, intended=intended, sequence=sequence)
        elif callback is not None and paced:
            callback = partial(callback, intended=intended)
        while True:
            try:
                self._producer.produce(spec.topic, value, key=key, headers=headers, on_delivery=callback)
                break
            except BufferError:  # local queue full: let librdkafka drain it
                if time.time() >= until:
                    self._held = (value, key)  # (the next call sends them, under the same sequence)
                    return False
                self._producer.poll(0.005)
            except KafkaException as exc:
                raise MeasurementFailed(f"cannot produce to {spec.topic}: {exc.args[0].str()}", "cannot produce") from None
        self._sequence = sequence + 1
        return True

    def run(self, until: float, deadline: float, total: float) -> str:
        ended = self._run(until, deadline, total)
        if ended in (DONE, BEHIND) and self._transactions is not None:
            self._transactions.end(self.sent, self._acked, last=True)
        return ended

    def _acked(self) -> int:
        return self._counts[0]

    def _run(self, until: float, deadline: float, total: float) -> str:
        producer, send, rate = self._producer, self._send, self._spec.rate
        transacting = self._transactions
        started, give_up, sent = self._started, self._spec.give_up_behind_s, self.sent
        try:
            while sent < total:
                now = time.time()
                if now >= until:
                    return BOUNDARY
                if rate > 0:
                    intended = started + sent / rate
                    if intended >= deadline:
                        return DONE
                    waited = now
                    while waited < intended:  # serve callbacks while waiting for the record's turn
                        if waited >= until:
                            return BOUNDARY  # (a slow pace: its window ends first)
                        wait_turn(producer, min(intended, until) - waited)
                        waited = time.time()
                    if now - intended > give_up:  # too far behind to carry this rate: stop, and say so
                        return BEHIND
                    if not send(intended, paced=True, until=until):
                        return FULL
                    producer.poll(0)
                else:
                    if now >= deadline:
                        return DONE
                    if not send(now, paced=False, until=until):
                        return FULL
                    if sent % POLL_EVERY == 0:
                        producer.poll(0)
                sent += 1
                if transacting is not None and transacting.due(sent, now):
                    transacting.end(sent, self._acked)
            return DONE
        finally:
            self.sent = sent

    def counts(self) -> tuple[int, int, int]:
        return self._counts[0], self._counts[1], sum(self._errors.values())

    def window_bins(self) -> Bins:
        return self._windowed.window_bins()

    def errors(self) -> dict[str, int]:
        return dict(self._errors)

    def histograms(self) -> tuple[bytes, bytes]:
        return self._ack.encode(), self._intended.encode()

    def acks(self) -> TurnAcks:
        return tuple(self._acks)

    def transactions(self) -> transactions.Tally | None:
        return None if self._transactions is None else self._transactions.tally

    def close(self) -> None:
        self._producer.purge()

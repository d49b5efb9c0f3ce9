"""Read-process-write, the loop exactly-once exists for: a consumer group's member reads a source topic, each record
is written to a sink topic, and each transaction commits the records written with the source offsets they came
from (``send_offsets_to_transaction``), so a record is processed once whatever fails.

A record is written with its value, key and headers unchanged: the identity header kperf's producer put on it
(producer id, sequence, intended send time) reaches the sink, so a read_committed consumer of the sink verifies by
sequence number that every source record was processed once (no gap, no duplicate) and times each from its
intended send at the source to its reading at the sink (:func:`run`). The Python client only: one process, its
calls per record Python's (there is no native processor).
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from kperf.drivers import resources, transactions
from kperf.drivers.consumer import consume
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.peers import wait_for_peers
from kperf.drivers.loop import BATCH, POLL_S
from kperf.drivers.producer import QUEUE_FULL_TIMEOUT_S, produce
from kperf.drivers.specs import ConsumerSpec, ProcessorSpec, ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients, groups
from kperf.load import ISOLATION
from kperf.results import Measurement

PROCESSOR = "processor"  # its measurement's role


@dataclass(frozen=True)
class ProcessorReport:
    """What the processor's process did: records written, their bytes, when it joined and processed its first and
    last record, its polls with records, errors, transactions, CPU and peak memory."""

    records: int
    bytes: int
    subscribed: float
    joined: float | None
    first: float | None
    last: float | None
    fetches: int
    errors: dict[str, int]
    transacted: transactions.Tally
    cpu_s: float
    rss_peak_mib: float


def run(producer: ProducerSpec, processor: ProcessorSpec, consumer: ConsumerSpec) -> list[Measurement]:
    """A producer to the source, the processor and a consumer of the sink (``consumer``: end-to-end, read_committed),
    at once, each in its own process: their three measurements."""
    consumed, processed, produced = dispatch.together([partial(consume, consumer, checked=True),
                                                       partial(process, processor),
                                                       partial(produce, producer, checked=True)])
    return [produced, processed, consumed]


def process(spec: ProcessorSpec) -> Measurement:
    """Run the processor in a load process of its own: its measurement (records/s from its first record to its last)."""
    ran = dispatch.run(process_one, [((spec,), {})])
    (report,) = ran.results
    if report.joined is None:
        raise MeasurementFailed(f"the processor's group did not form within {spec.join_timeout_s:g} s on "
                                f"{spec.bootstrap}", groups.NOT_FORMED, timed_out=True)
    if report.first is None or report.last is None:
        raise MeasurementFailed(f"the processor read no record from {spec.source}", "processor read no record",
                                timed_out=True)
    return Measurement(
        role=PROCESSOR, client="python", records=report.records, bytes=report.bytes,
        seconds=report.last - report.first, errors=report.errors, resources=ran.resources, load=ran.load,
        measures={"fetches": float(report.fetches), "rebalance_ms": (report.joined - report.subscribed) * 1000,
                  **transactions.measures([report.transacted]), **resources.load_costs([report])},
        loop="python",
    )


def process_one(spec: ProcessorSpec) -> ProcessorReport:
    """The processor: join, then read, write and commit in transactions until ``spec.records`` were written, or
    nothing arrived for ``spec.idle_timeout_s`` after the last record (the join bound before the first), neither
    counted while its source's producers may still send (``spec.sending_s`` after joining)."""
    consumer = clients.consumer(spec.bootstrap, {
        "group.id": spec.group or groups.fresh_name("processor"), "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        ISOLATION: transactions.COMMITTED, **spec.config})
    producer = clients.producer(spec.bootstrap, transactions.settings(spec.producer_config, spec.sink,
                                                                      secrets.randbits(31)))
    errors: Counter[str] = Counter()

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            errors[err.name()] += 1

    try:
        transacting = transactions.PythonTransactions(producer, spec.transactions, consumer)
        wait_for_peers()
        subscribed, cpu_started = time.time(), time.process_time()
        joined: list[float] = []
        consumer.subscribe([spec.source], on_assign=lambda c, parts: joined.append(time.time()) if not joined else None)
        transacting.start()
        written = size = fetches = 0
        first = last = None
        # A timed transaction is checked at least as often as it lasts, records arriving or not.
        wait = min(POLL_S, spec.transactions.ms / 1000) if spec.transactions.ms else POLL_S
        while written < spec.records:
            # The first record as soon as it arrives, then what else is fetched (as the consumer loops read).
            arrived = consumer.poll(wait)
            batch = [] if arrived is None else [arrived, *consumer.consume(BATCH - 1, 0)]
            now, before = time.time(), written
            for message in batch:
                if (error := message.error()) is not None:
                    errors[error.name()] += 1
                    continue
                value = message.value() or b""
                _write(producer, spec.sink, value, message, delivered)
                written, size = written + 1, size + len(value)
            if written > before:
                fetches += 1
                first, last = first if first is not None else now, time.time()
                producer.poll(0)
            else:  # nothing written (an error is no record): idle since the last record, or since joining
                since = last if last is not None else (joined[0] if joined else subscribed)
                sending = bool(joined) and now - joined[0] < spec.sending_s  # silence then: no sign of an end
                if not sending and now - since > (spec.idle_timeout_s if last is not None else spec.join_timeout_s):
                    break
            if transacting.due(written, time.time()):  # (an empty one is not ended)
                transacting.end(written, lambda: written)
        transacting.end(written, lambda: written, last=True)
        last = time.time() if written else last  # its last records are processed once committed
        return ProcessorReport(written, size, subscribed, joined[0] if joined else None, first, last, fetches,
                               dict(errors), transacting.tally, time.process_time() - cpu_started,
                               resources.peak_rss_mib())
    finally:
        producer.purge()
        consumer.close()


def _write(producer: Producer, sink: str, value: bytes, message: Message,
           delivered: Callable[[KafkaError | None, Message], None]) -> None:
    """Queue ``message``'s value, key and headers to ``sink``, serving deliveries while the client's queue is full
    (for QUEUE_FULL_TIMEOUT_S at most: then the brokers take nothing, and the unit fails saying so)."""
    until = time.time() + QUEUE_FULL_TIMEOUT_S
    while True:
        try:
            producer.produce(sink, value, key=message.key(), headers=message.headers(), on_delivery=delivered)
            return
        except BufferError:
            if time.time() >= until:
                raise MeasurementFailed(f"the processor's queue of records to {sink} stayed full for "
                                        f"{QUEUE_FULL_TIMEOUT_S:.0f} s: the brokers took none", "client queue stayed full",
                                        timed_out=True) from None
            producer.poll(0.005)
        except KafkaException as exc:
            raise MeasurementFailed(f"cannot produce to {sink}: {exc.args[0].str()}", "cannot produce") from None

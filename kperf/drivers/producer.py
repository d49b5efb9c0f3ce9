"""The Python producer driver (confluent-kafka): paced or unthrottled, in one or P processes.

Pacing is open-loop: record i has an intended send time ``start + i / rate``
and is sent then, whether or not earlier records were acknowledged. Latency is
recorded twice: from the actual send (what librdkafka reports) and from the
intended send time, which also counts the time a record waited because the
client fell behind (coordinated omission made visible, as OpenMessaging
Benchmark's publish-delay latency does). Unthrottled runs have no intended
time and record only the first.

Warm-up records are sent and acknowledged before the measured records and are
not counted. Every record carries its producer id and sequence number (see
``kperf.drivers.payloads``), so a consumer can verify what arrived.
"""

from __future__ import annotations

import builtins
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message

from kperf.drivers import latency, payloads
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.peers import wait_for_peers
from kperf.drivers.payloads import Keys, Payloads, identity_header
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import clients, groups, topics
from kperf.load import JOIN_TIMEOUT_S, WINDOW_S
from kperf.results import Measurement
from kperf.series_building import Snapshot, Snapshots, check_window, snapshots_to_series

POLL_EVERY = 1000  # serve delivery callbacks every N sends when unthrottled
FLUSH_TIMEOUT_S = 120.0
GAVE_UP = "GAVE_UP_BEHIND_SCHEDULE"  # records a paced producer did not send: it fell too far behind (give_up_behind_s)


@dataclass(frozen=True)
class ProducerSpec:
    """What to send, how fast and with which client settings (picklable: it goes to worker processes)."""

    bootstrap: str
    topic: str
    record_size: int
    records: int | None = None  # stop after this many measured records ...
    duration_s: float | None = None  # ... or after this long
    rate: float = -1  # records/s over all producers; -1: as fast as possible
    payload: str = "random"
    payload_file: Path | None = None
    config: Mapping[str, Any] = field(default_factory=dict)  # librdkafka settings: batch.size, acks, ...
    producers: int = 1
    warmup_records: int = 0  # per producer, sent before measuring
    record_latency: bool = True
    track_acks: bool = False  # keep (sequence, partition, ack time) of every acknowledged record: what a fault may lose
    window_s: float = WINDOW_S  # of the time series
    record_series: bool = True  # False: no time series (to measure what it costs)
    sizes: tuple[tuple[int, float], ...] = ()  # a record size distribution, (bytes, weight); record_size: the largest
    keys: int = 0  # distinct record keys; 0: no key (librdkafka then spreads records over partitions)
    key_zipf_s: float = 0.0  # key skew: Zipf's exponent; 0: uniform
    give_up_behind_s: float = math.inf  # paced: stop once a record is this late, its unsent records counted as GAVE_UP
    after_groups: tuple[str, ...] = ()  # consumer groups reading as it sends: its clock starts once they formed ...
    join_timeout_s: float = JOIN_TIMEOUT_S  # ... within this

    def check(self, librdkafka: bool = True) -> None:
        """Refuse bad input before any load starts; ``librdkafka``: also the client settings
        (not for the Java tools, whose settings are the Java client's and which they check themselves)."""
        if (self.records is None) == (self.duration_s is None):
            raise KperfError("give either a record count or a duration, not both or neither")
        if self.records is not None and self.records < 1:
            raise KperfError(f"records must be at least 1, got {self.records}")
        if self.duration_s is not None and self.duration_s <= 0:
            raise KperfError(f"duration must be positive, got {self.duration_s}")
        if self.rate == 0 or self.rate < -1:
            raise KperfError(f"target rate must be positive records/s or -1 (unthrottled), got {self.rate}")
        if self.producers < 1:
            raise KperfError(f"producers must be at least 1, got {self.producers}")
        if not self.give_up_behind_s > 0:
            raise KperfError(f"give_up_behind_s must be positive, got {self.give_up_behind_s}")
        if self.warmup_records < 0:
            raise KperfError(f"warm-up records must be 0 or more, got {self.warmup_records}")
        payloads.check(self.payload, self.record_size, self.payload_file)
        if self.sizes and (self.payload_file is not None or any(b < 1 or b > self.record_size or w <= 0 for b, w in self.sizes)):
            raise KperfError("a size distribution needs sizes of 1 to record_size bytes with positive weights, and no payload file")
        Keys(self.keys, self.key_zipf_s)  # refuses a negative count or exponent
        check_window(self.window_s, self.duration_s, self.records, self.rate)
        if librdkafka:
            clients.check_config(self.config, role="producer")

    def share(self, index: int) -> ProducerSpec:
        """This spec for producer ``index`` of ``producers``: its part of the records and of the rate."""
        records = None
        if self.records is not None:
            records = self.records // self.producers + (1 if index < self.records % self.producers else 0)
        rate = self.rate / self.producers if self.rate > 0 else -1
        return replace(self, records=records, rate=rate, producers=1)


@dataclass(frozen=True)
class ProducerReport:
    """One producer process's raw results, merged into a Measurement by ``produce``."""

    acked: int
    bytes: int
    started: float  # wall clock, s: first measured send
    finished: float  # wall clock, s: last acknowledgement (or flush time-out)
    errors: dict[str, int]
    ack_histogram: builtins.bytes  # builtins: the field "bytes" shadows the type
    intended_histogram: builtins.bytes
    acks: tuple[tuple[int, int, float, float], ...] = ()  # track_acks: (sequence, partition, ack time, intended time)
    windows: tuple[Snapshot, ...] = ()  # acknowledged so far, their bytes, latencies since: at each window boundary
    stopped: float = 0.0  # wall clock, s: the last send (then only acknowledgements are awaited)


def produce(spec: ProducerSpec, checked: bool = False) -> Measurement:
    """Run ``spec`` (in ``spec.producers`` processes when more than one) and merge what they measured.

    ``checked``: the caller refused bad input and made sure of the topic before any load (a driver's caller, kperf
    capacity), so it is not done again; otherwise, for a direct call, both are done here first."""
    if not checked:
        spec.check()
        topics.require(spec.bootstrap, spec.topic)
    # Producer ids unique to this run, so records of several runs in one topic stay apart.
    first_id = secrets.randbits(31)
    ran = dispatch.run(produce_one, [((spec.share(i),), {"producer_id": first_id + i}) for i in range(spec.producers)])
    reports = ran.results
    errors: Counter[str] = Counter()
    for report in reports:
        errors.update(report.errors)
    latency_ms = {"ack": latency.summary(latency.merge(r.ack_histogram for r in reports))}
    if spec.rate > 0:
        latency_ms["intended"] = latency.summary(latency.merge(r.intended_histogram for r in reports))
    return Measurement(
        role="producer",
        client="python",
        records=sum(r.acked for r in reports),
        bytes=sum(r.bytes for r in reports),
        seconds=max(r.finished for r in reports) - min(r.started for r in reports),
        latency_ms={k: v for k, v in latency_ms.items() if v},
        errors=dict(errors),
        series=snapshots_to_series([r.windows for r in reports], [r.stopped for r in reports],
                                   ("intended" if spec.rate > 0 else "ack") if spec.record_latency else "",
                                   width_s=spec.window_s) if spec.record_series else None,
        resources=ran.resources,
        load=ran.load,
    )


def produce_one(spec: ProducerSpec, producer_id: int) -> ProducerReport:
    """One producer: warm-up records, then the measured ones, paced or not."""
    producer = clients.producer(spec.bootstrap, spec.config)
    payloads = Payloads(spec.payload, spec.record_size, spec.payload_file, sizes=spec.sizes)
    keys = Keys(spec.keys, spec.key_zipf_s, seed=producer_id)
    # The time series has the latency a user waits for: from the intended send time when paced.
    windowed = latency.WindowedRecorder() if spec.record_series else latency.Recorder()
    ack_latency, intended_latency = (latency.Recorder(), windowed) if spec.rate > 0 else (windowed, latency.Recorder())
    errors: Counter[str] = Counter()
    counts = {"acked": 0, "bytes": 0}
    measuring = False
    record_ack, record_intended = ack_latency.add, intended_latency.add

    acks: list[tuple[int, int, float, float]] = []

    def on_delivery(err: KafkaError | None, msg: Message, intended: float | None = None, sequence: int = -1) -> None:
        """Count an acknowledgement; ``intended`` (paced runs) is the record's intended send time,
        ``sequence`` its number (given only when acknowledgements are tracked).

        This runs once per record, so it does the least it can: len(msg) is the
        payload's length without copying it, and the clock is read only for
        paced records.
        """
        if not measuring:
            return
        if err is not None:
            errors[err.name()] += 1
            return
        counts["acked"] += 1
        counts["bytes"] += len(msg)
        if sequence >= 0:
            acks.append((sequence, msg.partition() or 0, time.time(), intended or 0.0))  # always set on delivery
        if spec.record_latency:
            record_ack(msg.latency() or 0.0)
            if intended is not None:
                record_intended(time.time() - intended)

    sequence = 0

    def send(intended: float, paced: bool) -> None:
        nonlocal sequence
        headers = identity_header(producer_id, sequence, int(intended * 1e9))
        value, key = payloads.next(), keys.next()
        # Delivery reports carry no headers: a paced record's intended time travels with its callback.
        callback: Callable[..., None]
        if spec.track_acks:
            callback = partial(on_delivery, intended=intended, sequence=sequence)
        else:
            callback = partial(on_delivery, intended=intended) if paced else on_delivery
        while True:
            try:
                producer.produce(spec.topic, value, key=key, headers=headers, on_delivery=callback)
                break
            except BufferError:  # local queue full: let librdkafka drain it
                producer.poll(0.005)
            except KafkaException as exc:
                raise MeasurementFailed(f"cannot produce to {spec.topic}: {exc.args[0].str()}", "cannot produce") from None
        sequence += 1

    for _ in range(spec.warmup_records):
        send(time.time(), paced=False)
    if producer.flush(FLUSH_TIMEOUT_S):
        raise MeasurementFailed(f"warm-up records to {spec.topic} were not acknowledged within {FLUSH_TIMEOUT_S:.0f} s",
                                "warm-up records not acknowledged", timed_out=True)
    if spec.after_groups:  # a group still forming would count its join as latency and lag
        groups.wait_formed(spec.bootstrap, spec.after_groups, spec.join_timeout_s)

    wait_for_peers()
    measuring = True
    started = time.time()
    # Acknowledgements are counted in callbacks, which run only inside poll and flush. No series: no boundary.
    windows = Snapshots(started, spec.window_s if spec.record_series else math.inf)
    deadline = started + spec.duration_s if spec.duration_s is not None else float("inf")
    total = spec.records if spec.records is not None else float("inf")
    sent = 0
    while sent < total:
        now = time.time()
        if now >= windows.next_at:
            windows.take(now, counts["acked"], counts["bytes"], windowed.window_bins(), sum(errors.values()))
        if spec.rate > 0:
            intended = started + sent / spec.rate
            wait = intended - now
            while wait > 0:  # serve callbacks while waiting for the record's turn
                producer.poll(min(wait, 0.001))
                wait = intended - time.time()
            if intended >= deadline:
                break
            if now - intended > spec.give_up_behind_s:  # too far behind to carry this rate: stop, and say so
                errors[GAVE_UP] += (spec.records if spec.records is not None else math.ceil(
                    (deadline - started) * spec.rate)) - sent
                break
            send(intended, paced=True)
            producer.poll(0)
        else:
            if now >= deadline:
                break
            send(now, paced=False)
            if sent % POLL_EVERY == 0:
                producer.poll(0)
        sent += 1
    stopped = now = time.time()
    remaining, flush_until = len(producer), stopped + FLUSH_TIMEOUT_S
    while remaining and now < flush_until:  # flushed up to each window boundary, so the drain is in the series
        remaining = producer.flush(max(0.0, min(windows.next_at, flush_until) - now))
        now = time.time()  # flush returns on the last acknowledgement: when it did is ``finished``
        if remaining and now >= windows.next_at:
            windows.take(now, counts["acked"], counts["bytes"], windowed.window_bins(), sum(errors.values()))
    finished = now
    if remaining:
        errors["NOT_DELIVERED_IN_TIME"] += remaining
    return ProducerReport(
        acked=counts["acked"],
        bytes=counts["bytes"],
        started=started,
        finished=finished,
        errors=dict(errors),
        ack_histogram=ack_latency.encode(),
        intended_histogram=intended_latency.encode(),
        windows=windows.close(finished, counts["acked"], counts["bytes"], windowed.window_bins(), sum(errors.values())),
        stopped=stopped,
        acks=tuple(acks),
    )

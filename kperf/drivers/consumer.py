"""The Python consumer driver (confluent-kafka): C processes in one group, verifying what arrives.

Reported like the stock ConsumerPerformance so the two compare: ``seconds``
runs from the group's first assignment to the last record, the join (from
subscribing to that assignment) recorded apart as ``rebalance_ms``, so a group
that forms slowly does not slow its rate; ``fetch_ms`` runs from the first
record to the last, ``fetches`` counts the polls that returned records, and the
``fetch_*`` rates are given only from a span and a count a rate may come from
(:func:`kperf.validity.min_span_s`, at least two fetches). Every wait is
bounded: the group must form within ``join_timeout_s`` (else the unit fails,
:class:`~kperf.errors.MeasurementFailed`), and the first record and the idle
time-out are counted from the first assignment.
Records from kperf producers carry their producer id and sequence number: the
consumer keeps one bit per sequence number to count missing and duplicated
records in bounded memory, and, for a producer running at the same time, the
end-to-end latency from the intended send time to consumption. It does so a
batch at a time, in numpy, so that the Python work per record is little more
than the client's own calls (see kperf bench for what that leaves).

The C consumers stop together once the group has read the records asked for
(a counter they share), and one that loses partitions in a rebalance commits
what it read from them first, so their next owner does not read them again.
"""

from __future__ import annotations

import builtins
import gc
import math
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from kperf.drivers import latency
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.peers import add_to_total, wait_for_peers
from kperf.drivers.payloads import identities
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import clients, topics
from kperf.kafka.groups import NOT_FORMED
from kperf.load import JOIN_TIMEOUT_S, WINDOW_S, check_join_timeout
from kperf.results import MIB, Measurement, Verification
from kperf.series_building import Snapshot, Snapshots, check_window, snapshots_to_series
from kperf.validity import MIN_BATCHES, min_span_s

BATCH = 10_000  # records taken at most per loop: the first as soon as it arrives, then those already fetched
# librdkafka pauses fetching a partition for fetch.queue.backoff.ms (default 1 s) whenever its prefetch queue
# holds queued.min.messages (default 100,000) or queued.max.messages.kbytes (64 MiB). A consumer that reads a
# million records a second empties that queue in a tenth of a second, then idles: measured here, 130k records/s
# with the defaults. So: a queue of about a second at 100 B (the setting librdkafka's rdkafka_performance uses),
# and a short look again when it is full. The caller's settings override these.
THROUGHPUT_CONFIG = {"queued.min.messages": 1_000_000, "fetch.queue.backoff.ms": 10}
FIRST_RECORD_TIMEOUT_S = 30.0  # no record at all this long after the first assignment: the topic is empty
NO_RECORD = "consumer read no record"  # a MeasurementFailed cause (and groups.NOT_FORMED)


@dataclass
class SequenceLedger:
    """Which sequence numbers of each producer arrived: one bit each, duplicates counted."""

    seen: dict[int, bytearray] = field(default_factory=dict)
    duplicated: int = 0

    def add(self, producer: int, sequence: int) -> None:
        self.add_many(np.array([producer]), np.array([sequence]))

    def add_many(self, producers: np.ndarray, sequences: np.ndarray) -> None:
        """Record a batch of (producer, sequence) pairs: sorted and set in bulk, duplicates within the batch
        and with earlier batches counted alike."""
        if not len(sequences):
            return
        producers, sequences = producers.astype(np.int64), sequences.astype(np.int64)
        one = producers.min() == producers.max()
        for producer in [int(producers[0])] if one else np.unique(producers).tolist():
            self._add_sequences(producer, sequences if one else sequences[producers == producer])

    def _add_sequences(self, producer: int, sequences: np.ndarray) -> None:
        ordered = np.sort(sequences)  # (np.unique is several times slower)
        first = np.empty(len(ordered), dtype=bool)
        first[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        distinct = ordered[first]
        self.duplicated += len(sequences) - len(distinct)
        index, masks = distinct >> 3, np.left_shift(1, distinct & 7).astype(np.uint8)
        bits = self.seen.setdefault(producer, bytearray())
        if (need := int(index[-1]) + 1) > len(bits):
            bits.extend(bytes(max(need - len(bits), len(bits))))  # at least doubled: amortized growth
        starts = np.flatnonzero(np.diff(index, prepend=-1))  # the first sequence of each byte touched
        touched, masks = index[starts], np.bitwise_or.reduceat(masks, starts)
        view = np.frombuffer(bits, dtype=np.uint8)  # writable: the bytearray's own memory
        before = view[touched]
        self.duplicated += int(np.bitwise_count(before & masks).sum())
        view[touched] = before | masks

    def merge(self, other: SequenceLedger) -> None:
        """Add another consumer's ledger: a sequence both saw is a duplicate."""
        self.duplicated += other.duplicated
        for producer, theirs in other.seen.items():
            mine, new = self.bits(producer), int.from_bytes(theirs, "little")
            self.duplicated += (mine & new).bit_count()
            merged = mine | new
            self.seen[producer] = bytearray(merged.to_bytes((merged.bit_length() + 7) // 8, "little"))

    def verification(self, expected: Mapping[int, int] | None = None) -> Verification:
        """Compare with ``expected`` records per producer id (default: up to each one's highest sequence)."""
        if expected is None:
            expected = {p: self.bits(p).bit_length() for p in self.seen}
        missing = sum(n - (self.bits(p) & ((1 << n) - 1)).bit_count() for p, n in expected.items())
        return Verification(expected=sum(expected.values()), missing=missing, duplicated=self.duplicated)

    def bits(self, producer: int) -> int:
        """The sequence numbers seen of ``producer`` as a bit set (bit i: sequence i arrived)."""
        return int.from_bytes(self.seen.get(producer, b""), "little")


@dataclass(frozen=True)
class ConsumerSpec:
    """What to read and how (picklable: it goes to worker processes)."""

    bootstrap: str
    topic: str
    records: int | None = None  # stop once this many were read (over all consumers) ...
    duration_s: float | None = None  # ... or after this long
    idle_timeout_s: float = 5.0  # ... or when nothing arrived for this long after the first record
    join_timeout_s: float = JOIN_TIMEOUT_S  # the group must form (a first assignment) within this of subscribing
    config: Mapping[str, Any] = field(default_factory=dict)  # librdkafka settings: fetch.min.bytes, ...
    consumers: int = 1
    group: str = ""  # default: a new group, so the topic is read from its beginning
    end_to_end: bool = False  # record produce-to-consume latency (a producer runs at the same time)
    expected: Mapping[int, int] | None = None  # records per producer id, for verification
    window_s: float = WINDOW_S  # of the time series

    def check(self, librdkafka: bool = True) -> None:
        """Refuse bad input before any load starts (client settings: see ProducerSpec.check)."""
        if self.records is not None and self.records < 1:
            raise KperfError(f"records must be at least 1, got {self.records}")
        if self.duration_s is not None and self.duration_s <= 0:
            raise KperfError(f"duration must be positive, got {self.duration_s}")
        if self.consumers < 1:
            raise KperfError(f"consumers must be at least 1, got {self.consumers}")
        check_join_timeout(self.join_timeout_s)
        check_window(self.window_s, self.duration_s)
        if librdkafka:
            clients.check_config(self.config, role="consumer")


@dataclass(frozen=True)
class ConsumerReport:
    """One consumer process's raw results, merged into a Measurement by ``consume``."""

    records: int
    bytes: int
    subscribed: float  # wall clock, s
    joined: float | None  # its first assignment (maybe of no partition: the group formed)
    assigned: float | None  # its first assignment of partitions
    first: float | None
    last: float | None
    errors: dict[str, int]
    fetches: int  # polls that returned records
    ledger: SequenceLedger
    e2e_histogram: builtins.bytes  # builtins: the field "bytes" shadows the type
    windows: tuple[Snapshot, ...] = ()  # read so far, their bytes, end-to-end latencies since: at each window boundary


def consume(spec: ConsumerSpec, checked: bool = False) -> Measurement:
    """Read the topic with ``spec.consumers`` consumers of one group and merge what they measured (``checked``: as
    for :func:`kperf.drivers.producer.produce`)."""
    if not checked:
        spec.check()
        topics.require(spec.bootstrap, spec.topic)
    spec = replace(spec, group=spec.group or f"kperf-{uuid.uuid4().hex[:12]}")
    ran = dispatch.run(consume_one, [((spec,), {}) for _ in range(spec.consumers)])
    reports = ran.results
    require_formed(spec, reports)
    active = [r for r in reports if r.first is not None]
    if not active:
        raise MeasurementFailed(f"no record arrived from {spec.topic} on {spec.bootstrap} within "
                                f"{FIRST_RECORD_TIMEOUT_S:g} s of the group forming", NO_RECORD, timed_out=True)
    ledger = SequenceLedger()
    errors: Counter[str] = Counter()
    for report in reports:
        ledger.merge(report.ledger)
        errors.update(report.errors)
    records, size = sum(r.records for r in reports), sum(r.bytes for r in reports)
    subscribed, assigned, first, last = _timeline(reports, active)
    e2e = latency.summary(latency.merge(r.e2e_histogram for r in reports))
    return Measurement(
        role="consumer",
        client="python",
        records=records,
        bytes=size,
        seconds=last - assigned,  # from the join that ends rebalance_ms: counted once, there
        latency_ms={"e2e": e2e} if e2e else {},
        errors=dict(errors),
        verification=ledger.verification(spec.expected) if ledger.seen else None,
        series=snapshots_to_series([r.windows for r in reports], [r.last for r in active if r.last is not None],
                                   "e2e" if spec.end_to_end else "", [r.first for r in active if r.first is not None],
                                   spec.window_s),
        measures=_fetch_measures(assigned - subscribed, last - first, sum(r.fetches for r in reports), records, size,
                                 min_span_s(spec.window_s)),
        resources=ran.resources,
        load=ran.load,
    )


def require_formed(spec: ConsumerSpec, reports: list[ConsumerReport]) -> None:
    """Fail the unit, in one line naming the cluster and the time waited, when its group never formed."""
    if all(r.joined is None for r in reports):
        raise MeasurementFailed(
            f"consumer group {spec.group} did not form within {spec.join_timeout_s:g} s on {spec.bootstrap} "
            f"(no partition of {spec.topic} assigned; raise join_timeout_s if the cluster forms groups slowly)",
            NOT_FORMED, timed_out=True)


def _timeline(reports: list[ConsumerReport], active: list[ConsumerReport]) -> tuple[float, float, float, float]:
    """When the group subscribed, first got partitions (else formed: its first assignment), and read its first and
    last record (of the ``active`` consumers, those that read any)."""
    subscribed = min(r.subscribed for r in reports)
    joined = min(r.joined for r in reports if r.joined is not None)
    assigned = min((r.assigned for r in reports if r.assigned is not None), default=joined)
    first = min(r.first for r in active if r.first is not None)
    last = max(r.last for r in active if r.last is not None)
    return subscribed, assigned, first, last


def _fetch_measures(rebalance_s: float, fetch_s: float, fetches: int, records: int, size: int,
                    shortest_s: float) -> dict[str, float]:
    """The rebalance's time and the fetch figures, from the first record to the last, as ConsumerPerformance
    reports them; the fetch rates only from a span of at least ``shortest_s`` and two fetches (all records in one
    fetch, or in a few milliseconds, give no rate)."""
    measures = {"rebalance_ms": rebalance_s * 1000, "fetch_ms": fetch_s * 1000, "fetches": float(fetches)}
    if fetch_s >= shortest_s and fetches >= MIN_BATCHES:
        measures |= {"fetch_mib_per_s": size / MIB / fetch_s, "fetch_records_per_s": records / fetch_s}
    return measures


def _commit_read(consumer: Consumer, partitions: list[TopicPartition]) -> None:
    """On losing partitions in a rebalance, commit what was read from them, so their next owner
    goes on from there instead of reading them again (consumers of a group join one by one)."""
    if not partitions:
        return
    try:
        consumer.commit(asynchronous=False)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError._NO_OFFSET:  # nothing read yet: nothing to hand over
            raise


def _on_assign(joined: list[float], assigned: list[float]) -> Callable[[Consumer, list[TopicPartition]], None]:
    """A rebalance callback noting when the group first formed, and first gave this consumer partitions."""
    def noted(_: Consumer, partitions: list[TopicPartition]) -> None:
        now = time.time()
        joined.append(now)
        if partitions:
            assigned.append(now)
    return noted


def _deadline(spec: ConsumerSpec, subscribed: float, joined: list[float]) -> float:
    """Until the group forms, the end of the join bound; then the duration's end, counted from its forming."""
    if not joined:
        return subscribed + spec.join_timeout_s
    return joined[0] + spec.duration_s if spec.duration_s is not None else math.inf


def _idle(spec: ConsumerSpec, now: float, joined: float, last: float | None, live: float | None) -> bool:
    """Whether a consumer whose group formed at ``joined`` has waited long enough for more records: the idle
    time-out after its last record, the first-record bound before any. An end_to_end consumer reads as its producers
    send, so only records sent after it joined start its idle time-out: a backlog or the producers' warm-up read
    first is no sign that the producers are done (they may start only once every group formed: one join bound more
    for its first record)."""
    since = live if spec.end_to_end else last
    if since is not None:
        return now - since > spec.idle_timeout_s
    first_bound = FIRST_RECORD_TIMEOUT_S + (spec.join_timeout_s if spec.end_to_end else 0.0)
    return now - (last if last is not None else joined) > first_bound


def consume_one(spec: ConsumerSpec) -> ConsumerReport:
    """One consumer of the group, until the record count, the duration or the idle timeout (both counted from its
    first assignment), or until the join bound passes with no assignment (``joined`` None: the caller fails it)."""
    consumer = clients.consumer(
        spec.bootstrap,
        {"group.id": spec.group, "auto.offset.reset": "earliest", "enable.auto.commit": False, **THROUGHPUT_CONFIG,
         **spec.config},
    )
    ledger, e2e_latency = SequenceLedger(), latency.WindowedRecorder()
    errors: Counter[str] = Counter()
    joined: list[float] = []
    assigned: list[float] = []
    wait_for_peers()
    subscribed = time.time()
    consumer.subscribe([spec.topic], on_assign=_on_assign(joined, assigned), on_revoke=_commit_read)
    records = size = fetches = 0
    first = last = live = None  # live: the last record read that was sent after this consumer joined (end_to_end)
    windows = Snapshots(subscribed, spec.window_s)
    # Python's cycle collector runs every few hundred new containers, here the messages and headers of every batch:
    # it took a third of the read loop's CPU. The loop makes no cycles (all it makes is freed by reference
    # counting), so the collector is paused while reading and runs once a window instead.
    collecting = gc.isenabled()
    gc.disable()
    try:
        counted = 0  # of this consumer's records, those added to the group's total
        while (now := time.time()) < _deadline(spec, subscribed, joined):
            if now >= windows.next_at:
                windows.take(now, records, size, e2e_latency.window_bins(), sum(errors.values()))
                gc.collect(1)  # the young generations: any cycle made meanwhile is freed within a window
            shared = add_to_total(records - counted)  # all consumers of a run stop once the group has read enough
            counted = records
            if spec.records is not None and (records if shared is None else shared) >= spec.records:
                break
            # poll returns on the first record (consume would wait for a full batch or its timeout,
            # which at low rates is end-to-end latency kperf would add), then what else is there.
            head = consumer.poll(0.5)
            batch = [head, *consumer.consume(BATCH - 1, timeout=0)] if head is not None else []
            now = time.time()
            if not batch:
                if joined and _idle(spec, now, joined[0], last, live):  # (before joining, the deadline is the bound)
                    break
                continue
            # The batch's records are counted, measured and verified in bulk: per record, only the C calls
            # that fetch its error, length and headers (identities: one numpy parse of all the headers).
            failed = list(map(Message.error, batch))
            if failed.count(None) != len(failed):
                errors.update(e.name() for e in failed if e is not None and e.code() != KafkaError._PARTITION_EOF)
                batch = [msg for msg, err in zip(batch, failed) if err is None]
            records += len(batch)
            fetches += 1
            size += sum(map(len, batch))
            read = identities(map(Message.headers, batch))  # type: ignore[arg-type]  # (a list when consumed)
            if len(read):
                ledger.add_many(read["producer"], read["sequence"])
                # Records meant to be sent before this consumer joined waited for the join, not for Kafka.
                if spec.end_to_end and assigned:
                    intended = read["intended_ns"][read["intended_ns"] >= assigned[0] * 1e9]
                    e2e_latency.add_many(now - intended / 1e9)
                    live = now if len(intended) else live
            first = first if first is not None else now
            last = now
    finally:
        ended = time.time()  # the series ends here: closing (leaving the group) is not reading
        consumer.close()
        if collecting:
            gc.enable()
    return ConsumerReport(
        records=records,
        bytes=size,
        subscribed=subscribed,
        joined=joined[0] if joined else None,
        assigned=assigned[0] if assigned else None,
        first=first,
        last=last,
        errors=dict(errors),
        fetches=fetches,
        ledger=ledger,
        e2e_histogram=e2e_latency.encode(),
        windows=windows.close(ended, records, size, e2e_latency.window_bins(), sum(errors.values())),
    )

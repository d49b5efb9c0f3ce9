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
import math
import os
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, replace

from kperf.drivers import latency, loops, resources, transactions
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.peers import add_to_total, wait_for_peers
from kperf.drivers.loop import ConsumerLoop
from kperf.drivers.progress import Progress
from kperf.drivers.share_tally import ShareTally
from kperf.drivers.specs import ConsumerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients, groups, share_groups, topics
from kperf.kafka.groups import NOT_FORMED
from kperf.results import MIB, Measurement
from kperf.series_building import Snapshot, Snapshots, snapshots_to_series
from kperf.validity import MIN_BATCHES, min_span_s

# librdkafka pauses fetching a partition for fetch.queue.backoff.ms (default 1 s) whenever its prefetch queue
# holds queued.min.messages (default 100,000) or queued.max.messages.kbytes (64 MiB). A consumer that reads a
# million records a second empties that queue in a tenth of a second, then idles: measured here, 130k records/s
# with the defaults. So: a queue of about a second at 100 B (the setting librdkafka's rdkafka_performance uses),
# and a short look again when it is full. The caller's settings override these.
THROUGHPUT_CONFIG = {"queued.min.messages": 1_000_000, "fetch.queue.backoff.ms": 10}
# A share group's member (librdkafka's preview ShareConsumer) waits on a broker that holds its share fetch, having
# nothing to deliver, for fetch.wait.max.ms (500 ms by default): measured on 2026-11-26, one member read 60,371
# records/s of 100 B at the default and 276,364 at 10 ms; at 1 KB, one read 3,770 records/s where Kafka's Java
# share consumer read 125,897 (docs/experiments.md, docs/bench.md). kperf's members let a broker hold a fetch 10 ms
# at most, unless -X says otherwise.
SHARE_CONFIG = {"fetch.wait.max.ms": 10}
FIRST_RECORD_TIMEOUT_S = 30.0  # no record at all this long after the first assignment: the topic is empty
NO_RECORD = "consumer read no record"  # a MeasurementFailed cause (and groups.NOT_FORMED)
TURN_S = 0.05  # a consumer looks at the group's shared count this often (it stops once the group read all), and Ctrl-C


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
    loop: str = "python"  # which loop measured it (kperf.drivers.loops)
    cpu_s: float = 0.0  # the process's CPU time (all its threads) from subscribing to the end
    rss_peak_mib: float = 0.0  # the process's peak memory (resources.peak_rss_mib)
    tally: ShareTally | None = None  # a share group's member: its deliveries and answers


def consume(spec: ConsumerSpec, checked: bool = False) -> Measurement:
    """Read the topic with ``spec.consumers`` consumers of one group and merge what they measured (``checked``: as
    for :func:`kperf.drivers.producer.produce`)."""
    if not checked:
        spec.check()
        topics.require(spec.bootstrap, spec.topic)
    named = (nullcontext(spec.group or groups.fresh_name()) if spec.share is None
             else share_groups.fresh(spec.bootstrap, spec.share.settings))
    with named as group:
        spec = replace(spec, group=group)
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
    verification, read_aborted = transactions.verified(ledger, spec) if ledger.seen else (None, {})
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
        verification=verification,
        series=snapshots_to_series([r.windows for r in reports], [r.last for r in active if r.last is not None],
                                   "e2e" if spec.end_to_end else "", [r.first for r in active if r.first is not None],
                                   spec.window_s),
        measures=_fetch_measures(assigned - subscribed, last - first, sum(r.fetches for r in reports), records, size,
                                 min_span_s(spec.window_s)) | resources.load_costs(reports) | _shared(reports) | read_aborted,
        resources=ran.resources,
        load=ran.load,
        loop=loops.label(r.loop for r in reports),
    )


def _shared(reports: list[ConsumerReport]) -> dict[str, float]:
    """A share group's deliveries, redeliveries, releases, rejects and archived records, merged (none for a
    consumer group)."""
    tallies = [r.tally for r in reports if r.tally is not None]
    if not tallies:
        return {}
    merged = ShareTally()
    for tally in tallies:
        merged.merge(tally)
    return merged.measures(ended=sum(r.records for r in reports))


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


def _deadline(spec: ConsumerSpec, subscribed: float, joined: float | None) -> float:
    """Until the group forms, the end of the join bound; then the duration's end, counted from its forming."""
    if joined is None:
        return subscribed + spec.join_timeout_s
    return joined + spec.duration_s if spec.duration_s is not None else math.inf


def _idle(spec: ConsumerSpec, now: float, joined: float, last: float | None, live: float | None,
          group_moved: float | None = None) -> bool:
    """Whether a consumer whose group formed at ``joined`` has waited long enough for more records: the idle
    time-out after its last record, the first-record bound before any. An end_to_end consumer reads as its producers
    send, so only records sent after it joined start its idle time-out: a backlog or the producers' warm-up read
    first is no sign that the producers are done (they may start only once every group formed: one join bound more
    for its first record). Neither bound counts while the producers may still send (``spec.sending_s`` from
    ``joined``). A member that read nothing while its peers read (the group's count last grew at ``group_moved``, as
    far as this process saw) is idle with them: the idle time-out from their last growth, not the first-record bound
    (a member joining after its peer had read every partition waited 30 s for a topic it knew was not empty)."""
    if now - joined < spec.sending_s:
        return False
    since = live if spec.end_to_end else last
    if since is not None:
        return now - since > spec.idle_timeout_s
    if group_moved is not None and not spec.end_to_end:
        return now - max(group_moved, joined) > spec.idle_timeout_s
    first_bound = FIRST_RECORD_TIMEOUT_S + (spec.join_timeout_s if spec.end_to_end else 0.0)
    return now - (last if last is not None else joined) > first_bound


def consume_one(spec: ConsumerSpec) -> ConsumerReport:
    """One consumer of the group, until the record count, the duration or the idle timeout (both counted from its
    first assignment), or until the join bound passes with no assignment (``joined`` None: the caller fails it). The
    loop :mod:`kperf.drivers.loops` chooses reads; the windows, the group's shared count and the bounds are kept
    here, the same for every loop."""
    # A share consumer refuses a consumer group's settings (its group's are set on the group: kperf.kafka.share_groups).
    settings = {"group.id": spec.group, **SHARE_CONFIG, **spec.config} if spec.share is not None else {
        "group.id": spec.group, "auto.offset.reset": "earliest", "enable.auto.commit": False, **THROUGHPUT_CONFIG,
        **spec.config}
    reading = loops.consumer_loop(spec, clients.client_config(spec.bootstrap, settings))
    try:
        wait_for_peers()
        return _read(spec, reading)
    finally:
        reading.close()


def _read(spec: ConsumerSpec, reading: ConsumerLoop) -> ConsumerReport:
    subscribed, cpu_started = time.time(), time.process_time()
    windows = Snapshots(subscribed, spec.window_s)
    progress = Progress(f"consumer {os.getpid()} of {spec.topic}", subscribed, spec.duration_s, spec.progress_s)
    reading.subscribe()
    counted = 0  # of this consumer's records, those added to the group's total
    group_seen, group_moved = 0, None  # the group's total as last seen here, and when it last grew
    while (now := time.time()) < (deadline := _deadline(spec, subscribed, reading.joined)):
        if now >= windows.next_at:
            latencies = reading.window_bins()
            windows.take(now, reading.records, reading.bytes, latencies, sum(reading.errors().values()))
            progress.update(now, reading.records, latencies)
        shared = add_to_total(reading.records - counted)  # all consumers of a run stop once the group read enough
        counted = reading.records
        group_read = reading.records if shared is None else shared
        if group_read > group_seen:
            group_seen, group_moved = group_read, now
        if spec.records is not None and group_read >= spec.records:
            break
        stop_at = math.inf if spec.records is None else reading.records + spec.records - group_read
        if not reading.read(min(windows.next_at, deadline, now + TURN_S), stop_at) and reading.joined is not None \
                and _idle(spec, time.time(), reading.joined, reading.last, reading.live, group_moved):
            break  # (before joining, the deadline is the bound)
    ended = time.time()  # the series ends here: closing (leaving the group) is not reading
    reading.finish()
    return ConsumerReport(
        records=reading.records,
        bytes=reading.bytes,
        subscribed=subscribed,
        joined=reading.joined,
        assigned=reading.assigned,
        first=reading.first,
        last=reading.last,
        errors=reading.errors(),
        fetches=reading.fetches,
        ledger=reading.ledger(),
        e2e_histogram=reading.histogram(),
        windows=windows.close(ended, reading.records, reading.bytes, reading.window_bins(), sum(reading.errors().values())),
        loop=reading.name,
        cpu_s=time.process_time() - cpu_started,
        rss_peak_mib=resources.peak_rss_mib(),
        tally=reading.tally(),
    )

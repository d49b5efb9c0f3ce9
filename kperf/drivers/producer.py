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
import os
import secrets
import time
from collections import Counter
from dataclasses import dataclass

from kperf.drivers import latency, loops, resources, transactions
from kperf.drivers.disk_room import DiskWatch
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.peers import wait_for_peers
from kperf.drivers.loop import BEHIND, BOUNDARY, FULL, ProducerLoop
from kperf.drivers.progress import Progress
from kperf.drivers.specs import ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import groups, topics
from kperf.latency_bins import Bins
from kperf.results import Measurement
from kperf.series_building import Snapshot, Snapshots, snapshots_to_series

FLUSH_TIMEOUT_S = 120.0
# The longest the client's queue may stay full with no record sent: the brokers are taking none (they died, or are
# unreachable). Without it a loop would wait on librdkafka's own message.timeout.ms (five minutes by default) again
# and again, and a count-bounded run would never end.
QUEUE_FULL_TIMEOUT_S = FLUSH_TIMEOUT_S
TURN_S = 1.0  # the longest a loop runs before returning here (to take a window, or to let Ctrl-C through)
GAVE_UP = "GAVE_UP_BEHIND_SCHEDULE"  # records a paced producer did not send: it fell too far behind (give_up_behind_s)


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
    loop: str = "python"  # which loop measured it (kperf.drivers.loops)
    cpu_s: float = 0.0  # the process's CPU time (all its threads, librdkafka's too) from the first measured send to the end
    rss_peak_mib: float = 0.0  # the process's peak memory (resources.peak_rss_mib)
    transacted: transactions.Tally | None = None  # a transactional producer's transactions


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
        measures={**resources.load_costs(reports),
                  **(transactions.measures([r.transacted for r in reports if r.transacted is not None])
                     if spec.transactions is not None else {})},
        loop=loops.label(r.loop for r in reports),
    )


def produce_one(spec: ProducerSpec, producer_id: int) -> ProducerReport:
    """One producer: warm-up records, then the measured ones, paced or not, in the loop :mod:`kperf.drivers.loops`
    chooses; the time series' windows and the final drain are kept here, the same for every loop."""
    producing = loops.producer_loop(spec, producer_id)
    try:
        return _measured(spec, producing)
    finally:
        producing.close()


def _flushed(producing: ProducerLoop, until: float) -> int:
    """Acknowledgements served until none is outstanding or ``until``, a turn at a time; how many are outstanding."""
    remaining = producing.flush(min(TURN_S, max(0.0, until - time.time())))
    while remaining and time.time() < until:
        remaining = producing.flush(min(TURN_S, max(0.0, until - time.time())))
    return remaining


class _Progress:
    """When a loop last sent a record: its client's queue full with no record sent for QUEUE_FULL_TIMEOUT_S means
    the brokers take none, and the unit fails saying so (it would otherwise wait for ever)."""

    def __init__(self, spec: ProducerSpec, sent: int) -> None:
        self._spec, self._sent, self._moved = spec, sent, time.time()

    def returned(self, sent: int, full: bool) -> None:
        """The loop returned with ``sent`` records sent so far, its queue ``full`` or not."""
        now = time.time()
        if sent != self._sent:
            self._sent, self._moved = sent, now
        elif full and now - self._moved >= QUEUE_FULL_TIMEOUT_S:
            raise MeasurementFailed(f"the client's queue of records to {self._spec.topic} stayed full for "
                                    f"{QUEUE_FULL_TIMEOUT_S:.0f} s with no record sent: the brokers took none (are they "
                                    "up and reachable?)", "client queue stayed full", timed_out=True)


def _measured(spec: ProducerSpec, producing: ProducerLoop) -> ProducerReport:
    warming = _Progress(spec, producing.warmed)
    while not producing.warm_up(spec.warmup_records, time.time() + TURN_S):
        warming.returned(producing.warmed, full=True)
    if _flushed(producing, time.time() + FLUSH_TIMEOUT_S):
        raise MeasurementFailed(f"warm-up records to {spec.topic} were not acknowledged within {FLUSH_TIMEOUT_S:.0f} s",
                                "warm-up records not acknowledged", timed_out=True)
    if spec.after_groups:  # a group still forming would count its join as latency and lag
        groups.wait_formed(spec.bootstrap, spec.after_groups, spec.join_timeout_s)

    wait_for_peers()
    started, cpu_started = time.time(), time.process_time()
    producing.start(started)
    # Acknowledgements are counted as the loop serves them. No series: no boundary.
    windows = Snapshots(started, spec.window_s if spec.record_series else math.inf)
    mine: Counter[str] = Counter()  # what the loop did not send: GAVE_UP, NOT_DELIVERED_IN_TIME

    def counted() -> tuple[int, int, Bins, int]:
        """What a snapshot of the series holds: acknowledged, bytes, latencies since the last, errors."""
        acked, size, failed = producing.counts()
        return acked, size, producing.window_bins(), failed + sum(mine.values())

    progress = Progress(f"producer {os.getpid()} to {spec.topic}", started, spec.duration_s, spec.progress_s)
    disk = DiskWatch(spec.disk_folder)

    def window_passed(now: float) -> None:
        """The series' snapshot at a window boundary, shown as progress; the brokers' disk checked."""
        taken = counted()
        windows.take(now, *taken)
        progress.update(now, taken[0], taken[2])
        disk.check()

    deadline = started + spec.duration_s if spec.duration_s is not None else math.inf
    total = spec.records if spec.records is not None else math.inf
    # A loop is called for a window, or a turn at most, so Ctrl-C is seen within one (a native loop runs in C).
    sending = _Progress(spec, producing.sent)
    while (ended := producing.run(min(windows.next_at, time.time() + TURN_S), deadline, total)) in (BOUNDARY, FULL):
        sending.returned(producing.sent, full=ended == FULL)
        if (now := time.time()) >= windows.next_at:
            window_passed(now)
    if ended == BEHIND:  # too far behind to carry this rate: the records it did not send, said so
        planned = spec.records if spec.records is not None else math.ceil((deadline - started) * spec.rate)
        mine[GAVE_UP] += planned - producing.sent
    stopped = now = time.time()
    remaining, flush_until = producing.flush(0.0), stopped + FLUSH_TIMEOUT_S
    while remaining and now < flush_until:  # flushed up to each window boundary, so the drain is in the series
        remaining = producing.flush(max(0.0, min(windows.next_at, flush_until, now + TURN_S) - now))
        now = time.time()  # flush returns on the last acknowledgement: when it did is ``finished``
        if remaining and now >= windows.next_at:
            window_passed(now)
    if remaining:
        mine["NOT_DELIVERED_IN_TIME"] += remaining
    acked, size, _ = producing.counts()
    ack_histogram, intended_histogram = producing.histograms()
    return ProducerReport(
        acked=acked,
        bytes=size,
        started=started,
        finished=now,
        errors=dict(Counter(producing.errors()) + mine),
        ack_histogram=ack_histogram,
        intended_histogram=intended_histogram,
        windows=windows.close(now, *counted()),
        stopped=stopped,
        acks=producing.acks(),
        loop=producing.name,
        cpu_s=time.process_time() - cpu_started,
        rss_peak_mib=resources.peak_rss_mib(),
        transacted=producing.transactions(),
    )

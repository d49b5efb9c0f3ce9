"""A steady producer while a fault hits a broker (:mod:`kperf.drivers.fault_kinds`: killed and restarted, paused
and resumed, or the user's own commands), and what it cost the producer.

What a user needs to trust a setting is what the fault cost: acknowledged
records that were lost (every record carries its producer id and sequence
number; after the run the whole topic is read back and compared with the
acknowledged set), duplicates, how long no acknowledgement arrived, how far
throughput and latency dipped during the fault and after it, how long the
producer took to be back at its calm latency (:mod:`kperf.fault_recovery`),
how long Kafka took to drop the broker from the ISR and to take it back, and
whether the broker hit was the active controller. A consumer group reads the
topic as it is written, committing every second, and its lag is sampled
(:mod:`kperf.drivers.lag_sampler`): how far it rose and when it was back at its
calm level. Where the brokers' metrics are readable, their replica gauges are
read in rounds (:mod:`kperf.drivers.replica_watch`): partitions
under-replicated, and leaderships moved.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from confluent_kafka import Consumer, KafkaException

from kperf import fault_recovery, group_disruption, replica_view
from kperf.drivers import fault_kinds, latency, resources
from kperf.drivers.consumer import consume_one, require_formed
from kperf.drivers.fault_kinds import Injector
from kperf.drivers.lag_sampler import COMMIT_INTERVAL_MS, LAG_SAMPLE_S, LagSampler
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.load_hosts.local import run_here
from kperf.drivers.producer import ProducerReport, produce_one
from kperf.drivers.replica_watch import ROUND_S, ReplicaWatch
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import clients, groups, quorum, topics
from kperf.kafka.broker_metrics import BrokerMetrics
from kperf.load import ISR_TIMEOUT_S, WINDOW_S, Fault
from kperf.results import FAILED_SENDS, Measurement, Verification
from kperf.series_building import ResourceSample, snapshots_to_series, with_resources

READ_BACK_IDLE_S = 5.0  # reading back stops when nothing arrived for this long (or at the topic's settled count)
SETTLE_S = 1.0  # a topic's count asked this far apart, twice the followers' longest fetch wait (500 ms by default)
START_TIMEOUT_S = 60.0  # the producer's measured records must begin to arrive within this (its process spawned)


def _isr_full(bootstrap: str, topic: str, replicas: int, until: float | None = None) -> bool | None:
    """Whether every partition of ``topic`` has ``replicas`` in-sync replicas (None: no answer right now, or none
    before the wall-clock time ``until``: a fault's end is never held up by a broker slow to answer)."""
    timeout = clients.REACH_TIMEOUT_S if until is None else max(0.2, until - time.time())
    try:
        partitions = clients.metadata(bootstrap, timeout=timeout).topics[topic].partitions.values()
    except (KperfError, KeyError):
        return None  # a broker in the middle of restarting: ask again
    return all(len(p.isrs) == replicas for p in partitions)


def _beyond(watcher: Consumer, topic: str, records: int) -> bool:
    """Whether ``topic`` holds more than ``records`` records (a producer's warm-up): its measured ones arrive."""
    try:
        return topics.holding(watcher, topic, timeout=5) > records  # held: a primed topic's log starts at 1
    except (KafkaException, KeyError):
        return False  # no answer right now: ask again


def wait_until(condition: Callable[[], bool], until: float) -> float | None:
    """Wall-clock time when the first check that found ``condition()`` holding began, or None if no check
    begun before ``until`` found it. A check (a metadata request) can end after ``until``: its start is
    what says the condition held before then."""
    while (began := time.time()) < until:
        if condition():
            return began
        time.sleep(0.1)
    return None


def under_fault(spec: ProducerSpec, fault: Fault, replicas: int, metrics: BrokerMetrics | None = None) -> Measurement:
    """Produce ``spec`` (paced, acknowledgements tracked) while ``fault`` acts from ``fault.at_s`` to ``fault.end_s``
    seconds into its measured records, a consumer group reading along (its lag sampled) and, with ``metrics``, the
    brokers' replica gauges read; then read the topic back and count."""
    tail = groups.fresh_name("fault-tail")
    spec = replace(spec, track_acks=True, after_groups=((tail, 1),))  # its clock starts once the reading group formed
    spec.check()
    hit = fault_kinds.injector(fault, spec.bootstrap, spec.topic)
    controller = math.nan if hit.node_id is None else float(quorum.active_controller(spec.bootstrap) == hit.node_id)
    led = led_by(spec.bootstrap, spec.topic, hit.node_id)
    producer_id = secrets.randbits(31)
    report: list[ProducerReport] = []
    failure: list[BaseException] = []

    def run(results: list[Any], function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        try:
            results.extend(run_here(function, [(args, kwargs)]))  # a process of its own
        except BaseException as exc:  # re-raised in the calling thread once the fault is undone
            failure.append(exc)

    reading = threading.Thread(target=run, args=([], consume_one, _tail_spec(spec, fault, tail)),
                               name="kperf-fault-reader")
    producing = threading.Thread(target=run, args=(report, produce_one, spec), kwargs={"producer_id": producer_id},
                                 name="kperf-fault-producer")
    partitions = len(clients.metadata_with(spec.bootstrap, spec.topic).topics[spec.topic].partitions)
    lag = LagSampler(spec.bootstrap, spec.topic, tail, partitions)
    watch = ReplicaWatch(metrics) if metrics is not None and metrics.exporters else None
    for thread in (reading, producing, lag, *([watch] if watch else [])):
        thread.start()
    try:
        times = _faulted(hit, spec, fault, replicas, producing, failure)
    finally:  # no producer or reader left after an error: their own bounds end them
        try:
            producing.join()
        finally:
            samples = lag.stop()
            rounds = watch.stop() if watch is not None else []
            reading.join()
    if (left := hit.left()) is not None:
        raise KperfError(left)
    if failure:
        raise failure[0]
    (produced,) = report
    reader = ConsumerSpec(spec.bootstrap, spec.topic, records=settled_count(spec.bootstrap, spec.topic, times),
                          idle_timeout_s=READ_BACK_IDLE_S, group=groups.fresh_name())
    (read,) = run_here(consume_one, [((reader,), {})])
    require_formed(reader, [read])  # else every record would pass for lost
    sampled = [(t, v) for t, v, _ in samples if t <= produced.stopped]  # a lag drained unloaded is no recovery
    calm = fault_recovery.calm_from(produced.started, times.began)
    measured = seen_along(outage(produced, producer_id, read.ledger, times, spec.window_s, led), sampled, rounds,
                          calm, times, max(spec.rate, 0) * COMMIT_INTERVAL_MS / 1000)
    return replace(measured, measures={**measured.measures, "fault_controller": controller,
                                       "fault_node": math.nan if hit.node_id is None else float(hit.node_id)})


def seen_along(measured: Measurement, lag: list[tuple[float, int]], rounds: list[replica_view.Round], calm: float,
               times: Timeline, swing: float) -> Measurement:
    """``measured`` with what the group reading along and the brokers saw: the lag's cost (a lag within ``swing``
    records, one commit interval's, of its calm level is calm), the replicas', the time until both the producer
    and the group were back (``full_recovery_s``), and the lag and the under-replicated partitions per window."""
    seen = {**measured.measures, **group_disruption.fault_lag(lag, calm, times.began, times.ended, swing),
            **replica_view.cost(rounds, times.began, times.ended)}
    back = (seen["recovery_s"], seen["lag_recovery_s"])
    seen["full_recovery_s"] = math.nan if any(math.isnan(s) for s in back) else max(back)
    series = measured.series and with_resources(measured.series, [
        *(ResourceSample(t, LAG_SAMPLE_S, {"group_lag_records": float(v)}) for t, v in lag),
        *(ResourceSample(r.at, ROUND_S, {"broker_under_replicated": sum(r.under_replicated.values())})
          for r in rounds if r.under_replicated)])
    return replace(measured, series=series, measures=seen)


def settled_count(bootstrap: str, topic: str, times: Timeline) -> int | None:
    """The records ``topic`` holds once its count stopped changing (two asks SETTLE_S apart agree), when every ISR
    was full again after the fault (its high watermarks then move only as followers fetch the last records): the
    read back then stops at its last record, not READ_BACK_IDLE_S after it. None (read until idle) otherwise."""
    if times.full_at is None:
        return None
    deadline = time.time() + READ_BACK_IDLE_S
    try:
        count = topics.held(bootstrap, topic)
        while time.time() < deadline:
            time.sleep(SETTLE_S)
            before, count = count, topics.held(bootstrap, topic)
            if before == count:
                return count or None
    except KperfError:  # not counted now: read until idle
        pass
    return None


def _tail_spec(spec: ProducerSpec, fault: Fault, group: str) -> ConsumerSpec:
    """The group reading along, committing every second: until it read every record the producer will send, or
    (a record lost, a producer sending for a duration) once nothing arrived for the fault's length and
    READ_BACK_IDLE_S more."""
    return ConsumerSpec(
        spec.bootstrap, spec.topic,
        records=None if spec.records is None else spec.records + spec.warmup_records * spec.producers,
        idle_timeout_s=READ_BACK_IDLE_S + fault.end_s - fault.at_s, group=group, window_s=spec.window_s,
        config={"enable.auto.commit": True, "auto.commit.interval.ms": COMMIT_INTERVAL_MS})


def _faulted(hit: Injector, spec: ProducerSpec, fault: Fault, replicas: int, producing: threading.Thread,
             failure: list[BaseException]) -> Timeline:
    """The fault's timeline, its clock started when the measured records began to arrive, not with the
    spawn of their process. If none arrive in time, it starts anyway: the producer's own record then says what
    it failed to send. A producer or reader that failed before the load began gets no fault for nothing."""
    spawned = time.time()
    watcher = clients.consumer(spec.bootstrap, {"group.id": "kperf-fault-watch"})
    try:
        started = wait_until(lambda: bool(failure) or not producing.is_alive()
                             or _beyond(watcher, spec.topic, spec.warmup_records * spec.producers),
                             spawned + spec.join_timeout_s + START_TIMEOUT_S) or time.time()
    finally:
        watcher.close()
    if failure:
        raise failure[0]
    return _inject_and_undo(hit, spec, fault, replicas, started)


def led_by(bootstrap: str, topic: str, node_id: int | None) -> frozenset[int] | None:
    """The partitions of ``topic`` node ``node_id`` leads now (None: kperf does not know the node a fault hits)."""
    if node_id is None:
        return None
    return frozenset(p.id for p in clients.metadata_with(bootstrap, topic).topics[topic].partitions.values()
                     if p.leader == node_id)


def _inject_and_undo(hit: Injector, spec: ProducerSpec, fault: Fault, replicas: int, started: float) -> Timeline:
    """Inject ``hit`` and undo it at ``fault``'s times from ``started``, watching ``spec.topic``'s ISR shrink and
    fill again: the fault's timeline."""
    _sleep_until(started + fault.at_s)
    began = time.time()
    end = started + fault.end_s
    try:
        hit.inject()
        shrunk_at = wait_until(lambda: _isr_full(spec.bootstrap, spec.topic, replicas, until=end) is False, until=end)
        _sleep_until(end)
    except BaseException as exc:  # whatever happens meanwhile (an interrupt too), the fault is undone
        try:
            hit.undo()
        except Exception as undoing:  # the first error stays the one raised; the user learns of both
            exc.add_note(f"undoing the fault failed too: {undoing}")
        raise
    ended = time.time()
    hit.undo()
    # Serving first: until Kafka has fenced a dead broker, the ISR may still list it as in sync.
    full_at = None
    if wait_until(hit.back, until=ended + ISR_TIMEOUT_S):
        full_at = wait_until(lambda: _isr_full(spec.bootstrap, spec.topic, replicas) is True,
                             until=ended + ISR_TIMEOUT_S)
    return Timeline(began, shrunk_at, ended, full_at)


def _sleep_until(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))


def acked_bits(sequences: np.ndarray) -> int:
    """Sequence numbers as a bit set, as ``SequenceLedger.bits`` gives what was read back."""
    if not len(sequences):
        return 0
    flags = np.zeros(int(sequences.max()) + 1, dtype=bool)
    flags[sequences] = True
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


@dataclass(frozen=True)
class Timeline:
    """Wall-clock times of the fault: its start, the ISR shrinking (Kafka noticed; None if it did not before the
    fault's end), its end (undone: restarted, resumed, the stop command run), and every ISR full again (None: not
    within ISR_TIMEOUT_S)."""

    began: float
    shrunk_at: float | None
    ended: float
    full_at: float | None


def longest_wait(partitions: np.ndarray, ack_times: np.ndarray, began: float, finished: float) -> float:
    """The longest time any partition went without an acknowledgement from the fault on: from its start to the
    partition's first one after it, or between two (a partition acked nothing after it: until the end)."""
    longest = 0.0
    for partition in np.unique(partitions):
        times = np.sort(ack_times[(partitions == partition) & (ack_times >= began)])
        longest = max(longest, float(np.diff(np.concatenate([[began], times, [finished]])).max()))
    return longest


def outage(
    produced: ProducerReport, producer_id: int, ledger: SequenceLedger, times: Timeline, window_s: float = WINDOW_S,
    led: frozenset[int] | None = None,
) -> Measurement:
    """What the fault cost, from the acknowledged records and what reading the topic back found.

    Before-the-fault figures use records sent in its second half only: the first seconds include
    connecting and, for idempotent producers, getting a producer id. The time series holds the whole run,
    and its load is counted as ending at the fault: the steady state is the one before it."""
    acks = np.array(produced.acks, dtype=float).reshape(-1, 4)  # sequence, partition, ack time, intended time
    lost = (acked_bits(acks[:, 0].astype(np.int64)) & ~ledger.bits(producer_id)).bit_count()
    return Measurement(
        role="producer",
        client="python",
        records=produced.acked,
        bytes=produced.bytes,
        seconds=produced.finished - produced.started,
        latency_ms={kind: latency.summary(latency.merge([encoded])) for kind, encoded in
                    (("ack", produced.ack_histogram), ("intended", produced.intended_histogram))},
        errors=dict(produced.errors),
        verification=Verification(expected=produced.acked, missing=lost, duplicated=ledger.duplicated),
        series=snapshots_to_series([produced.windows], [min(produced.stopped, times.began)], "intended",
                                   width_s=window_s),
        measures={
            "acked_lost": float(lost),
            FAILED_SENDS: float(sum(produced.errors.values())),
            "duplicated": float(ledger.duplicated),
            **resources.load_costs([produced]),
            **_cost(produced, acks, times, window_s),
            **_split(acks, times, led),
        },
        loop=produced.loop,
    )


def _split(acks: np.ndarray, times: Timeline, led: frozenset[int] | None) -> dict[str, float]:
    """During the fault, the partitions the broker it hit led at its start against the others: the intended-time p99
    of the records meant to be sent then, and the acknowledgements per second then (NaN where kperf does not know
    the broker, or a side has no partition)."""
    found = {}
    meant = (acks[:, 3] >= times.began) & (acks[:, 3] < times.ended)  # meant to be sent during the fault
    acked = (acks[:, 2] >= times.began) & (acks[:, 2] < times.ended)  # acknowledged during it
    mine = np.isin(acks[:, 1], sorted(led or ()))
    latency_ms = (acks[:, 2] - acks[:, 3]) * 1000
    for side, chosen in (("led", mine), ("others", ~mine)):
        known = led is not None and bool(chosen.any())
        found[f"p99_during_fault_{side}_ms"] = _p99(latency_ms, meant & chosen) if known else math.nan
        found[f"rate_during_fault_{side}"] = (float((acked & chosen).sum()) / (times.ended - times.began) if known
                                              else math.nan)
    return found


def _p99(latency_ms: np.ndarray, chosen: np.ndarray) -> float:
    return float(np.percentile(latency_ms[chosen], 99)) if chosen.any() else math.nan


def _cost(produced: ProducerReport, acks: np.ndarray, times: Timeline, window_s: float) -> dict[str, float]:
    """What the fault cost in time: the longest a partition went without an acknowledgement, the acknowledgements
    per second before it and their low from it on, the intended-time p99 before, during and after it, the time
    back to the calm, and when Kafka noticed and recovered."""
    began, ended = times.began, times.ended
    ack_times = np.sort(acks[:, 2])
    seconds = np.floor(ack_times - produced.started).astype(int)
    per_second = np.bincount(seconds) if len(seconds) else np.array([0])
    fault_second = int(began - produced.started)
    from_fault = per_second[fault_second:-1]  # whole seconds only: the last one is cut short by the end
    latency_ms = (acks[:, 2] - acks[:, 3]) * 1000
    intended = acks[:, 3]
    before = (intended >= fault_recovery.calm_from(produced.started, began)) & (acks[:, 2] < began)
    during = (intended >= began) & (intended < ended)
    return {
        "no_ack_s": longest_wait(acks[:, 1], acks[:, 2], began, produced.finished),
        "rate_before": float(np.median(per_second[fault_second // 2:fault_second])) if fault_second > 0 else math.nan,
        "rate_min_from_fault": float(from_fault.min()) if len(from_fault) else 0.0,
        "p99_before_ms": _p99(latency_ms, before),
        "p99_during_fault_ms": _p99(latency_ms, during),
        "max_during_fault_ms": float(latency_ms[during].max()) if during.any() else math.nan,
        "p99_after_fault_ms": _p99(latency_ms, intended >= ended),
        "recovery_s": fault_recovery.recovery_s(intended, acks[:, 2], produced.started, began, ended, produced.stopped,
                                                window_s),
        "isr_shrink_s": math.nan if times.shrunk_at is None else times.shrunk_at - began,
        "isr_recovery_s": math.nan if times.full_at is None else times.full_at - ended,
        "fault_at_s": began - produced.started,
        "fault_end_s": ended - produced.started,
    }

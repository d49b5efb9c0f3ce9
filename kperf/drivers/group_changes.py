"""The rebalance experiment's measurement: a consumer group reading a paced producer while one member joins,
leaves cleanly or is killed, and what that cost the group's reading.

The members are processes of their own (:mod:`kperf.drivers.group_member`), so a kill is a crash (SIGKILL: no
leave, its partitions wait for the session time-out) and a leave is a close. They commit every second
(:data:`COMMIT_INTERVAL_MS`, unless the point's settings say otherwise), and a sampler here reads the group's
lag (end offsets minus committed offsets) every :data:`LAG_SAMPLE_S`. Both protocols get the same session
time-out, the lowest both allow on the cluster (:func:`kperf.kafka.groups.session_timeout_floor`): the classic
one as the members' ``session.timeout.ms``, KIP-848's as the group's ``consumer.session.timeout.ms`` (a broker
setting a group may lower to the brokers' floor). Heartbeats keep each protocol's default, as recorded.

What the change cost is computed by :mod:`kperf.group_disruption` from what the members reported and the lag
sampled; a group that did not form, or did not recover within the change's ``recover_s``, is a failed unit.
"""

from __future__ import annotations

import json
import math
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kperf import group_disruption
from kperf.drivers.group_member import MemberSpec
from kperf.drivers.lag_sampler import COMMIT_INTERVAL_MS, LAG_SAMPLE_S, LagSampler
from kperf.drivers.load_hosts.local import run_here
from kperf.drivers.producer import ProducerReport, produce_one
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import groups
from kperf.load import GroupChange
from kperf.processes import die_with_parent
from kperf.results import Measurement
from kperf.series import Series
from kperf.series_building import ResourceSample, Snapshots, snapshots_to_series, with_resources

START_TIMEOUT_S = 60.0  # the producer's first records must reach the topic within this of its spawn
STOP_TIMEOUT_S = 30.0  # a member told to leave must have closed within this (then it is killed)
CALM_FROM_S = 1.0  # the calm lag is the highest sampled from this far into the load (after the first commits) ...
DRAIN_TIMEOUT_S = 30.0  # after the producer stopped, the group must have read and committed every record within this
NOT_RECOVERED = "consumer group did not recover"  # the MeasurementFailed cause


@dataclass
class Member:
    """A member process and what it reported so far (its reader thread appends)."""

    name: str
    process: subprocess.Popen[str]
    reports: list[dict[str, Any]] = field(default_factory=list)

    def read_reports(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self.reports.append(json.loads(line))

    def first(self, key: str, value: Any = None) -> float | None:
        return next((r["t"] for r in self.reports if key in r and (value is None or r[key] == value)), None)


def _spawn(spec: MemberSpec, name: str) -> Member:
    process = subprocess.Popen([sys.executable, "-m", "kperf.drivers.group_member", spec.to_json()],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                               text=True, preexec_fn=die_with_parent)
    member = Member(name, process)
    threading.Thread(target=member.read_reports, name=f"kperf-member-{name}", daemon=True).start()
    return member


def check(producer: ProducerSpec, change: GroupChange) -> None:
    """Refuse, before load, a change the producer's load does not outlast: its rate must be paced, and it must
    still send for ``recover_s`` after the change (a lag drained once the producer stopped is no recovery)."""
    change.check()
    if producer.rate <= 0 or producer.records is None:
        raise KperfError("a group change is measured under a paced producer: give it a rate and a record count")
    if producer.records / producer.rate < change.at_s + change.recover_s:
        raise KperfError(f"the producer sends for {producer.records / producer.rate:g} s, less than the change's "
                         f"time ({change.at_s:g} s) and its time to recover ({change.recover_s:g} s) together")


def check_timeout(bootstrap: str, change: GroupChange) -> int:
    """The session time-out both protocols get on ``bootstrap`` (ms); a kill given no more than it to recover is
    refused, before load (a killed member's partitions wait for it)."""
    timeout_ms = groups.session_timeout_floor(bootstrap)
    if change.event == "kill" and change.recover_s * 1000 <= timeout_ms:
        raise KperfError(f"a killed member's partitions wait for the session time-out ({timeout_ms} ms on this "
                         f"cluster): give the kill more than that to recover (recover_s {change.recover_s:g})")
    return timeout_ms


def run(producer: ProducerSpec, consumer: ConsumerSpec, change: GroupChange, partitions: int) -> Measurement:
    """Form a group of ``change.members`` on ``consumer.topic``, start ``producer``, make the change at
    ``change.at_s`` into its load, and measure: the group's reading (its series, with the lag sampled), its
    forming, and the change's cost (:mod:`kperf.group_disruption`)."""
    check(producer, change)
    protocol = str(consumer.config.get("group.protocol", "classic")).lower()
    timeout_ms = check_timeout(consumer.bootstrap, change)
    group = groups.fresh_name("rebalance")
    config: dict[str, Any] = {"auto.commit.interval.ms": COMMIT_INTERVAL_MS, **consumer.config,
                              "enable.auto.commit": True}
    settings: dict[str, str] = {}
    if protocol == "consumer":  # KIP-848: the session time-out is the group's, not the member's
        settings["consumer.session.timeout.ms"] = str(timeout_ms)
    else:
        config["session.timeout.ms"] = timeout_ms
    member_spec = MemberSpec(consumer.bootstrap, consumer.topic, group, config)
    with groups.configured(consumer.bootstrap, group, settings, "consumer group"):
        members: list[Member] = []
        sampler = LagSampler(consumer.bootstrap, consumer.topic, group, partitions)
        try:
            members += [_spawn(member_spec, f"m{i}") for i in range(change.members)]
            return _measure(producer, consumer, change, partitions, members, member_spec, sampler, timeout_ms)
        finally:  # every member gone before the group is deleted (a member still in it would keep it)
            sampler.stop()
            _stop(members)


def _measure(producer: ProducerSpec, consumer: ConsumerSpec, change: GroupChange, partitions: int,
             members: list[Member], member_spec: MemberSpec, sampler: LagSampler, timeout_ms: int) -> Measurement:
    spawned = time.time()
    everyone = frozenset(m.name for m in members)
    formed_at = _wait_balanced(members, partitions, everyone, spawned, spawned + consumer.join_timeout_s)
    if formed_at is None:
        raise MeasurementFailed(f"consumer group of {len(members)} did not form within {consumer.join_timeout_s:g} s "
                                f"on {consumer.bootstrap}", groups.NOT_FORMED, timed_out=True)
    sampler.start()
    report: list[ProducerReport] = []
    failure: list[BaseException] = []

    def run_producer() -> None:
        try:
            report.extend(run_here(produce_one, [((producer,), {"producer_id": secrets.randbits(31)})]))
        except BaseException as exc:  # re-raised here once the change is over
            failure.append(exc)

    producing = threading.Thread(target=run_producer, name="kperf-group-producer")
    producing.start()
    try:
        loaded = sampler.started_at(START_TIMEOUT_S, producing)
        time.sleep(max(0.0, loaded + change.at_s - time.time()))
        changed_at, after, gone = _change(change.event, members, member_spec)
    except MeasurementFailed:
        producing.join()
        if failure:  # the producer's own failure is why its records did not arrive
            raise failure[0] from None
        raise
    finally:
        producing.join()
    if failure:
        raise failure[0]
    (produced,) = report
    _drain(members, sampler, produced.acked)
    until = min(changed_at + change.recover_s, produced.stopped)  # recovery counts only under the producer's load
    lag = [(t, v) for t, v, _ in sampler.samples if t <= until]
    cost = group_disruption.lag_cost(lag, loaded + CALM_FROM_S, changed_at)
    rebalanced_at = group_disruption.balanced_at(_assignments(members), partitions, after, changed_at, gone)
    if rebalanced_at is None or rebalanced_at > until or math.isnan(cost.recovered_s):
        raise MeasurementFailed(
            f"the consumer group had not {'rebalanced' if rebalanced_at is None or rebalanced_at > until else 'drained its lag'} "
            f"{change.recover_s:g} s after the {change.event} (lengthen recover_s if the cluster is slower)",
            NOT_RECOVERED, timed_out=True)
    recovered_at = changed_at + max(cost.recovered_s, rebalanced_at - changed_at)
    reads = [r["t"] for m in members for r in m.reports if "read" in r]
    measures = {
        "members": float(change.members),
        "session_timeout_ms": float(timeout_ms),
        "form_s": formed_at - max(m.first("event", "subscribed") or spawned for m in members[:change.members]),
        "rebalance_s": rebalanced_at - changed_at,
        "pause_s": group_disruption.longest_pause(reads, changed_at, recovered_at),
        "lag_calm_records": float(cost.calm_records),
        "lag_peak_records": float(cost.peak_records),
        "recovered_s": cost.recovered_s,
        "offered_records_per_s": produced.acked / max(produced.finished - produced.started, 1e-9),
    }
    if change.event == "join":
        joined = members[-1]
        assigned = next((r["t"] for r in joined.reports if r.get("assigned")), None)  # its first partitions
        measures["join_s"] = math.nan if assigned is None else assigned - changed_at
    records, size, series = _reading(members, loaded, produced.stopped, consumer.window_s, sampler.samples)
    return Measurement(role="consumer", client="python", records=records, bytes=size,
                       seconds=produced.stopped - loaded, measures=measures, series=series)


def _drain(members: list[Member], sampler: LagSampler, produced: int) -> None:
    """Wait, within :data:`DRAIN_TIMEOUT_S`, until the group committed every record (no lag) and its members
    reported reading at least the ``produced`` ones: the group read the whole load."""
    deadline = time.time() + DRAIN_TIMEOUT_S
    while time.time() < deadline:
        last = sampler.samples[-1] if sampler.samples else None
        if last is not None and last[1] == 0 and last[2] >= produced and _read(members)[0] >= produced:
            return
        time.sleep(LAG_SAMPLE_S)
    raise MeasurementFailed(f"the consumer group had not read and committed the {produced:,} records produced "
                            f"{DRAIN_TIMEOUT_S:g} s after the producer stopped", NOT_RECOVERED, timed_out=True)


def _read(members: list[Member]) -> tuple[int, int]:
    """Records and bytes the members reported reading, together."""
    last = [next((r for r in reversed(m.reports) if "read" in r), {"read": 0, "bytes": 0}) for m in members]
    return sum(r["read"] for r in last), sum(r["bytes"] for r in last)


def _change(event: str, members: list[Member], spec: MemberSpec) -> tuple[float, frozenset[str], dict[str, float]]:
    """Make the change: its time, the members that should share the partitions after it, and any killed member
    with the time it stopped counting."""
    names = frozenset(m.name for m in members)
    changed_at = time.time()
    if event == "join":  # it joins when it subscribes: its process's start (Python, the client library) comes before
        joiner = _spawn(spec, f"m{len(members)}")
        members.append(joiner)
        while (subscribed := joiner.first("event", "subscribed")) is None:
            if joiner.process.poll() is not None or time.time() > changed_at + STOP_TIMEOUT_S:
                raise MeasurementFailed(f"the joining member did not subscribe within {STOP_TIMEOUT_S:g} s of its start",
                                        "group member did not start", timed_out=True)
            time.sleep(LAG_SAMPLE_S / 4)
        return subscribed, names | {joiner.name}, {}
    victim = members[-1]
    if event == "leave":
        victim.process.send_signal(signal.SIGTERM)
        return changed_at, names - {victim.name}, {}
    victim.process.send_signal(signal.SIGKILL)
    victim.process.wait(timeout=STOP_TIMEOUT_S)
    return changed_at, names - {victim.name}, {victim.name: changed_at}


def _assignments(members: list[Member]) -> list[group_disruption.Assignment]:
    return [(r["t"], m.name, frozenset(r["assigned"])) for m in members for r in m.reports if "assigned" in r]


def _wait_balanced(members: list[Member], partitions: int, names: frozenset[str], after: float,
                   deadline: float) -> float | None:
    """When ``names`` first shared the partitions, waiting until ``deadline``; None if they had not by then."""
    while time.time() < deadline:
        found = group_disruption.balanced_at(_assignments(members), partitions, names, after)
        if found is not None:
            return found
        if any(m.process.poll() is not None for m in members):
            raise MeasurementFailed("a group member exited while the group formed", "group member exited")
        time.sleep(LAG_SAMPLE_S / 2)
    return None


def _stop(members: list[Member]) -> None:
    """Every member told to leave, each killed if it has not closed within :data:`STOP_TIMEOUT_S`."""
    for member in members:
        if member.process.poll() is None:
            member.process.send_signal(signal.SIGTERM)
    for member in members:
        try:
            member.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            member.process.kill()
            member.process.wait()


def _reading(members: list[Member], loaded: float, stopped: float, width_s: float,
             lag: list[tuple[float, int, int]]) -> tuple[int, int, Series]:
    """Records and bytes the members read (a killed member's up to its death; records read again after a
    rebalance count again), and the group's series from the load's start, with the sampled lag per window."""
    snapshots = []
    for member in members:
        reads = [r for r in member.reports if "read" in r]
        if not reads:
            continue
        taken = Snapshots(loaded, width_s)
        for r in reads:
            if r["t"] >= taken.next_at:
                taken.take(r["t"], r["read"], r["bytes"])
        last = reads[-1]
        snapshots.append(taken.close(max(last["t"], loaded), last["read"], last["bytes"]))
    series = snapshots_to_series(snapshots, [stopped], began=[loaded], width_s=width_s)
    samples = [ResourceSample(t, LAG_SAMPLE_S, {"group_lag_records": float(v)}) for t, v, _ in lag]
    return (*_read(members), with_resources(series, samples))

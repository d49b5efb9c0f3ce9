"""The fault experiment: a steady producer while one broker is killed (SIGKILL) and later restarted.

What a user needs to trust a setting is what the failure cost: acknowledged
records that were lost (every record carries its producer id and sequence
number; after the run the whole topic is read back and compared with the
acknowledged set), duplicates, how long no acknowledgement arrived, how far
throughput and latency dipped, and how long the restarted broker took to be
back in every partition's ISR.

The broker killed is the leader of partition 0 when the point starts, found
by its listening port among the Kafka JVMs on this host, so the experiment
runs against kperf's local cluster or any cluster whose brokers run on this
machine. It is restarted with the command line, environment and folder it had,
in a session of its own and without kperf's die-with-parent link (it would
die with the notebook kernel that restarted it), and the cluster's state file
then names the new process, so stopping the cluster stops it.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import psutil
from confluent_kafka import Consumer, KafkaException, TopicPartition

from kperf.drivers import latency, resources
from kperf.drivers.consumer import consume_one, require_formed
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.load_hosts.local import run_here
from kperf.drivers.producer import ProducerReport, produce_one
from kperf.drivers.resources import is_kafka_server
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import clients, cluster, groups
from kperf.load import ISR_TIMEOUT_S, WINDOW_S, Fault
from kperf.results import FAILED_SENDS, Measurement, Verification
from kperf.series_building import snapshots_to_series

READ_BACK_IDLE_S = 5.0  # reading back stops when nothing arrived for this long
KILL_TIMEOUT_S = 30.0
START_TIMEOUT_S = 60.0  # the producer's measured records must begin to arrive within this (its process spawned)


@dataclass(frozen=True)
class Victim:
    """The broker to kill: its node id, port, process and how to start it again."""

    node_id: int
    port: int
    process: psutil.Process
    argv: list[str]
    environ: dict[str, str]
    cwd: str


def leader_port(bootstrap: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(node id, port) of the broker leading ``topic``'s ``partition``."""
    meta = clients.metadata(bootstrap)
    leader = meta.topics[topic].partitions[partition].leader
    broker = meta.brokers.get(leader)
    if broker is None:
        raise KperfError(f"partition {partition} of {topic} has no leader to kill")
    return leader, broker.port


def broker_ports(bootstrap: str) -> list[tuple[int, int]]:
    """(node id, port) of every live broker."""
    return sorted((b.id, b.port) for b in clients.metadata(bootstrap).brokers.values())


def find_broker(node_id: int, port: int) -> Victim:
    """The Kafka JVM on this host listening on ``port``, or a clear error (a remote cluster's brokers cannot be killed)."""
    for proc in psutil.process_iter():
        try:
            if is_kafka_server(proc) and listening(proc, port):
                return Victim(node_id, port, proc, proc.cmdline(), proc.environ(), proc.cwd())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    raise KperfError(
        f"the fault experiment kills a broker, but broker {node_id} (port {port}) is not a Kafka process on this "
        "host: run it against kperf's local cluster (or brokers on this machine)"
    )


def kill(victim: Victim) -> None:
    """SIGKILL: no clean shutdown, no leadership handed over, unflushed pages as the kernel left them."""
    victim.process.send_signal(signal.SIGKILL)
    # Dead once gone or a zombie: its parent (the cluster's owner, often another process) reaps it later.
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if victim.process.status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise KperfError(f"broker {victim.node_id} (pid {victim.process.pid}) was still running {KILL_TIMEOUT_S:.0f} s after SIGKILL")


def restart(victim: Victim) -> psutil.Process:
    """Start the killed broker again as it was started, and record it in its cluster's state file."""
    log = _server_properties(victim.argv)
    with open(log.parent / "stdout.log" if log else os.devnull, "ab") as out:
        proc = subprocess.Popen(
            victim.argv, env=victim.environ, cwd=victim.cwd, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )
    restarted = psutil.Process(proc.pid)
    if log is not None:
        cluster.record_restart(log.parent.parent, victim.node_id, restarted)
    return restarted


def _server_properties(argv: list[str]) -> Path | None:
    """The broker's ``server.properties`` (kperf's brokers keep it in their own folder), if named."""
    return next((Path(a) for a in argv if a.endswith("server.properties")), None)


def _isr_full(bootstrap: str, topic: str, replicas: int) -> bool | None:
    """Whether every partition of ``topic`` has ``replicas`` in-sync replicas (None: no answer right now)."""
    try:
        partitions = clients.metadata(bootstrap).topics[topic].partitions.values()
    except (KperfError, KeyError):
        return None  # a broker in the middle of restarting: ask again
    return all(len(p.isrs) == replicas for p in partitions)


def _beyond(watcher: Consumer, topic: str, records: int) -> bool:
    """Whether ``topic`` holds more than ``records`` records (a producer's warm-up): its measured ones arrive."""
    try:
        partitions = watcher.list_topics(topic, timeout=5).topics[topic].partitions
        return sum(watcher.get_watermark_offsets(TopicPartition(topic, p), timeout=5)[1] for p in partitions) > records
    except (KafkaException, KeyError):
        return False  # no answer right now: ask again


def listening(proc: psutil.Process, port: int) -> bool:
    """Whether ``proc`` accepts connections on ``port`` (a restarted broker is serving again)."""
    try:
        return any(c.laddr.port == port and c.status == psutil.CONN_LISTEN for c in proc.net_connections("tcp"))
    except psutil.NoSuchProcess:
        return False


def wait_until(condition: Callable[[], bool], until: float) -> float | None:
    """Wall-clock time when the first check that found ``condition()`` holding began, or None if no check
    begun before ``until`` found it. A check (a metadata request) can end after ``until``: its start is
    what says the condition held before then."""
    while (began := time.time()) < until:
        if condition():
            return began
        time.sleep(0.1)
    return None


def broker_failure(spec: ProducerSpec, fault: Fault, replicas: int) -> Measurement:
    """Produce ``spec`` (paced, acknowledgements tracked) while the leader of partition 0 is killed at
    ``fault.kill_at_s`` and restarted at ``fault.restart_at_s``; then read the topic back and count."""
    spec = replace(spec, track_acks=True)
    spec.check()
    victim = find_broker(*leader_port(spec.bootstrap, spec.topic))
    producer_id = secrets.randbits(31)
    report: list[ProducerReport] = []
    failure: list[BaseException] = []

    def run_producer() -> None:
        try:
            report.extend(run_here(produce_one, [((spec,), {"producer_id": producer_id})]))  # a process of its own
        except BaseException as exc:  # re-raised in the calling thread once the broker is back
            failure.append(exc)

    producing = threading.Thread(target=run_producer, name="kperf-fault-producer")
    spawned = time.time()
    producing.start()
    # The fault's clock starts with the measured records, not with the spawn of their process. If none arrive in
    # time, it starts now: the producer's own record then says what it failed to send.
    watcher = clients.consumer(spec.bootstrap, {"group.id": "kperf-fault-watch"})
    try:
        started = wait_until(lambda: not producing.is_alive() or _beyond(watcher, spec.topic, spec.warmup_records),
                             spawned + START_TIMEOUT_S)
    finally:
        watcher.close()
    if failure:  # the producer failed before its load began: no broker is killed for nothing
        producing.join()
        raise failure[0]
    times, restarted = _kill_and_restart(victim, spec, fault, replicas, started or time.time())
    producing.join()
    if not restarted.is_running() or restarted.status() == psutil.STATUS_ZOMBIE:
        raise KperfError(f"broker {victim.node_id} did not come back after its restart (pid {restarted.pid}): see its log")
    if failure:
        raise failure[0]
    (produced,) = report
    reader = ConsumerSpec(spec.bootstrap, spec.topic, idle_timeout_s=READ_BACK_IDLE_S, group=groups.fresh_name())
    (read,) = run_here(consume_one, [((reader,), {})])
    require_formed(reader, [read])  # else every record would pass for lost
    return outage(produced, producer_id, read.ledger, times, spec.window_s)


def _kill_and_restart(
    victim: Victim, spec: ProducerSpec, fault: Fault, replicas: int, started: float
) -> tuple[Timeline, psutil.Process]:
    """Kill ``victim`` and restart it at ``fault``'s times from ``started``, watching ``spec.topic``'s ISR shrink
    and fill again: the fault's timeline and the restarted broker."""
    _sleep_until(started + fault.kill_at_s)
    killed_at = time.time()
    kill(victim)
    try:
        shrunk_at = wait_until(lambda: _isr_full(spec.bootstrap, spec.topic, replicas) is False,
                               until=started + fault.restart_at_s)
        _sleep_until(started + fault.restart_at_s)
    finally:  # whatever happens meanwhile (an interrupt too), the cluster gets its broker back
        restarted_at = time.time()
        restarted = restart(victim)
    # Serving first: until Kafka has fenced the dead broker, the ISR may still list it as in sync.
    full_at = None
    if wait_until(lambda: listening(restarted, victim.port), until=restarted_at + ISR_TIMEOUT_S):
        full_at = wait_until(lambda: _isr_full(spec.bootstrap, spec.topic, replicas) is True,
                             until=restarted_at + ISR_TIMEOUT_S)
    return Timeline(killed_at, shrunk_at, restarted_at, full_at), restarted


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
    """Wall-clock times of the fault: the kill, the ISR shrinking (Kafka noticed; None if it did not before the
    restart), the restart, and every ISR full again (None: not within ISR_TIMEOUT_S)."""

    killed_at: float
    shrunk_at: float | None
    restarted_at: float
    full_at: float | None


def longest_wait(partitions: np.ndarray, ack_times: np.ndarray, killed_at: float, finished: float) -> float:
    """The longest time any partition went without an acknowledgement from the kill on: from the kill to its
    first one after it, or between two (a partition acked nothing after the kill: until the end)."""
    longest = 0.0
    for partition in np.unique(partitions):
        times = np.sort(ack_times[(partitions == partition) & (ack_times >= killed_at)])
        longest = max(longest, float(np.diff(np.concatenate([[killed_at], times, [finished]])).max()))
    return longest


def outage(
    produced: ProducerReport, producer_id: int, ledger: SequenceLedger, times: Timeline, window_s: float = WINDOW_S
) -> Measurement:
    """What the failure cost, from the acknowledged records and what reading the topic back found.

    Before-the-kill figures use records sent in its second half only: the first seconds include
    connecting and, for idempotent producers, getting a producer id. The time series holds the whole run,
    and its load is counted as ending at the kill: the steady state is the one before the fault."""
    killed_at = times.killed_at
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
        series=snapshots_to_series([produced.windows], [min(produced.stopped, killed_at)], "intended", width_s=window_s),
        measures={
            "acked_lost": float(lost),
            FAILED_SENDS: float(sum(produced.errors.values())),
            "duplicated": float(ledger.duplicated),
            **resources.load_costs([produced]),
            **_cost(produced, acks, times),
        },
        loop=produced.loop,
    )


def _cost(produced: ProducerReport, acks: np.ndarray, times: Timeline) -> dict[str, float]:
    """What the outage cost in time: the longest a partition went without an acknowledgement, the acknowledgements
    per second and the p99 latency before the kill and after it, and when Kafka noticed and recovered."""
    killed_at = times.killed_at
    ack_times = np.sort(acks[:, 2])
    seconds = np.floor(ack_times - produced.started).astype(int)
    per_second = np.bincount(seconds) if len(seconds) else np.array([0])
    kill_second = int(killed_at - produced.started)
    after_kill = per_second[kill_second:-1]  # whole seconds only: the last one is cut short by the end
    latency_ms = (acks[:, 2] - acks[:, 3]) * 1000
    # Split by acknowledgement time: records in flight at the kill waited through the outage, so they count after.
    before = (acks[:, 3] >= (produced.started + killed_at) / 2) & (acks[:, 2] < killed_at)
    after = acks[:, 2] >= killed_at
    return {
        "no_ack_s": longest_wait(acks[:, 1], acks[:, 2], killed_at, produced.finished),
        "rate_before": float(np.median(per_second[kill_second // 2:kill_second])) if kill_second > 0 else float("nan"),
        "rate_min_after_kill": float(after_kill.min()) if len(after_kill) else 0.0,
        "p99_before_ms": float(np.percentile(latency_ms[before], 99)) if before.any() else float("nan"),
        "p99_after_kill_ms": float(np.percentile(latency_ms[after], 99)) if after.any() else float("nan"),
        "isr_shrink_s": float("nan") if times.shrunk_at is None else times.shrunk_at - killed_at,
        "isr_recovery_s": float("nan") if times.full_at is None else times.full_at - times.restarted_at,
        "kill_at_s": killed_at - produced.started,
        "restart_at_s": times.restarted_at - produced.started,
    }

"""What a run cost beside its throughput: CPU and memory of brokers and clients, bytes on disk.

Published Kafka studies report these next to MiB/s (a setting that doubles
throughput at three times the broker CPU is not a free win, and compression is
judged by the bytes it saves on disk), so every measurement can carry them in
``Measurement.resources``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import TracebackType

import psutil

from kperf.kafka.cluster import ClusterState

MIB = 2**20
DEFAULT_INTERVAL_S = 0.5

ProcessKey = tuple[int, float]  # (pid, create_time): a pid reused by a new process is a new key


def key_of(proc: psutil.Process) -> ProcessKey:
    return proc.pid, proc.create_time()


def is_kafka_server(proc: psutil.Process) -> bool:
    """A Kafka broker JVM (``kafka.Kafka`` main class, or the start script): never a client,
    even when the client process launched it (a notebook's or a test session's own cluster)."""
    try:
        return any(arg in ("kafka.Kafka", "kafka-server-start.sh") or arg.endswith("/kafka-server-start.sh")
                   for arg in proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


@dataclass
class _Group:
    """One set of processes (the brokers, or the clients and their children) and what was sampled of it."""

    roots: list[psutil.Process]
    follow_children: bool
    exclude: frozenset[ProcessKey] = frozenset()  # with their descendants: the sampled brokers
    cpu_s: dict[ProcessKey, float] = field(default_factory=dict)  # CPU seconds at the last observation
    consumed_s: float = 0.0  # CPU seconds used since the sampler started, by all processes ever seen
    by_process_s: dict[ProcessKey, float] = field(default_factory=dict)  # the same, per process
    intervals: list[tuple[float, float]] = field(default_factory=list)  # (wall seconds, CPU %) per sample
    rss: list[int] = field(default_factory=list)  # summed RSS per sample, bytes

    def processes(self) -> list[psutil.Process]:
        """The live processes now: the roots, plus their descendants (searched afresh) for clients."""
        found: list[psutil.Process] = []
        pending = list(self.roots)
        while pending:
            proc = pending.pop()
            try:
                if key_of(proc) in self.exclude or (self.follow_children and is_kafka_server(proc)):
                    continue  # clients' descendants never include brokers
                found.append(proc)
                if self.follow_children:
                    pending.extend(proc.children())
            except psutil.NoSuchProcess:
                pass  # gone mid-run: dropped (reading it below fails the same way)
        return found

    def read(self) -> tuple[float, int]:
        """Observe every live process: the CPU seconds used since the last observation, and the RSS sum.

        A process not seen before counts from zero: it was either primed at the
        start (so it is not new) or started since, so all its CPU time is ours.
        Processes that vanished are forgotten; what they used until their last
        observation stays in ``consumed_s``.
        """
        used, rss, seen = 0.0, 0, {}
        for proc in self.processes():
            try:
                with proc.oneshot():
                    key = key_of(proc)
                    times = proc.cpu_times()
                    memory = proc.memory_info().rss
            except psutil.NoSuchProcess:
                continue
            if key in seen:
                continue  # listed twice (a client root that is also another root's child)
            seen[key] = times.user + times.system  # not children_*: children are observed themselves
            delta = seen[key] - self.cpu_s.get(key, 0.0)
            self.by_process_s[key] = self.by_process_s.get(key, 0.0) + delta
            used += delta
            rss += memory
        self.cpu_s = seen
        return used, rss

    def summary(self, prefix: str, wall_s: float, interval: float) -> dict[str, float]:
        # A final partial interval (the sample at exit) of a few ms is all clock-tick noise as a
        # percentage; the max looks only at intervals of at least half the period, unless there are none.
        long = [pct for wall, pct in self.intervals if wall >= interval / 2] or [pct for _, pct in self.intervals]
        return {
            f"{prefix}_cpu_pct": 100 * self.consumed_s / wall_s if wall_s > 0 else 0.0,
            # The busiest single process: a client whose one sending thread is saturated shows here.
            f"{prefix}_cpu_pct_busiest": 100 * max(self.by_process_s.values(), default=0.0) / wall_s if wall_s > 0 else 0.0,
            f"{prefix}_cpu_pct_max": max(long),
            f"{prefix}_rss_mib_max": max(self.rss) / MIB,
        }


class ResourceSampler:
    """Sample CPU % and RSS of broker and client processes in a daemon thread while the block runs.

    CPU % comes from ``cpu_times()`` deltas divided by wall time (100 = one
    core), not from ``cpu_percent()``: the same deltas then give both figures
    from one read per process. The mean is the CPU seconds used over the whole
    run divided by its duration, which is exact (no error from where sample
    boundaries fall, and a run shorter than one interval is still measured);
    the per-interval values give the max. Priming happens on entry (the
    starting CPU times of every process), so the first sample is a real delta,
    and a last sample is taken on exit. Client processes are followed with
    their children, searched again at every sample, so helpers started later
    count; their CPU time before the first sample that finds them counts too,
    since they were started after priming. Broker processes (and their
    descendants) are never counted as clients, though a local cluster's JVMs
    are children of the Python process that started them.

    RSS sums per process, so pages shared between a client and its children
    count twice: an upper bound, but cheap enough to read every half second.
    """

    def __init__(
        self,
        brokers: Iterable[psutil.Process] = (),
        clients: Iterable[psutil.Process] = (),
        interval: float = DEFAULT_INTERVAL_S,
    ) -> None:
        self.interval = interval
        brokers = list(brokers)
        # A LocalCluster's JVMs are children of the Python process that started it, often a client.
        not_clients = frozenset(key_of(proc) for proc in brokers)
        self._groups = {
            "broker": _Group(brokers, follow_children=False),
            "client": _Group(list(clients), follow_children=True, exclude=not_clients),
        }
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kperf-resources", daemon=True)
        self._started = self._last = 0.0

    def __enter__(self) -> ResourceSampler:
        self._started = self._last = time.monotonic()
        for group in self._groups.values():
            group.read()  # priming: the baseline CPU times
            group.by_process_s.clear()  # what each process used before the block is not the block's
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        now = time.monotonic()
        with self._lock:
            wall = now - self._last
            for group in self._groups.values():
                used, rss = group.read()
                group.consumed_s += used
                group.intervals.append((wall, 100 * used / wall if wall > 0 else 0.0))
                group.rss.append(rss)
            self._last = now

    def summary(self) -> dict[str, float]:
        """``<group>_cpu_pct`` (mean), ``_cpu_pct_max``, ``_rss_mib_max`` per non-empty group, and ``samples``."""
        with self._lock:
            samples = len(self._groups["broker"].intervals)
            result: dict[str, float] = {"samples": samples}
            if samples:
                for prefix, group in self._groups.items():
                    if group.roots:
                        result.update(group.summary(prefix, self._last - self._started, self.interval))
            return result


def local_sampler(
    state: ClusterState | None, clients: list[int], interval: float = DEFAULT_INTERVAL_S
) -> ResourceSampler:
    """A sampler of a local cluster's running brokers (none for an external cluster) and the client pids.

    A client already gone is left out, as one vanishing mid-run would be.
    """
    procs = []
    for pid in clients:
        try:
            procs.append(psutil.Process(pid))
        except psutil.NoSuchProcess:
            pass
    return ResourceSampler(brokers=state.running() if state is not None else [], clients=procs, interval=interval)


def topic_disk_bytes(state: ClusterState, topic: str) -> int:
    """Bytes of ``topic``'s log segments on all brokers, replicas included.

    Only ``*.log`` files count: they hold the record batches, so their sizes
    give the stored size (and, against bytes sent, the compression ratio). The
    ``.index`` and ``.timeindex`` files of the active segment are preallocated
    sparse files (10 MiB apparent size whatever the data) and would swamp it.
    Folders match ``<topic>-<partition>`` exactly, so topic ``t`` never counts
    topic ``t-x``'s ``t-x-0``, nor a deleted topic's ``t-0.<id>-delete``.
    """
    partition = re.compile(re.escape(topic) + r"-\d+")
    total = 0
    for broker in state.brokers:
        log_dir = broker.directory / "logs"
        if not log_dir.is_dir():
            continue
        for folder in log_dir.iterdir():
            if not (partition.fullmatch(folder.name) and folder.is_dir()):
                continue
            for segment in folder.glob("*.log"):
                try:
                    total += segment.stat().st_size
                except FileNotFoundError:
                    pass  # a segment deleted by retention while we counted
    return total

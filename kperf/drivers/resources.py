"""What a run cost beside its throughput: CPU and memory of brokers and clients, the host's CPU, disks and
network, bytes on disk.

Published Kafka studies report these next to MiB/s (a setting that doubles
throughput at three times the broker CPU is not a free win, and compression is
judged by the bytes it saves on disk), so every measurement carries them in
``Measurement.resources`` (whole-run figures), and its series carries them
window by window (:func:`kperf.series_building.with_resources`), so that what limited a
point (:mod:`kperf.limits`) is read from its steady windows alone.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import psutil

from kperf.kafka.cluster import ClusterState
from kperf.results import CLIENT_CPU, CLIENT_RSS_PEAK
from kperf.series_building import ResourceSample

MIB = 2**20
DEFAULT_INTERVAL_S = 0.5
SHORTEST_INTERVAL_S = 0.25  # sampling every /proc file of the brokers and clients more often costs CPU the load needs


def peak_rss_mib() -> float:
    """This process's peak RSS so far, the kernel's high-water mark (a sample may miss a short peak): a load
    process's own for its run, as each is spawned for one (:mod:`kperf.drivers.load_hosts.child`).

    Linux's ``VmHWM``, which starts anew at exec; not ``getrusage``'s ``ru_maxrss``, which a spawned process
    inherits from its parent (the peak of the kperf, kernel or worker that started it)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024  # kB


class Paid(Protocol):
    """What a load process reports of its own cost (a producer's or a consumer's report)."""

    @property
    def cpu_s(self) -> float: ...

    @property
    def rss_peak_mib(self) -> float: ...


def load_costs(reports: Iterable[Paid]) -> dict[str, float]:
    """A run's measures of what its load processes paid (what a load host needs): their CPU seconds, and their peak
    memory summed (they ran at once)."""
    paid = list(reports)
    return {CLIENT_CPU: sum(r.cpu_s for r in paid), CLIENT_RSS_PEAK: sum(r.rss_peak_mib for r in paid)}


def interval_for(window_s: float) -> float:
    """How often to sample for a time series of ``window_s`` windows: once a window, within the bounds above."""
    return min(DEFAULT_INTERVAL_S, max(SHORTEST_INTERVAL_S, window_s))
HOST_FIGURES = ("host_cpu_pct", "host_iowait_pct", "disk_busy_pct", "net_busy_pct")

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


@dataclass(frozen=True)
class Reading:
    """One observation of a group of processes."""

    used_s: float = 0.0  # CPU seconds since the last
    cpu_pct: float = 0.0  # the processes' rates summed (100 = one core)
    busiest_pct: float = 0.0
    rss: int = 0  # bytes, summed
    write_mib_per_s: float = 0.0  # bytes sent to storage, summed rates


@dataclass
class _Group:
    """One set of processes (the brokers, or the clients and their children) and what was sampled of it."""

    roots: list[psutil.Process]
    follow_children: bool
    count_writes: bool = False  # the brokers' log writes: what their disks are asked to do
    exclude: frozenset[ProcessKey] = frozenset()  # with their descendants: the sampled brokers
    # (when, CPU seconds, bytes written) at each process's last observation
    observed: dict[ProcessKey, tuple[float, float, int]] = field(default_factory=dict)
    read_at: float = 0.0  # when the last observation ended: a new process's CPU counts from there
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

    def read(self) -> Reading:
        """Observe every live process: CPU seconds used since the last observation, the rates (100 = one core)
        of all and of the busiest, the RSS sum, and the rate of bytes sent to storage (Linux's ``write_bytes``).

        Each process's rate is over its own interval, timed right after its
        own read: a busy client (a pure-Python loop) delays this thread by a
        GIL hand-over at every file it reads, so a group's reads spread over
        much longer than one clock reading would say. A process not seen
        before counts from zero since the last observation: it was either
        primed at the start (so it is not new) or started since, so all its
        CPU time is ours. Processes that vanished are forgotten; what they used
        until their last observation stays in ``consumed_s``.
        """
        since, reading, seen = self.read_at, Reading(), {}
        for proc in self.processes():
            try:
                with proc.oneshot():
                    key = key_of(proc)
                    times = proc.cpu_times()
                    now = time.monotonic()
                    memory = proc.memory_info().rss
                    wrote = proc.io_counters().write_bytes if self.count_writes else 0
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            if key in seen:
                continue  # listed twice (a client root that is also another root's child)
            seen[key] = (now, times.user + times.system, wrote)  # not children_*: children are observed themselves
            was_at, was_cpu, was_written = self.observed.get(key, (since, 0.0, wrote))
            delta, wall = seen[key][1] - was_cpu, now - was_at
            self.by_process_s[key] = self.by_process_s.get(key, 0.0) + delta
            pct = 100 * delta / wall if wall > 0 else 0.0
            reading = Reading(reading.used_s + delta, reading.cpu_pct + pct, max(reading.busiest_pct, pct),
                              reading.rss + memory,
                              reading.write_mib_per_s + ((wrote - was_written) / MIB / wall if wall > 0 else 0.0))
        self.observed, self.read_at = seen, time.monotonic()
        return reading

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


class _Host:
    """The whole host's CPU, busiest disk and busiest network interface, read as deltas between samples.

    Host CPU (100 = one core, like the processes' figures) includes everything
    running here, kperf's own processes and anyone else's: on a shared machine
    that is what the load competed with. A disk's busy share is the time it
    had a request in flight (``iostat``'s %util; an SSD serving requests in
    parallel can be busy all the time and still have room, so 100% is a sign,
    not a proof). A network interface's is its bytes (the larger direction)
    over its link speed, for interfaces that report a speed (not loopback).
    """

    IGNORED_DISKS = ("loop", "ram", "zram")

    def __init__(self) -> None:
        self.cpu, self.disks, self.nics = self._read()
        self.read_at = time.monotonic()  # right after the CPU times: see _Group.read

    @staticmethod
    def _read() -> tuple[Any, dict[str, int], dict[str, tuple[int, int]]]:  # Any: psutil types its tuples loosely
        disks = psutil.disk_io_counters(perdisk=True) or {}
        nics = psutil.net_io_counters(pernic=True) or {}
        return (
            psutil.cpu_times(),
            {name: getattr(d, "busy_time", 0) for name, d in disks.items() if not name.startswith(_Host.IGNORED_DISKS)},
            {name: (n.bytes_sent, n.bytes_recv) for name, n in nics.items()},
        )

    def read(self) -> dict[str, float]:
        """``host_cpu_pct``, ``host_iowait_pct``, ``disk_busy_pct`` and ``net_busy_pct`` since the last read
        (NaN for a disk or network figure nothing here reports)."""
        cpu, disks, nics = self._read()
        now = time.monotonic()
        wall_s, self.read_at = now - self.read_at, now
        before, self.cpu, old_disks, self.disks, old_nics, self.nics = self.cpu, cpu, self.disks, disks, self.nics, nics
        if wall_s <= 0:
            return {}
        idle = (cpu.idle - before.idle) + (getattr(cpu, "iowait", 0.0) - getattr(before, "iowait", 0.0))
        busy = max(sum(cpu) - sum(before) - idle, 0.0)  # sums of floats: a quiet host may come out at -1e-9
        disk_ms = [disks[d] - old_disks[d] for d in disks if d in old_disks]
        speeds = {name: s.speed for name, s in psutil.net_if_stats().items() if s.isup and s.speed > 0}
        net = [max(nics[n][0] - old_nics[n][0], nics[n][1] - old_nics[n][1]) * 8 / (speeds[n] * 1e6)
               for n in speeds if n in nics and n in old_nics]
        return {
            "host_cpu_pct": 100 * busy / wall_s,
            "host_iowait_pct": 100 * (getattr(cpu, "iowait", 0.0) - getattr(before, "iowait", 0.0)) / wall_s,
            "disk_busy_pct": 100 * max(disk_ms) / 1000 / wall_s if disk_ms else math.nan,
            "net_busy_pct": 100 * max(net) / wall_s if net else math.nan,
        }


class ResourceSampler:
    """Sample CPU % and RSS of broker and client processes, and the host's CPU, disks and network, in a daemon
    thread while the block runs.

    CPU % comes from ``cpu_times()`` deltas divided by wall time (100 = one
    core), not from ``cpu_percent()``: the same deltas then give both figures
    from one read per process. The mean is the CPU seconds used over the whole
    run divided by its duration, which is exact (no error from where sample
    boundaries fall, and a run shorter than one interval is still measured);
    the per-interval values give the max, and :meth:`samples` the figures of
    each interval, dated by the wall clock, for a series' windows. Priming happens on entry (the
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
            "broker": _Group(brokers, follow_children=False, count_writes=True),
            "client": _Group(list(clients), follow_children=True, exclude=not_clients),
        }
        self._host: _Host | None = None
        self._samples: list[ResourceSample] = []
        self._host_totals: dict[str, float] = {}  # figure x seconds, summed over the samples
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kperf-resources", daemon=True)
        self._started = self._last = 0.0

    def __enter__(self) -> ResourceSampler:
        for group in self._groups.values():
            group.read_at = time.monotonic()
            group.read()  # priming: the baseline CPU times
            group.by_process_s.clear()  # what each process used before the block is not the block's
        self._host = _Host()
        self._started = self._last = time.monotonic()  # after the reads, as every sample is dated
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
        with self._lock:
            assert self._host is not None
            values = self._host.read()
            readings = {prefix: group.read() for prefix, group in self._groups.items()}
            # Dated after the reads: each process's rate runs to its own read, so an interval weighted from one
            # sample's start to the next would misweigh them when this thread waited for the GIL in between.
            now, at = time.monotonic(), time.time()
            wall = now - self._last
            for prefix, group in self._groups.items():
                reading = readings[prefix]
                group.consumed_s += reading.used_s
                group.intervals.append((wall, reading.cpu_pct))
                group.rss.append(reading.rss)
                if group.roots:
                    values |= {f"{prefix}_cpu_pct": reading.cpu_pct, f"{prefix}_cpu_pct_busiest": reading.busiest_pct,
                               f"{prefix}_rss_mib": reading.rss / MIB}
                    if group.count_writes:
                        values[f"{prefix}_disk_write_mib_per_s"] = reading.write_mib_per_s
            if wall > 0:
                self._samples.append(ResourceSample(at, wall, values))
                for key in HOST_FIGURES + ("broker_disk_write_mib_per_s",):
                    if math.isfinite(values.get(key, math.nan)):
                        self._host_totals[key] = self._host_totals.get(key, 0.0) + values[key] * wall
            self._last = now

    def samples(self) -> tuple[ResourceSample, ...]:
        """Each sampling interval's figures (``<group>_cpu_pct``, ``_cpu_pct_busiest``, ``_rss_mib``, the
        brokers' ``broker_disk_write_mib_per_s`` and the host's), dated by its end on the wall clock."""
        with self._lock:
            return tuple(self._samples)

    def summary(self) -> dict[str, float]:
        """``<group>_cpu_pct`` (mean), ``_cpu_pct_max``, ``_rss_mib_max`` per non-empty group, the host's figures
        (means over the run), the brokers' disk writes (MiB/s), ``samples`` and ``sampled_s`` (the seconds the means
        are over: a mean times it is the CPU-seconds spent)."""
        with self._lock:
            samples = len(self._groups["broker"].intervals)
            result: dict[str, float] = {"samples": samples}
            if samples:
                result["sampled_s"] = self._last - self._started
                for prefix, group in self._groups.items():
                    if group.roots:
                        result.update(group.summary(prefix, self._last - self._started, self.interval))
                covered = sum(sample.seconds for sample in self._samples)
                result.update({key: total / covered for key, total in self._host_totals.items() if covered > 0})
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

"""Where a driver's load processes run: spawned here, or on the workers of a Dask cluster (``--workers``).

One load needs more than one host can give (the published studies drove
their brokers from three or four client machines), so the drivers' calls
(picklable specs in, picklable reports out) can run on the workers of a Dask
``distributed`` scheduler instead of this host. Dask is an existing,
well-kept engine; kperf adds no protocol or socket of its own.

On the Dask path each load process is one Dask task, placed by kperf (spread
evenly over the worker hosts, then over each host's workers, never more tasks
on a worker than it has threads free). Runs that load at once (a capacity
trial's producers and each consumer group, an end-to-end point's producer and
consumer: each its own ``run``, from its own process) place one at a time,
under a distributed ``Lock``, each seeing the threads the others' tasks already
hold on the scheduler (``Client.processing``), so no run's tasks queue behind
another's. The task starts the driver in a spawned
process of its own (as the local path does: a producer is bound by its one
Python thread) and relays for it, through Dask's own primitives:

* start barrier: the task puts its index on a distributed ``Queue`` once its
  process is ready; this client sets a distributed ``Event`` ("go") once the
  queue holds every index;
* the consumer group's stop count: tasks put their counts on a second
  ``Queue``; this client publishes everyone's counts, with a lease number and
  an abort flag, in a distributed ``Variable`` that every task reads each
  ``RELAY_S``;
* no hangs: this client checks the scheduler's worker list every
  ``WORKER_CHECK_S`` and fails the point at once when a worker running one of
  its tasks is gone (the scheduler drops a worker whose connection closes;
  a host cut off silently is dropped after Dask's
  ``distributed.scheduler.worker-ttl``); a task kills its process when the
  abort flag is set (kperf failed, or Ctrl-C) or when the lease has not
  moved for ``LEASE_S`` (kperf was killed), so nothing keeps running on the
  workers.

Without ``--workers`` the calls run as spawned processes here
(:func:`kperf.processes.run_workers`): the same driver code, without a
scheduler in between (docs/workers.md says why this is the default, measured).
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import confluent_kafka
import psutil

from kperf import __version__
from kperf.drivers.resources import ResourceSampler
from kperf.errors import KperfError
from kperf.kafka.release import java_executable
from kperf.processes import BARRIER_TIMEOUT_S, WORKERS_ENV, die_with_parent, probe_scheduler, run_bridged, run_workers
from kperf.processes import scheduler_address as address

if TYPE_CHECKING:
    from distributed import Client

T = TypeVar("T")
Calls = Sequence[tuple[tuple[Any, ...], dict[str, Any]]]
CONNECT_TIMEOUT_S = 5.0  # the scheduler answers within this, or it is refused (the CLI's bound is 10 s from start)
CHECK_TIMEOUT_S = 30.0  # the workers answer kperf's checks within this (they import kperf and confluent-kafka)
RELAY_S = 0.1  # how often a task relays its count and reads the group's, and this client publishes them
WORKER_CHECK_S = 1.0  # how often this client asks the scheduler whether its workers are still there
LEASE_S = 10.0  # a task whose client has published nothing this long kills its load process
CLOCK_PINGS = 5  # round trips per host for its clock offset; the shortest one is kept
PLACEMENT_LOCK = "kperf-placement"  # one run places its tasks at a time, on any scheduler
PLACEMENT_TIMEOUT_S = 60.0  # another run holds the lock longer than this: refused (a dead holder's lease ends in 30 s)
ASSIGNED_TIMEOUT_S = 10.0  # a run's tasks reach their workers within this, else the next run places without them


def require_java() -> None:
    """Refuse, before any load, Dask workers (when asked for) on which Kafka's stock tools cannot run: no Java
    there, or too old a one. Asked once per scheduler by this process (a study checks each of its points)."""
    scheduler = address()
    if scheduler is not None:
        _java_on_workers(scheduler)


@cache
def _java_on_workers(scheduler: str) -> None:
    with connected(scheduler) as client:
        workers = live_workers(client)
        found = client.run(java_missing, on_error="return")
    for worker, missing in sorted(found.items()):
        if missing:
            host = workers.get(worker, {}).get("host", "?")
            raise KperfError(f"Dask worker {worker} on {host} cannot run --client java: {missing}")


def java_missing() -> str:
    """Why Kafka's tools cannot run here (run on a worker), or "" when they can."""
    try:
        java_executable()
    except KperfError as exc:
        return str(exc)
    return ""


@dataclass(frozen=True)
class Slot:
    """A Dask worker as placement sees it."""

    address: str
    host: str  # the address it listens on: workers of one host share it
    name: str
    threads: int  # tasks it can run at once


def place(workers: Sequence[Slot], tasks: int, busy: Mapping[str, int] | None = None, what: str = "asked") -> list[Slot]:
    """The worker of each of ``tasks`` load processes: spread evenly over the hosts, then over each host's
    workers, never more on a worker than its threads (each task's thread waits for its process) less those
    ``busy`` (by address: tasks already running there, e.g. the load of a run going on at the same time);
    ``what`` says, in the error, what asked for them."""
    busy = busy or {}
    hosts = sorted({w.host for w in workers})
    load = {w.address: min(busy.get(w.address, 0), w.threads) for w in workers}
    placed = []
    for _ in range(tasks):
        free = [w for w in workers if load[w.address] < w.threads]
        if not free:
            threads, taken = sum(w.threads for w in workers), sum(min(busy.get(w.address, 0), w.threads) for w in workers)
            held = f", {taken} of them busy with other load running now" if taken else ""
            raise KperfError(f"the Dask workers have {threads} threads in all{held}, fewer than the {tasks} load "
                             f"processes {what} (one thread each): start the workers with more --nthreads, or more workers")
        per_host = {h: sum(load[w.address] for w in workers if w.host == h) for h in hosts}
        slot = min(free, key=lambda w: (per_host[w.host], load[w.address], hosts.index(w.host), w.address))
        load[slot.address] += 1
        placed.append(slot)
    return placed


def require(processes: int, what: str) -> None:
    """Refuse, before any load, Dask workers (when asked for) that cannot run ``processes`` load processes at once
    (``what`` runs them), besides being unreachable or unfit (:func:`check`)."""
    scheduler = address()
    if scheduler is not None:
        with connected(scheduler) as client:
            place(check(client, scheduler), processes, what=what)


@dataclass(frozen=True)
class TaskReport(Generic[T]):
    """What a Dask task returns: its driver's report, and where it ran and what it used there."""

    result: T
    host: str
    worker: str
    hostname: str
    cores: int
    resources: Mapping[str, float]  # its process's CPU and RSS, and its host's, over the run (ResourceSampler)


@dataclass(frozen=True)
class Ran(Generic[T]):
    """The reports of a run's load processes, with where the load came from (``Measurement.load``) and what the
    processes used (``Measurement.resources``: empty on this host, where the caller samples them itself)."""

    results: list[T]
    load: Mapping[str, Any]
    resources: Mapping[str, float] = field(default_factory=dict)


def run(function: Callable[..., T], calls: Calls) -> Ran[T]:
    """``function(*args, **kwargs)`` for each call, all at once: on the Dask workers when asked, else here."""
    scheduler = address()
    if scheduler is None:
        return Ran(run_workers(function, calls), {"load_hosts": socket.gethostname(), "load_processes": len(calls),
                                                  "clock_offset_ms": 0.0})
    with connected(scheduler) as client:
        fit = check(client, scheduler)
        with placing(client):
            slots = place(fit, len(calls), busy_threads(client))
            offsets = clock_offsets(client, {s.host: s.address for s in slots})
            run_id, futures = _submit(client, slots, function, calls)
            _await_assigned(client, futures)
        reports = _coordinate(client, slots, futures, run_id)
    return Ran([r.result for r in reports], load_record(reports, offsets), load_resources(reports))


@contextmanager
def placing(client: Client) -> Iterator[None]:
    """Hold the scheduler's placement lock: no other run places its tasks meanwhile."""
    from distributed import Lock

    lock = Lock(PLACEMENT_LOCK, scheduler_rpc=client.scheduler, loop=client.loop)
    if not lock.acquire(timeout=PLACEMENT_TIMEOUT_S):
        raise KperfError(f"another run held the Dask workers' placement lock ({PLACEMENT_LOCK}) for over "
                         f"{PLACEMENT_TIMEOUT_S:.0f} s")
    try:
        yield
    finally:
        try:
            lock.release()
        except Exception:  # noqa: BLE001 - a scheduler gone meanwhile fails the run anyway; the lease then ends
            pass


def busy_threads(client: Client) -> dict[str, int]:
    """Tasks running (or assigned to run) on each worker now, kperf's and anyone's, by worker address."""
    return {worker: len(keys) for worker, keys in client.processing().items()}


def _await_assigned(client: Client, futures: Sequence[Any]) -> None:
    """Wait (up to ASSIGNED_TIMEOUT_S) until the scheduler counts the run's tasks on their workers, so the next run
    to place sees them busy; past that, go on (the next run may then share a worker's threads, no worse)."""
    deadline = time.monotonic() + ASSIGNED_TIMEOUT_S
    while time.monotonic() < deadline:
        assigned = {key for keys in client.processing().values() for key in keys}
        if all(f.key in assigned or f.status != "pending" for f in futures):
            return
        time.sleep(RELAY_S / 5)


@contextmanager
def connected(scheduler: str) -> Iterator[Client]:
    """A client of the scheduler; an error within CONNECT_TIMEOUT_S when it does not answer."""
    from distributed import Client

    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise KperfError(f"cannot reach the Dask scheduler at {scheduler} within {CONNECT_TIMEOUT_S:.0f} s "
                         f"({type(exc).__name__})") from None
    try:
        yield client
    finally:
        client.close()


def live_workers(client: Client) -> dict[str, dict[str, Any]]:
    """The scheduler's workers now, by address: asked afresh (``Client.scheduler_info`` returns a cached identity that
    the client's periodic refresh may replace, between the fetch and the read, with one listing only some workers)."""
    workers: dict[str, dict[str, Any]] = client.sync(client.scheduler.identity, n_workers=-1)["workers"]
    return workers


def use(scheduler: str | None) -> None:
    """Run this process's load (and its children's) on ``scheduler``'s workers from now on (None: as
    $KPERF_WORKERS says), refused before any load when unreachable or unfit (see :func:`verify`)."""
    if scheduler:
        probe_scheduler(scheduler, CONNECT_TIMEOUT_S)  # before Dask's import, which takes seconds on a busy host
        os.environ[WORKERS_ENV] = scheduler
    verify()


def verify() -> None:
    """Refuse, before any load, an unreachable scheduler or unfit workers (see :func:`check`), when asked for."""
    scheduler = address()
    if scheduler is not None:
        with connected(scheduler) as client:
            check(client, scheduler)


def describe() -> dict[str, Any]:
    """What kperf checks of a worker (run on it): versions, and whether it may start processes."""
    import multiprocessing

    return {"kperf": __version__, "confluent_kafka": confluent_kafka.__version__,
            "daemon": multiprocessing.current_process().daemon, "hostname": socket.gethostname()}


def check(client: Client, scheduler: str) -> list[Slot]:
    """The scheduler's workers, refused before any load when there are none, when one runs another kperf or
    confluent-kafka than this client, or when one cannot start load processes."""
    workers = live_workers(client)
    if not workers:
        raise KperfError(f"the Dask scheduler at {scheduler} has no workers: start 'dask worker --no-nanny {scheduler}' "
                         f"on each load host")
    try:
        client.get_versions(check=True)  # Dask's own: its packages alike on client, scheduler and workers
        found = client.run(describe, on_error="return")
    except (ValueError, OSError) as exc:
        raise KperfError(f"the Dask workers of {scheduler} do not match this client: {str(exc).splitlines()[0]}") from None
    mine = describe()
    for worker, info in sorted(found.items()):
        refuse_unfit(worker, workers[worker]["host"], info, mine)
    return [Slot(a, w["host"], str(w.get("name", a)), int(w["nthreads"])) for a, w in sorted(workers.items())]


def refuse_unfit(worker: str, host: str, info: Mapping[str, Any] | BaseException, mine: Mapping[str, Any]) -> None:
    """Refuse a worker whose :func:`describe` (``info``) differs from this client's (``mine``) in the packages that
    measure, or that cannot start load processes."""
    if isinstance(info, BaseException):
        raise KperfError(f"Dask worker {worker} on {host} cannot run kperf's check: {info}")
    for package in ("kperf", "confluent_kafka"):
        if info[package] != mine[package]:
            raise KperfError(f"Dask worker {worker} on {host} ({info['hostname']}) runs {package} {info[package]}, "
                             f"this client {mine[package]}: install the same on every load host")
    if info["daemon"]:
        raise KperfError(f"Dask worker {worker} on {host} runs as a daemon (under a nanny), which cannot start load "
                         f"processes: start it with 'dask worker --no-nanny' (or DASK_DISTRIBUTED__WORKER__DAEMON=False)")


def clock_offsets(client: Client, hosts: Mapping[str, str]) -> dict[str, float]:
    """Each host's clock minus this one's, ms: the middle of the shortest of CLOCK_PINGS round trips (via one of
    its workers), good to half that round trip. End-to-end latency across hosts is off by it."""
    offsets = {}
    for host, worker in hosts.items():
        best = (math.inf, 0.0)
        for _ in range(CLOCK_PINGS):
            before = time.time()
            theirs = client.run(time.time, workers=[worker])[worker]
            after = time.time()
            best = min(best, (after - before, theirs - (before + after) / 2))
        offsets[host] = best[1] * 1000
    return offsets


class _Names:
    """The names of one run's distributed primitives (unique per run: several runs may share a scheduler)."""

    def __init__(self, run_id: str) -> None:
        self.ready, self.counts, self.go, self.state = (f"kperf-{run_id}-{n}" for n in ("ready", "counts", "go", "state"))


def _task(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], index: int,
          run_id: str) -> TaskReport[T]:
    """One load process, run by a Dask worker: started, relayed to its peers, sampled, reported."""
    from distributed import Event, Queue, Variable, get_client, get_worker

    worker, client, names = get_worker(), get_client(), _Names(run_id)
    ready, counts = Queue(names.ready, client=client), Queue(names.counts, client=client)
    go, state = Event(names.go, client=client), Variable(names.state, client=client)
    bridge = run_bridged(function, args, kwargs)
    try:
        with ResourceSampler(clients=[psutil.Process(bridge.process.pid)]) as sampler:
            announced = started = False
            lease, heard, published, read_at = -1, time.monotonic(), 0, 0.0
            while (outcome := bridge.outcome(RELAY_S)) is None:
                if not announced and bridge.ready():
                    ready.put(index)
                    announced = True
                if announced and not started and go.is_set():
                    bridge.start()
                    started = True
                if (counted := bridge.counted()) != published:
                    counts.put([index, counted])
                    published = counted
                now = time.monotonic()
                if started and not counted and now - read_at < WORKER_CHECK_S:
                    continue  # a process that counts nothing (a producer) needs no counts: the lease once a second
                current, read_at = state.get(timeout=LEASE_S), now
                if current["abort"]:
                    raise KperfError("stopped: the run failed elsewhere")
                if current["lease"] != lease:
                    lease, heard = current["lease"], now
                elif now - heard > LEASE_S:
                    raise KperfError(f"stopped: the kperf that started this load published nothing for {LEASE_S:.0f} s")
                bridge.relay(sum(current["counts"]) - current["counts"][index])
    finally:
        bridge.stop()
        for queue in (ready, counts):
            queue.close()  # the scheduler drops a run's queues once every holder has
    if outcome[0] == "error":
        raise outcome[1]
    return TaskReport(outcome[1], worker.ip, str(worker.name), socket.gethostname(), psutil.cpu_count() or 1,
                      sampler.summary())


def _submit(client: Client, slots: Sequence[Slot], function: Callable[..., T], calls: Calls) -> tuple[str, list[Any]]:
    """One task per call on its slot, with the run's shared state published first; returns (run id, futures)."""
    from distributed import Variable

    run_id = uuid.uuid4().hex[:12]
    Variable(_Names(run_id).state, client=client).set({"lease": 0, "counts": [0] * len(calls), "abort": False})
    return run_id, [client.submit(_task, function, args, kwargs, i, run_id, key=f"kperf-{run_id}-load-{i}",
                                  workers=[slot.address], allow_other_workers=False, pure=False)
                    for i, (slot, (args, kwargs)) in enumerate(zip(slots, calls, strict=True))]


def _coordinate(client: Client, slots: Sequence[Slot], futures: Sequence[Any], run_id: str) -> list[TaskReport[Any]]:
    """Coordinate a run's tasks until all are done; any failure (a task's error, a worker gone) fails the run at
    once, with every task stopped."""
    from distributed import Event, Queue, Variable

    names = _Names(run_id)
    ready, counts_queue = Queue(names.ready, client=client), Queue(names.counts, client=client)
    go, state = Event(names.go, client=client), Variable(names.state, client=client)
    counts, lease = [0] * len(futures), 0
    finished = started = False
    try:
        ready_by, check_at = time.monotonic() + BARRIER_TIMEOUT_S, 0.0
        while True:
            time.sleep(RELAY_S)  # the futures' states are kept current by the client's own thread
            for future, slot in zip(futures, slots, strict=True):
                if future.status == "error":
                    raise KperfError(f"load process on {slot.host} (worker {slot.name}): {future.exception()}")
            if all(f.status == "finished" for f in futures):
                break
            now, changed = time.monotonic(), False
            for index, count in counts_queue.get(batch=True):
                changed, counts[index] = True, count
            if not started:
                if ready.qsize() >= len(futures):
                    go.set()
                    started = True
                elif now > ready_by:
                    raise KperfError(f"the load processes on the Dask workers were not all ready within "
                                     f"{BARRIER_TIMEOUT_S:.0f} s")
            if changed or now >= check_at:  # new counts at once; the lease at least every WORKER_CHECK_S
                lease += 1
                state.set({"lease": lease, "counts": counts, "abort": False})
            if now >= check_at:
                present = live_workers(client)
                gone = next((s for s in slots if s.address not in present), None)
                if gone is not None:
                    raise KperfError(f"Dask worker {gone.name} on {gone.host} left mid-point (it died or lost the "
                                     f"scheduler; noticed within {WORKER_CHECK_S:.0f} s of the scheduler dropping it)")
                check_at = now + WORKER_CHECK_S
        reports: list[TaskReport[Any]] = client.gather(futures)
        finished = True
        return reports
    finally:
        if not finished:
            try:
                state.set({"lease": lease + 1, "counts": counts, "abort": True})
                go.set()  # no task waits for a start that will not come
            except Exception:  # noqa: BLE001 - the scheduler itself may be what failed; the lease then stops the tasks
                pass
        client.cancel(futures, force=True)
        try:  # the run's primitives, gone from the scheduler
            ready.close()
            counts_queue.close()
            go.clear()
            state.delete()
        except Exception:  # noqa: BLE001 - as above
            pass


def load_record(reports: Sequence[TaskReport[Any]], offsets: Mapping[str, float]) -> dict[str, Any]:
    """``env.load_hosts``, ``env.load_processes``, ``env.clock_offset_ms`` (the largest, by size) and, per host,
    its processes, workers, cores, CPU, the load processes' RSS and its clock offset (``env.load_detail``, JSON)."""
    detail: dict[str, dict[str, Any]] = {}
    for r in reports:
        host = detail.setdefault(r.host, {"hostname": r.hostname, "processes": 0, "workers": [], "cores": r.cores,
                                          "host_cpu_pct": 0.0, "client_cpu_pct": 0.0, "client_rss_mib_max": 0.0,
                                          "clock_offset_ms": round(offsets.get(r.host, math.nan), 3)})
        host["processes"] += 1
        host["workers"] = sorted({*host["workers"], r.worker})
        host["host_cpu_pct"] = max(host["host_cpu_pct"], r.resources.get("host_cpu_pct", 0.0))
        host["client_cpu_pct"] += r.resources.get("client_cpu_pct", 0.0)
        host["client_rss_mib_max"] += r.resources.get("client_rss_mib_max", 0.0)  # an upper bound: peaks summed
    return {
        "load_hosts": ",".join(sorted(detail)),
        "load_processes": len(reports),
        "clock_offset_ms": max((abs(v) for v in offsets.values()), default=0.0),
        "load_detail": json.dumps(detail, sort_keys=True),
    }


def load_resources(reports: Sequence[TaskReport[Any]]) -> dict[str, float]:
    """The load processes' CPU and RSS wherever they ran (the figures the local sampler gives on this host), and
    the busiest load host's CPU share of its cores (``load_host_busy_pct``, 100 = every core busy)."""
    figures = [r.resources for r in reports]
    return {
        "client_cpu_pct": sum(f.get("client_cpu_pct", 0.0) for f in figures),
        "client_cpu_pct_busiest": max(f.get("client_cpu_pct_busiest", 0.0) for f in figures),
        "client_cpu_pct_max": sum(f.get("client_cpu_pct_max", 0.0) for f in figures),  # an upper bound, as RSS
        "client_rss_mib_max": sum(f.get("client_rss_mib_max", 0.0) for f in figures),
        "load_host_busy_pct": max(f.get("host_cpu_pct", 0.0) / r.cores for f, r in zip(figures, reports, strict=True)),
    }


class LocalDask:
    """A Dask scheduler and workers on this host's loopback (``dask scheduler``, ``dask worker --no-nanny``), as a
    user starts them on load hosts: for ``kperf bench``'s comparison and the tests. Every process is stopped by its
    pid (``stop``), and dies with the process that started it."""

    START_TIMEOUT_S = 60.0

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.scheduler_file = folder / "scheduler.json"
        self.processes: dict[str, subprocess.Popen[bytes]] = {}  # by name: "scheduler", then each worker's

    def _spawn(self, name: str, *args: str, env: Mapping[str, str] | None = None) -> None:
        dask = str(Path(sys.executable).with_name("dask"))
        with open(self.folder / f"{name}.log", "ab") as log:
            self.processes[name] = subprocess.Popen([dask, *args], stdout=log, stderr=subprocess.STDOUT,
                                                    preexec_fn=die_with_parent, env=env)

    def start_scheduler(self) -> str:
        """Start the scheduler on 127.0.0.1 (a free port) and return its address once it serves."""
        self.scheduler_file.unlink(missing_ok=True)
        self._spawn("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(self.scheduler_file))
        deadline = time.monotonic() + self.START_TIMEOUT_S
        while not self.scheduler_file.is_file():
            if time.monotonic() > deadline or self.processes["scheduler"].poll() is not None:
                raise KperfError(f"the Dask scheduler did not start within {self.START_TIMEOUT_S:.0f} s "
                                 f"(see {self.folder / 'scheduler.log'})")
            time.sleep(0.1)
        self.address = str(json.loads(self.scheduler_file.read_text())["address"])
        return self.address

    def start_worker(self, name: str, host: str = "127.0.0.1", threads: int = 1, nanny: bool = False,
                     env: Mapping[str, str] | None = None) -> None:
        """Start one worker listening on ``host`` (a loopback address: 127.0.0.2 looks like a second host) and
        return once the scheduler lists it (``nanny``: under Dask's default nanny, which kperf refuses; ``env``:
        its environment instead of this process's, e.g. a load host without Java)."""
        self._spawn(name, "worker", self.address, "--nanny" if nanny else "--no-nanny", "--name", name, "--host", host,
                    "--nthreads", str(threads), "--no-dashboard", "--local-directory", str(self.folder / name), env=env)
        with connected(self.address) as client:
            deadline = time.monotonic() + self.START_TIMEOUT_S
            while name not in {w.get("name") for w in live_workers(client).values()}:
                if time.monotonic() > deadline or self.processes[name].poll() is not None:
                    raise KperfError(f"Dask worker {name} did not join within {self.START_TIMEOUT_S:.0f} s "
                                     f"(see {self.folder / (name + '.log')})")
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop every process started here, by its pid (workers first)."""
        for name in reversed(list(self.processes)):
            process = self.processes.pop(name)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

"""Load from several processes at once: P producers or C consumers, not GIL-bound threads.

Workers are spawned (not forked: the parent holds librdkafka threads) and
meet at a barrier once set up, so the measured phases overlap instead of
being staggered by start-up.

A load process sees its peers through two calls only, :func:`wait_for_peers`
(the start barrier) and :func:`add_to_total` (the count a consumer group
stops on). Here they are backed by a ``multiprocessing`` barrier and counter
(:func:`run_workers`, all processes on this host); :func:`run_bridged` backs
them for one process whose peers are elsewhere, with a thread of the caller
relaying to them (kperf.drivers.workers does so through Dask's own
primitives), so the drivers run unchanged on either path.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from kperf.errors import KperfError

T = TypeVar("T")
BARRIER_TIMEOUT_S = 120.0
STUDY_PID = "KPERF_STUDY_PID"  # set by the study for the notebook kernels it starts
WORKERS_ENV = "KPERF_WORKERS"  # a Dask scheduler's address: load runs on its workers (kperf.drivers.workers)
ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+:\d+")


@dataclass
class Peers:
    """What one load process shares with the others of its run (multiprocessing objects, inherited at spawn).

    ``barrier``: all processes (and, bridged, the relaying thread) are ready;
    ``go``: set once the peers elsewhere are ready too (None: the barrier is
    the start); ``total``: what this host's processes counted; ``others``:
    what the peers elsewhere counted, as last relayed (None: no others).
    """

    barrier: Any
    total: Any
    go: Any = None
    others: Any = None

    def wait(self) -> None:
        try:
            self.barrier.wait(BARRIER_TIMEOUT_S)
        except threading.BrokenBarrierError:
            raise KperfError(f"the load processes were not all ready within {BARRIER_TIMEOUT_S:.0f} s") from None
        if self.go is not None and not self.go.wait(BARRIER_TIMEOUT_S):
            raise KperfError(f"the load processes on other hosts were not all ready within {BARRIER_TIMEOUT_S:.0f} s")

    def add(self, count: int) -> int:
        with self.total.get_lock():
            self.total.value += count
            mine = int(self.total.value)
        return mine + (int(self.others.value) if self.others is not None else 0)


def scheduler_address() -> str | None:
    """The Dask scheduler to run load on ($KPERF_WORKERS, set by ``--workers``), checked; None: load runs here."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    if not value:
        return None
    if not ADDRESS.fullmatch(value):
        raise KperfError(f"--workers {value!r} is not a Dask scheduler address like tcp://host:8786")
    return value


def probe_scheduler(address: str, timeout: float) -> None:
    """Refuse a scheduler whose port does not accept a connection within ``timeout``: answered before Dask
    itself is imported (seconds, on a busy host), so an unreachable one is reported at once."""
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise KperfError(f"cannot reach the Dask scheduler at {address} within {timeout:.0f} s ({exc})") from None


_peers: Peers | None = None  # set in each load process when it starts


def _join(peers: Peers) -> None:
    global _peers
    _peers = peers


def add_to_total(count: int) -> int | None:
    """Add ``count`` to a counter shared by all load processes of this run and return the run's total as far as
    known here (None outside a run of several).

    Lets processes stop together once they have done enough between them, e.g.
    consumers of one group that have read every record.
    """
    return _peers.add(count) if _peers is not None else None


def wait_for_peers() -> None:
    """Block until every load process of this run is ready to measure (a no-op for a lone process)."""
    if _peers is not None:
        _peers.wait()


def run_workers(function: Callable[..., T], calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[T]:
    """Run ``function(*args, **kwargs)`` for each call, each in its own process, all at once (one call: here)."""
    if len(calls) == 1:
        ((args, kwargs),) = calls
        return [function(*args, **kwargs)]
    context = multiprocessing.get_context("spawn")
    peers = Peers(context.Barrier(len(calls)), context.Value("q", 0))
    with ProcessPoolExecutor(len(calls), mp_context=context, initializer=_join, initargs=(peers,)) as pool:
        futures = [pool.submit(function, *args, **kwargs) for args, kwargs in calls]
        return [f.result() for f in futures]


def _bridged_child(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], peers: Peers,
                   results: Connection) -> None:
    die_with_parent(signal.SIGKILL)  # a worker killed outright takes its load with it
    _join(peers)
    try:
        outcome: tuple[str, Any] = ("ok", function(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - handed to the parent, which raises it
        outcome = ("error", exc if isinstance(exc, KperfError) else KperfError(f"{type(exc).__name__}: {exc}"))
    results.send(outcome)


@dataclass
class Bridge:
    """One load process whose peers are elsewhere, and the handles its relaying thread uses."""

    process: Any  # multiprocessing.Process
    peers: Peers
    results: Connection

    def ready(self) -> bool:
        """Whether the process reached its start barrier (then it waits for ``start``)."""
        return self.peers.barrier.n_waiting >= 1

    def start(self) -> None:
        self.peers.barrier.wait(BARRIER_TIMEOUT_S)  # returns at once: the process is already waiting
        self.peers.go.set()

    def counted(self) -> int:
        return int(self.peers.total.value)

    def relay(self, others: int) -> None:
        self.peers.others.value = others

    def outcome(self, timeout: float) -> tuple[str, Any] | None:
        """("ok", result) or ("error", KperfError) once the process is done, else None after ``timeout``."""
        if self.results.poll(timeout):
            return self.results.recv()
        if not self.process.is_alive():
            if self.results.poll(0):  # it sent its outcome, then exited, since the poll above
                return self.results.recv()
            return "error", KperfError(f"the load process died (exit code {self.process.exitcode})")
        return None

    def stop(self) -> None:
        """Kill the process if it still runs (an aborted run), and reap it."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(BARRIER_TIMEOUT_S)


def run_bridged(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bridge:
    """Start ``function(*args, **kwargs)`` in a spawned process (it inherits the caller's environment), its peers relayed by the
    caller through the returned :class:`Bridge` (not daemonic: a caller that is a daemon cannot start it)."""
    context = multiprocessing.get_context("spawn")
    peers = Peers(context.Barrier(2), context.Value("q", 0), context.Event(), context.Value("q", 0))
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_bridged_child, args=(function, args, kwargs, peers, send),
                              name="kperf-load")
    process.start()
    send.close()
    return Bridge(process, peers, receive)


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies (Linux; a preexec_fn for children)."""
    pr_set_pdeathsig = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, sig)


def die_with_study() -> None:
    """In a notebook kernel started by ``kperf study``: die (SIGKILL) with the study.

    A study killed outright (kill -9) must not leave its kernel measuring on
    and writing results that a resumed run would then measure again.
    """
    if os.environ.get(STUDY_PID) == str(os.getppid()):
        die_with_parent(signal.SIGKILL)

"""One load process whose peers are elsewhere (on other Dask workers), its barrier and count relayed to them by a
thread of the process that started it (:mod:`kperf.drivers.load_hosts.task`)."""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from kperf.drivers.load_hosts.peers import BARRIER_TIMEOUT_S, Peers, join
from kperf.errors import KperfError
from kperf.processes import die_with_parent

T = TypeVar("T")


def _bridged_child(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], peers: Peers,
                   results: Connection) -> None:
    die_with_parent(signal.SIGKILL)  # a worker killed outright takes its load with it
    join(peers)
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

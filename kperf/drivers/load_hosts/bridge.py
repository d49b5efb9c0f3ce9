"""One load process whose peers are elsewhere (on other Dask workers), its barrier and count relayed to them by a
thread of the process that started it (:mod:`kperf.drivers.load_hosts.task`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kperf.drivers.load_hosts.child import CONTEXT, Child, start
from kperf.drivers.load_hosts.peers import BARRIER_TIMEOUT_S, Peers

T = TypeVar("T")


@dataclass
class Bridge:
    """One load process whose peers are elsewhere, and the handles its relaying thread uses."""

    child: Child
    peers: Peers

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


def run_bridged(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Bridge:
    """Start ``function(*args, **kwargs)`` in a load process (with the caller's environment), its peers relayed by
    the caller through the returned :class:`Bridge`."""
    peers = Peers(CONTEXT.Barrier(2), CONTEXT.Value("q", 0), CONTEXT.Event(), CONTEXT.Value("q", 0))
    return Bridge(start(function, args, kwargs, peers), peers)

"""What one load process sees of the others of its run: a start barrier and a shared count.

A load process sees its peers through two calls only, :func:`wait_for_peers`
(the start barrier) and :func:`add_to_total` (the count a consumer group stops
on), so the drivers run unchanged wherever their peers are: backed by a
``multiprocessing`` barrier and counter for processes of this host
(:mod:`kperf.drivers.load_hosts.local`), and relayed by a thread of the caller
for a process whose peers are elsewhere (:mod:`kperf.drivers.load_hosts.bridge`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from kperf.errors import KperfError

BARRIER_TIMEOUT_S = 120.0


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


_peers: Peers | None = None  # set in each load process when it starts


def join(peers: Peers) -> None:
    """Make ``peers`` this process's (run in each load process as it starts)."""
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

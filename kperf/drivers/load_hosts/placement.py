"""Which Dask worker runs each load process: spread evenly over the hosts, then over each host's workers, never
more on a worker than it has threads free, and never two groups placed at the same moment."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kperf.errors import KperfError

if TYPE_CHECKING:
    from distributed import Client

PLACEMENT_LOCK = "kperf-placement"  # one group places its tasks at a time, on any scheduler
PLACEMENT_TIMEOUT_S = 60.0  # another group holds the lock longer than this: refused (a dead holder's lease ends in 30 s)
ASSIGNED_TIMEOUT_S = 10.0  # a group's tasks reach their workers within this, else the next group places without them
ASSIGNED_POLL_S = 0.02


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
    ``busy`` (by address: tasks already running there, e.g. the load of another kperf at the same time);
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


def busy_threads(client: Client) -> dict[str, int]:
    """Tasks running (or assigned to run) on each worker now, kperf's and anyone's, by worker address."""
    return {worker: len(keys) for worker, keys in client.processing().items()}


@contextmanager
def placing(client: Client) -> Iterator[None]:
    """Hold the scheduler's placement lock while one group counts the busy threads, places its tasks and sees them
    assigned.

    The count of busy threads and the submission are not one step on the
    scheduler: two clients placing at the same moment (two kperf commands on
    one scheduler) would both count the same free threads and put two tasks on
    one thread, the second queued behind the first and its run's barrier never
    met. The lock makes the two steps one, for the placement alone (a fraction
    of a second): the load itself runs outside it."""
    from distributed import Lock

    lock = Lock(PLACEMENT_LOCK, scheduler_rpc=client.scheduler, loop=client.loop)
    if not lock.acquire(timeout=PLACEMENT_TIMEOUT_S):
        raise KperfError(f"another kperf held the Dask workers' placement lock ({PLACEMENT_LOCK}) for over "
                         f"{PLACEMENT_TIMEOUT_S:.0f} s")
    try:
        yield
    finally:
        try:
            lock.release()
        except Exception:  # noqa: BLE001 - a scheduler gone meanwhile fails the run anyway; the lease then ends
            pass


def await_assigned(client: Client, futures: Sequence[Any]) -> None:
    """Wait (up to ASSIGNED_TIMEOUT_S) until the scheduler counts the tasks on their workers, so the next group to
    place sees them busy; past that, go on (the next group may then share a worker's threads, no worse)."""
    deadline = time.monotonic() + ASSIGNED_TIMEOUT_S
    while time.monotonic() < deadline:
        assigned = {key for keys in client.processing().values() for key in keys}
        if all(f.key in assigned or f.status != "pending" for f in futures):
            return
        time.sleep(ASSIGNED_POLL_S)

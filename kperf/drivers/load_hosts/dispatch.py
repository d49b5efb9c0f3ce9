"""Load processes sent where they run: on the Dask workers when ``--workers`` (``$KPERF_WORKERS``) names a
scheduler, else as spawned processes on this host."""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import TypeVar

from kperf.drivers.load_hosts.local import Calls, run_here, together_here
from kperf.drivers.load_hosts.on_workers import run_on_workers, together_on_workers
from kperf.drivers.load_hosts.record import Ran, here
from kperf.drivers.load_hosts.scheduler import scheduler_address

T = TypeVar("T")


def run(function: Callable[..., T], calls: Calls) -> Ran[T]:
    """``function(*args, **kwargs)`` for each call, each its own load process, all at once, sharing the run's
    peers (:mod:`.peers`): on the Dask workers when asked, else here."""
    scheduler = scheduler_address()
    if scheduler is None:
        return Ran(run_here(function, calls), here(socket.gethostname(), len(calls)))
    return run_on_workers(scheduler, function, calls)


def together(jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job (a run: e.g. a producer's, or a consumer group's, picklable) at once, started in their order; their
    results in that order. On the Dask workers their load processes are placed as one group."""
    scheduler = scheduler_address()
    if scheduler is None:
        return together_here(jobs)
    return together_on_workers(scheduler, jobs)

"""Load from several processes at once: P producers or C consumers, not GIL-bound threads.

Workers are spawned (not forked: the parent holds librdkafka threads) and
meet at a barrier once set up, so the measured phases overlap instead of
being staggered by start-up.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
BARRIER_TIMEOUT_S = 120.0
_barrier: Any = None  # set in each worker by the pool's initializer
_total: Any = None  # likewise: a counter shared by the workers
STUDY_PID = "KPERF_STUDY_PID"  # set by the study for the notebook kernels it starts


def _join(barrier: Any, total: Any) -> None:
    global _barrier, _total
    _barrier, _total = barrier, total


def add_to_total(count: int) -> int | None:
    """Add ``count`` to a counter shared by all workers of this run and return its value (None outside a pool).

    Lets workers stop together once they have done enough between them, e.g.
    consumers of one group that have read every record.
    """
    if _total is None:
        return None
    with _total.get_lock():
        _total.value += count
        return int(_total.value)


def wait_for_peers() -> None:
    """Block until every worker of this run is ready to measure (a no-op outside a pool)."""
    if _barrier is not None:
        _barrier.wait(BARRIER_TIMEOUT_S)


def run_workers(function: Callable[..., T], calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[T]:
    """Run ``function(*args, **kwargs)`` for each call, each in its own process, all at once."""
    context = multiprocessing.get_context("spawn")
    barrier, total = context.Barrier(len(calls)), context.Value("q", 0)
    with ProcessPoolExecutor(len(calls), mp_context=context, initializer=_join, initargs=(barrier, total)) as pool:
        futures = [pool.submit(function, *args, **kwargs) for args, kwargs in calls]
        return [f.result() for f in futures]


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

"""Load from several processes at once: P producers or C consumers, not GIL-bound threads.

Workers are spawned (not forked: the parent holds librdkafka threads) and
meet at a barrier once set up, so the measured phases overlap instead of
being staggered by start-up.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
BARRIER_TIMEOUT_S = 120.0
_barrier: Any = None  # set in each worker by the pool's initializer


def _join(barrier: Any) -> None:
    global _barrier
    _barrier = barrier


def wait_for_peers() -> None:
    """Block until every worker of this run is ready to measure (a no-op outside a pool)."""
    if _barrier is not None:
        _barrier.wait(BARRIER_TIMEOUT_S)


def run_workers(function: Callable[..., T], calls: Sequence[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[T]:
    """Run ``function(*args, **kwargs)`` for each call, each in its own process, all at once."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(calls))
    with ProcessPoolExecutor(len(calls), mp_context=context, initializer=_join, initargs=(barrier,)) as pool:
        futures = [pool.submit(function, *args, **kwargs) for args, kwargs in calls]
        return [f.result() for f in futures]

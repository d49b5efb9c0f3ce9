"""Load processes on this host: P producers or C consumers, not GIL-bound threads.

Processes are spawned (not forked: the parent holds librdkafka threads). The
processes of one run meet at a barrier once set up, so the measured phases
overlap instead of being staggered by start-up; the runs of a group are
independent of each other (each has its own peers).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from kperf.drivers.load_hosts.peers import Peers, join

T = TypeVar("T")
Calls = Sequence[tuple[tuple[Any, ...], dict[str, Any]]]


def run_here(function: Callable[..., T], calls: Calls) -> list[T]:
    """Run ``function(*args, **kwargs)`` for each call, each in its own process sharing the run's peers, all at once
    (one call: in this process)."""
    if len(calls) == 1:
        ((args, kwargs),) = calls
        return [function(*args, **kwargs)]
    context = multiprocessing.get_context("spawn")
    peers = Peers(context.Barrier(len(calls)), context.Value("q", 0))
    with ProcessPoolExecutor(len(calls), mp_context=context, initializer=join, initargs=(peers,)) as pool:
        futures = [pool.submit(function, *args, **kwargs) for args, kwargs in calls]
        return [f.result() for f in futures]


def together_here(jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Run each job (a run, picklable) in its own process, all at once, started in their order (one job: in this
    process); their results in that order."""
    if len(jobs) == 1:
        return [jobs[0]()]
    with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]

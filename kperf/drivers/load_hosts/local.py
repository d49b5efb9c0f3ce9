"""Load processes on this host: P producers or C consumers, not GIL-bound threads.

Each is a process of its own (:mod:`.child`), even one alone, so a crash inside one fails its run. The
processes of one run meet at a barrier once set up, so the measured phases overlap instead of being staggered by
start-up; the runs of a group are independent of each other (each has its own peers).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.connection import wait
from typing import Any, TypeVar

from kperf.drivers.load_hosts.child import CONTEXT, Child, start
from kperf.drivers.load_hosts.peers import Peers

T = TypeVar("T")
Calls = Sequence[tuple[tuple[Any, ...], dict[str, Any]]]


def run_here(function: Callable[..., T], calls: Calls) -> list[T]:
    """Run ``function(*args, **kwargs)`` for each call, each in its own process sharing the run's peers, all at once;
    their results in the calls' order. The first error (a process's, or its death) is raised once the others are
    stopped."""
    peers = Peers(CONTEXT.Barrier(len(calls)), CONTEXT.Value("q", 0))
    children: list[Child] = []
    try:
        for args, kwargs in calls:
            children.append(start(function, args, kwargs, peers))
        return _results(children)
    finally:  # an error, or Ctrl-C: no load process is left running
        for child in children:
            child.stop()


def _results(children: list[Child]) -> list[Any]:
    """Each child's result, waiting on their pipes and their ends at once (each load process bounds its own waits,
    and one that dies ends its wait here)."""
    results: dict[int, Any] = {}
    while len(results) < len(children):
        pending = [(i, c) for i, c in enumerate(children) if i not in results]
        wait([c.results for _, c in pending] + [c.process.sentinel for _, c in pending])
        for i, c in pending:
            if (outcome := c.outcome(0)) is not None:
                if outcome[0] == "error":
                    raise outcome[1]
                results[i] = outcome[1]
    return [results[i] for i in range(len(children))]


def together_here(jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Run each job (a run, picklable) in its own process, all at once, started in their order (one job: in this
    process, whose load processes are its own); their results in that order."""
    if len(jobs) == 1:
        return [jobs[0]()]
    with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [f.result() for f in futures]

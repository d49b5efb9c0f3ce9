"""Load processes on this host: P producers or C consumers, not GIL-bound threads.

Each is a process of its own (:mod:`.child`), even one alone, so a crash inside one fails its run. The
processes of one run meet at a barrier once set up, so the measured phases overlap instead of being staggered by
start-up; the runs of a group are independent of each other (each has its own peers).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait
from typing import Any, TypeVar

from kperf.drivers.load_hosts.child import CONTEXT, Child, start
from kperf.drivers.load_hosts.peers import Peers
from kperf.processes import die_with_parent

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
    process, whose load processes are its own); their results in that order, once every job has ended (the first
    error, in that order, raised then).

    The processes are this process's pool of spawned workers, kept between calls: a spawned worker takes about a
    second to import kperf before its job starts (measured: 1.0 s for two at once on 2 cores), which every capacity
    trial and every Python end-to-end point paid again. Each job runs with the caller's environment of the call,
    as a process spawned for it would."""
    if len(jobs) == 1:
        return [jobs[0]()]
    # Kept for the main thread alone: a worker dies with the thread that started it (see _worker_started). And
    # another thread's jobs holding the pool must not make these queue behind them.
    if threading.current_thread() is not threading.main_thread() or not _KEPT.lock.acquire(blocking=False):
        with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as pool:
            return _ran(pool, jobs)
    try:
        return _ran(_KEPT.with_room(len(jobs)), jobs)
    except (BrokenProcessPool, KeyboardInterrupt, SystemExit):  # a worker died, or Ctrl-C while waiting: as with a
        _KEPT.discard()  # pool of its own, nothing is left running when this returns, and the next call starts anew
        raise
    finally:
        _KEPT.lock.release()


def _ran(pool: ProcessPoolExecutor, jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job on ``pool`` with the caller's environment; their results once every one has ended."""
    environ = dict(os.environ)
    futures = [pool.submit(_in_environment, environ, job) for job in jobs]
    concurrent.futures.wait(futures)
    return [f.result() for f in futures]


class _KeptPool:
    """This process's pool of spawned workers (one at most), kept between calls."""

    def __init__(self) -> None:
        self.pool: ProcessPoolExecutor | None = None
        self.size = 0
        self.lock = threading.Lock()  # held by the call using the pool

    def with_room(self, jobs: int) -> ProcessPoolExecutor:
        """The pool, with room for ``jobs`` at once (a larger one replaces it)."""
        if self.pool is None or self.size < jobs:
            self.discard()
            self.pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_worker_started)
            self.size = jobs
        return self.pool

    def discard(self) -> None:
        """Stop the pool's workers, waiting for any job still running."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool, self.size = None, 0


_KEPT = _KeptPool()
_IN_JOB = threading.Event()  # in a worker: set while a job runs (an interrupt is the job's, never an idle worker's)


def _worker_started() -> None:
    """A kept worker dies (SIGKILL) with the process that keeps it: one killed outright leaves no idle worker
    behind, nor the load processes of a worker's job (they die with its fork server). Linux sends it when the
    thread that started the worker ends, hence the main thread's alone. An interrupt stops its job, not the worker
    (:func:`_interrupted`)."""
    die_with_parent(signal.SIGKILL)
    if os.getppid() == 1:  # the keeper died before that line
        os._exit(1)
    signal.signal(signal.SIGINT, _interrupted)


def _interrupted(signum: int, frame: object) -> None:
    """SIGINT in a kept worker, which shares its keeper's process group: a job running stops as in a process of its
    own (KeyboardInterrupt), while an idle worker carries on. The group's interrupt is its keeper's to act on
    (Ctrl-C; Jupyter interrupts a kernel before shutting it down, and JupyterLab on its button): an idle worker
    that died of it broke the pool for the next call and printed "Process SpawnProcess-N:" at a study's end."""
    if _IN_JOB.is_set():
        raise KeyboardInterrupt


def _in_environment(environ: dict[str, str], job: Callable[[], T]) -> T:
    """``job`` with the caller's environment (a worker was spawned with the one of its pool's start)."""
    os.environ.clear()
    os.environ.update(environ)
    _IN_JOB.set()
    try:
        return job()
    finally:
        _IN_JOB.clear()

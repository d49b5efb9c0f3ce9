"""Load processes on a Dask cluster's workers: runs placed as one group, submitted and coordinated.

Each load process is one Dask task, placed by kperf (:mod:`.placement`).
Runs that load at once (a capacity trial's producers and each consumer group,
an end-to-end point's producer and consumer) are one group: each run's job
goes to a thread of this process, which stops at its run until every run of
the group has asked, and the group's tasks are then placed together, in one
step under the placement lock, so none queues behind another's. Each run keeps
its own peers (its start barrier, its count) and is coordinated by its own
thread.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, TypeVar

from kperf.drivers.load_hosts.checks import fit_slots
from kperf.drivers.load_hosts.coordinator import Placed, coordinate
from kperf.drivers.load_hosts.local import Calls
from kperf.drivers.load_hosts.placement import Slot, await_assigned, busy_threads, place, placing
from kperf.drivers.load_hosts.protocol import RELAY_S, Channels
from kperf.drivers.load_hosts.record import Ran, clock_offsets, load_record, load_resources
from kperf.drivers.load_hosts.scheduler import connected
from kperf.drivers.load_hosts.task import load_task
from kperf.errors import KperfError

if TYPE_CHECKING:
    from distributed import Client

T = TypeVar("T")
_member = threading.local()  # .group: the group this thread's next run belongs to (None: it places alone)


class GroupFailed(KperfError):
    """A run not placed because another of its group failed first (that one's error is the group's)."""


def run_on_workers(scheduler: str, function: Callable[..., T], calls: Calls) -> Ran[T]:
    """``function(*args, **kwargs)`` for each call, each a task on ``scheduler``'s workers, all at once; placed with
    the other runs of this thread's group, if it belongs to one (:func:`together_on_workers`)."""
    group: _Group | None = getattr(_member, "group", None)
    if group is not None:
        _member.group = None  # taken: a later run of this thread places alone
        return group.run(function, calls)
    with connected(scheduler) as client:
        (placed,) = place_runs(client, scheduler, [(function, calls)])
        return _ran(client, placed)


def together_on_workers(scheduler: str, jobs: Sequence[Callable[[], T]]) -> list[T]:
    """Each job (a run) in a thread of its own, their runs' load processes placed on the workers as one group; their
    results in the jobs' order (the first error, in that order, raised once all have ended)."""
    if len(jobs) == 1:
        return [jobs[0]()]
    with connected(scheduler) as client, ThreadPoolExecutor(len(jobs), thread_name_prefix="kperf-run") as pool:
        group = _Group(client, scheduler, len(jobs))
        futures = [pool.submit(group.member, job) for job in jobs]
        try:
            wait(futures)
        except BaseException:  # Ctrl-C: every run stops its tasks
            group.stop.set()
            raise
    errors = [e for f in futures if (e := f.exception()) is not None]
    if errors:
        raise next((e for e in errors if not isinstance(e, GroupFailed)), errors[0])
    return [f.result() for f in futures]


def place_runs(client: Client, scheduler: str, runs: Sequence[tuple[Callable[..., Any], Calls]]) -> list[Placed]:
    """Every run's tasks placed and submitted as one group, in one step under the placement lock (see
    :func:`~.placement.placing`), the workers' busy threads counted first."""
    slots = fit_slots(client, scheduler)
    with placing(client):
        chosen = place(slots, sum(len(calls) for _, calls in runs), busy_threads(client))
        offsets = clock_offsets(client, {s.host: s.address for s in chosen})
        placed, at = [], 0
        for function, calls in runs:
            placed.append(submit(client, chosen[at:at + len(calls)], function, calls, offsets))
            at += len(calls)
        await_assigned(client, [f for run in placed for f in run.futures])
    return placed


def submit(client: Client, slots: Sequence[Slot], function: Callable[..., T], calls: Calls, offsets: dict[str, float]) -> Placed:
    """One task per call on its slot, the run's shared state published first; with the clock offsets of its hosts."""
    run_id = uuid.uuid4().hex[:12]
    Channels.of(run_id, client).publish(0, [0] * len(calls))
    futures = [client.submit(load_task, function, args, kwargs, i, run_id, key=f"kperf-{run_id}-load-{i}",
                             workers=[slot.address], allow_other_workers=False, pure=False)
               for i, (slot, (args, kwargs)) in enumerate(zip(slots, calls, strict=True))]
    return Placed(run_id, slots, futures, {h: v for h, v in offsets.items() if h in {s.host for s in slots}})


def _ran(client: Client, placed: Placed, stop: threading.Event | None = None) -> Ran[Any]:
    reports = coordinate(client, placed, stop)
    return Ran([r.result for r in reports], load_record(reports, placed.offsets), load_resources(reports))


class _Group:
    """The runs of one group: each asks from its own thread, and the last to ask places everyone's tasks."""

    def __init__(self, client: Client, scheduler: str, size: int) -> None:
        self.client, self.scheduler = client, scheduler
        self.left = size  # members yet to ask (or to end without asking)
        self.asked: list[tuple[Callable[..., Any], Calls]] = []
        self.placed: list[Placed] = []
        self.error: BaseException | None = None
        self.stop = threading.Event()
        self.changed = threading.Condition()

    def member(self, job: Callable[[], T]) -> T:
        """Run ``job`` as a member: its run (a call of :func:`run_on_workers`) is placed with the others'."""
        _member.group = self
        try:
            result = job()
        except BaseException as exc:
            self._end_unasked(exc)
            raise
        self._end_unasked(None)
        return result

    def run(self, function: Callable[..., T], calls: Calls) -> Ran[T]:
        """This member's run: once the group is placed, coordinated in this thread."""
        with self.changed:
            ticket = len(self.asked)
            self.asked.append((function, calls))
            self._arrived()
            while len(self.placed) <= ticket:
                if self.error is not None or self.stop.is_set():
                    raise GroupFailed("not run: another load of its group failed before the group was placed")
                self.changed.wait(RELAY_S)
        return _ran(self.client, self.placed[ticket], self.stop)

    def _end_unasked(self, error: BaseException | None) -> None:
        """A member ended: if without asking (it failed first, or had no load), the group no longer waits for it."""
        if getattr(_member, "group", None) is self:
            _member.group = None
            with self.changed:
                self.error = self.error or error
                self._arrived()

    def _arrived(self) -> None:
        """One member fewer to wait for (the condition held): the last places the group, unless one failed."""
        self.left -= 1
        try:
            if self.left == 0 and self.error is None and self.asked:
                self.placed = place_runs(self.client, self.scheduler, self.asked)
        except BaseException as exc:
            self.error = exc
            raise
        finally:
            self.changed.notify_all()

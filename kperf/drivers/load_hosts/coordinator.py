"""A run's Dask tasks coordinated until all are done: the client's side of :mod:`kperf.drivers.load_hosts.protocol`."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kperf.drivers.load_hosts.peers import BARRIER_TIMEOUT_S
from kperf.drivers.load_hosts.placement import Slot
from kperf.drivers.load_hosts.protocol import RELAY_S, WORKER_CHECK_S, Channels
from kperf.drivers.load_hosts.record import TaskReport
from kperf.drivers.load_hosts.scheduler import live_workers
from kperf.errors import KperfError, MeasurementFailed

if TYPE_CHECKING:
    from distributed import Client


@dataclass(frozen=True)
class Placed:
    """A run's tasks, submitted: its id, each task's worker and future, and the clock offsets of their hosts."""

    run_id: str
    slots: Sequence[Slot]
    futures: Sequence[Any]
    offsets: dict[str, float]


def coordinate(client: Client, run: Placed, stop: threading.Event | None = None) -> list[TaskReport[Any]]:
    """Coordinate a run's tasks until all are done; any failure (a task's error, a worker gone, ``stop`` set: the
    caller was interrupted) fails the run at once, with every task stopped."""
    coordinator = _Coordinator(client, run, stop)
    finished = False
    try:
        coordinator.until_done()
        reports: list[TaskReport[Any]] = client.gather(run.futures)
        finished = True
        return reports
    finally:
        coordinator.close(aborted=not finished)


class _Coordinator:
    """The client's part of the protocol for one run: the start once every task is ready, the counts and the
    lease published, the run's workers watched."""

    def __init__(self, client: Client, run: Placed, stop: threading.Event | None) -> None:
        self.client, self.run, self.channels, self.stop = client, run, Channels.of(run.run_id, client), stop
        self.counts, self.lease, self.started = [0] * len(run.futures), 0, False

    def until_done(self) -> None:
        """Return once every task finished; raise at the first failure."""
        ready_by, check_at = time.monotonic() + BARRIER_TIMEOUT_S, 0.0
        while True:
            time.sleep(RELAY_S)  # the futures' states are kept current by the client's own thread
            if self.all_finished():
                return
            if self.stop is not None and self.stop.is_set():
                raise KperfError("stopped: interrupted")
            now, changed = time.monotonic(), self.read_counts()
            if not self.started:
                self.start_when_ready(now > ready_by)
            if changed or now >= check_at:  # new counts at once; the lease at least every WORKER_CHECK_S
                self.lease += 1
                self.channels.publish(self.lease, self.counts)
            if now >= check_at:
                self.check_workers()
                check_at = now + WORKER_CHECK_S

    def all_finished(self) -> bool:
        for future, slot in zip(self.run.futures, self.run.slots, strict=True):
            if future.status == "error":
                if isinstance(failure := future.exception(), MeasurementFailed):
                    raise failure  # a measurement that failed on a worker fails the unit, as it would here
                raise KperfError(f"load process on {slot.host} (worker {slot.name}): {future.exception()}")
        return all(f.status == "finished" for f in self.run.futures)

    def read_counts(self) -> bool:
        changed = False
        for index, count in self.channels.counts.get(batch=True):
            changed, self.counts[index] = True, count
        return changed

    def start_when_ready(self, late: bool) -> None:
        if self.channels.ready.qsize() >= len(self.run.futures):
            self.channels.go.set()
            self.started = True
        elif late:
            raise KperfError(f"the load processes on the Dask workers were not all ready within {BARRIER_TIMEOUT_S:.0f} s")

    def check_workers(self) -> None:
        present = live_workers(self.client)
        gone = next((s for s in self.run.slots if s.address not in present), None)
        if gone is not None:
            raise KperfError(f"Dask worker {gone.name} on {gone.host} left mid-point (it died or lost the "
                             f"scheduler; noticed within {WORKER_CHECK_S:.0f} s of the scheduler dropping it)")

    def close(self, aborted: bool) -> None:
        """Stop every task (an ``aborted`` run's told to, first) and drop the run's primitives from the scheduler."""
        if aborted:
            try:
                self.channels.publish(self.lease + 1, self.counts, abort=True)
                self.channels.go.set()  # no task waits for a start that will not come
            except Exception:  # noqa: BLE001 - the scheduler itself may be what failed; the lease then stops the tasks
                pass
        self.client.cancel(self.run.futures, force=True)
        try:
            self.channels.close_queues()
            self.channels.go.clear()
            self.channels.state.delete()
        except Exception:  # noqa: BLE001 - as above
            pass

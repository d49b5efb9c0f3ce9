"""Load processes on a Dask cluster's workers: a run's tasks placed, submitted and coordinated.

Each load process is one Dask task, placed by kperf (:mod:`.placement`):
runs that load at once (a capacity trial's producers and each consumer group,
an end-to-end point's producer and consumer: each its own run, from its own
process) place one at a time, under the placement lock, each seeing the
threads the others' tasks already hold on the scheduler, so no run's tasks
queue behind another's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kperf.drivers.load_hosts.checks import fit_slots
from kperf.drivers.load_hosts.coordinator import Placed, coordinate
from kperf.drivers.load_hosts.placement import Slot, await_assigned, busy_threads, place, placing
from kperf.drivers.load_hosts.protocol import Channels
from kperf.drivers.load_hosts.record import Ran, clock_offsets, load_record, load_resources
from kperf.drivers.load_hosts.scheduler import connected
from kperf.drivers.load_hosts.task import load_task

if TYPE_CHECKING:
    from distributed import Client

T = TypeVar("T")
Calls = Sequence[tuple[tuple[Any, ...], dict[str, Any]]]


def run_on_workers(scheduler: str, function: Callable[..., T], calls: Calls) -> Ran[T]:
    """``function(*args, **kwargs)`` for each call, each a task on ``scheduler``'s workers, all at once."""
    with connected(scheduler) as client:
        slots = fit_slots(client, scheduler)
        with placing(client):
            placed = submit(client, place(slots, len(calls), busy_threads(client)), function, calls)
            await_assigned(client, placed.futures)
        reports = coordinate(client, placed)
    return Ran([r.result for r in reports], load_record(reports, placed.offsets), load_resources(reports))


def submit(client: Client, slots: Sequence[Slot], function: Callable[..., T], calls: Calls) -> Placed:
    """One task per call on its slot, with the clock offsets of their hosts taken and the run's shared state
    published first."""
    offsets = clock_offsets(client, {s.host: s.address for s in slots})
    run_id = uuid.uuid4().hex[:12]
    Channels.of(run_id, client).publish(0, [0] * len(calls))
    return Placed(run_id, slots, [client.submit(load_task, function, args, kwargs, i, run_id, key=f"kperf-{run_id}-load-{i}",
                                                workers=[slot.address], allow_other_workers=False, pure=False)
                                  for i, (slot, (args, kwargs)) in enumerate(zip(slots, calls, strict=True))], offsets)

"""How a run's Dask tasks and the client that placed them talk, through Dask's own primitives.

* start barrier: a task puts its index on the ``ready`` queue once its process
  is ready; the client sets the ``go`` event once the queue holds every index;
* the consumer group's stop count: tasks put their counts on the ``counts``
  queue; the client publishes everyone's counts, with a lease number and an
  abort flag, in the ``state`` variable that every task reads each ``RELAY_S``;
* no hangs: the client checks the scheduler's worker list every
  ``WORKER_CHECK_S`` and fails the run at once when a worker running one of its
  tasks is gone (the scheduler drops a worker whose connection closes; a host
  cut off silently is dropped after Dask's ``distributed.scheduler.worker-ttl``);
  a task kills its process when the abort flag is set (kperf failed, or Ctrl-C)
  or when the lease has not moved for ``LEASE_S`` (kperf was killed), so
  nothing keeps running on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from distributed import Client

RELAY_S = 0.1  # how often a task relays its count and reads the group's, and the client publishes them
WORKER_CHECK_S = 1.0  # how often the client asks the scheduler whether its workers are still there
LEASE_S = 10.0  # a task whose client has published nothing this long kills its load process


@dataclass(frozen=True)
class Channels:
    """One run's distributed primitives, named by its id (unique per run: several runs may share a scheduler)."""

    ready: Any  # distributed.Queue of task indexes
    counts: Any  # distributed.Queue of [task index, count]
    go: Any  # distributed.Event
    state: Any  # distributed.Variable: {"lease": int, "counts": [int, ...], "abort": bool}

    @classmethod
    def of(cls, run_id: str, client: Client) -> Channels:
        from distributed import Event, Queue, Variable

        ready, counts, go, state = (f"kperf-{run_id}-{n}" for n in ("ready", "counts", "go", "state"))
        return cls(Queue(ready, client=client), Queue(counts, client=client), Event(go, client=client),
                   Variable(state, client=client))

    def publish(self, lease: int, counts: list[int], abort: bool = False) -> None:
        self.state.set({"lease": lease, "counts": counts, "abort": abort})

    def close_queues(self) -> None:
        """Let go of the run's queues (the scheduler drops them once every holder has)."""
        self.ready.close()
        self.counts.close()

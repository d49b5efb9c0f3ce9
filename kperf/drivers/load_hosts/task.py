"""A run's load process as a Dask task: the worker's side of :mod:`kperf.drivers.load_hosts.protocol`.

The task starts the driver in a spawned process of its own (as the local path
does: a producer is bound by its one Python thread), samples it, and relays
for it between its peers elsewhere and the client that placed it.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psutil

from kperf.drivers.load_hosts.bridge import Bridge, run_bridged
from kperf.drivers.load_hosts.protocol import LEASE_S, RELAY_S, WORKER_CHECK_S, Channels
from kperf.drivers.load_hosts.record import TaskReport
from kperf.drivers.resources import ResourceSampler
from kperf.errors import KperfError

T = TypeVar("T")


def load_task(function: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any], index: int,
              run_id: str) -> TaskReport[T]:
    """One load process, run by a Dask worker: started, relayed to its peers, sampled, reported."""
    from distributed import get_client, get_worker

    worker, channels = get_worker(), Channels.of(run_id, get_client())
    bridge = run_bridged(function, args, kwargs)
    try:
        with ResourceSampler(clients=[psutil.Process(bridge.child.process.pid)]) as sampler:
            outcome = _Relay(bridge, channels, index).until_done()
    finally:
        bridge.child.stop()
        channels.close_queues()
    if outcome[0] == "error":
        raise outcome[1]
    return TaskReport(outcome[1], worker.ip, str(worker.name), socket.gethostname(), psutil.cpu_count() or 1,
                      sampler.summary())


class _Relay:
    """A task's part of the protocol: its process's readiness and count out, the start and the others' counts in,
    and the lease that tells it the client is still there."""

    def __init__(self, bridge: Bridge, channels: Channels, index: int) -> None:
        self.bridge, self.channels, self.index = bridge, channels, index
        self.announced = self.started = False
        self.lease, self.heard, self.published, self.read_at = -1, time.monotonic(), 0, 0.0

    def until_done(self) -> tuple[str, Any]:
        """The process's outcome, relaying until it ends (an error when the run is aborted or the lease runs out)."""
        while (outcome := self.bridge.child.outcome(RELAY_S)) is None:
            self.start_when_ready()
            counted = self.publish_count()
            now = time.monotonic()
            if self.started and not counted and now - self.read_at < WORKER_CHECK_S:
                continue  # a process that counts nothing (a producer) needs no counts: the lease once a second
            self.read_state(now)
        return outcome

    def start_when_ready(self) -> None:
        if not self.announced and self.bridge.ready():
            self.channels.ready.put(self.index)
            self.announced = True
        if self.announced and not self.started and self.channels.go.is_set():
            self.bridge.start()
            self.started = True

    def publish_count(self) -> int:
        if (counted := self.bridge.counted()) != self.published:
            self.channels.counts.put([self.index, counted])
            self.published = counted
        return counted

    def read_state(self, now: float) -> None:
        current, self.read_at = self.channels.state.get(timeout=LEASE_S), now
        if current["abort"]:
            raise KperfError("stopped: the run failed elsewhere")
        if current["lease"] != self.lease:
            self.lease, self.heard = current["lease"], now
        elif now - self.heard > LEASE_S:
            raise KperfError(f"stopped: the kperf that started this load published nothing for {LEASE_S:.0f} s")
        self.bridge.relay(sum(current["counts"]) - current["counts"][self.index])

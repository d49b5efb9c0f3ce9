"""What limited a point, on real runs against a real cluster: the rule fires on the load that should hit it."""

from __future__ import annotations

import multiprocessing.forkserver
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psutil
import pytest

from kperf import drivers, limits
from kperf.drivers.broker_process import broker_ports, find_broker
from kperf.drivers.observed import measured_with_resources
from kperf.drivers.point import measure_point
from kperf.drivers.producer import produce
from kperf.drivers.specs import ProducerSpec
from kperf.kafka import topics
from kperf.kafka.target import connect
from kperf.load import Workload
from kperf.results import Measurement, Result
from kperf.study import environment


def limit_of(bootstrap: str, load: Workload) -> tuple[dict, Measurement]:
    """The record row of one measured point (its limit and evidence in it)."""
    target = connect(bootstrap, start=False)
    (measured,) = measure_point(target, load, drivers.get("python"), "kperf-limits")
    row = Result("run", "limits", "point", 0, {"rate": load.rate, "client": "python"}, measured,
                 environment.collect(target)).row()
    return row, measured


def test_a_paced_point_is_labelled_rate_cap(bootstrap: str) -> None:
    # 10 s: its steady windows hold the offered rate within 5% though a loaded host stalls one for 100 ms.
    row, _ = limit_of(bootstrap, Workload(record_size=100, records=30_000, rate=3_000, partitions=3))
    assert row["limit"] == limits.RATE_CAP, row["limit_evidence"]
    assert "of the 3,000 records/s offered" in row["limit_evidence"]


# Records per loop for 4 s or more on one shared core (the native loop sends well over a million a second). Runs of
# 2 s held 4-6 resource samples, and the python loop's steady share of a core then came out at 69-74% in some of them
# (a fresh-clone CI run of 2026-11-27, and here), against 94-100% in ten samples.
PINNED_RECORDS = {"native": 6_000_000, "python": 1_500_000}
# Large batches: few requests for the brokers, so that the loop, not they, holds the load back.
FEW_REQUESTS = {"linger.ms": 50, "batch.size": 1_000_000}


def _threads(pid: int) -> list[int]:
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


@contextmanager
def affinity(pids: list[int], cores: set[int]) -> Iterator[None]:
    """Every thread of ``pids`` on ``cores`` for the block, then on its own again (a thread holds its own affinity,
    and a process forked meanwhile inherits its parent thread's)."""
    held: dict[int, set[int]] = {}
    try:
        for tid in (tid for pid in pids for tid in _threads(pid)):
            with suppress(ProcessLookupError):  # a thread that ended meanwhile
                held[tid] = os.sched_getaffinity(tid)
                os.sched_setaffinity(tid, cores)
        yield
    finally:
        for tid, cores_before in held.items():
            with suppress(ProcessLookupError):
                os.sched_setaffinity(tid, cores_before)


@contextmanager
def yielding(pids: list[int]) -> Iterator[None]:
    """Every thread of ``pids`` at the lowest priority for the block, then at its own again: they keep every core but
    give way on each. Only root may raise a priority back, so for others they are left as they are."""
    held: dict[int, int] = {}
    try:
        for tid in (tid for pid in pids for tid in _threads(pid)) if os.geteuid() == 0 else ():
            with suppress(ProcessLookupError):  # a thread that ended meanwhile
                held[tid] = os.getpriority(os.PRIO_PROCESS, tid)
                os.setpriority(os.PRIO_PROCESS, tid, 19)
        yield
    finally:
        for tid, nice in held.items():
            with suppress(ProcessLookupError):
                os.setpriority(os.PRIO_PROCESS, tid, nice)


def fork_server() -> int:
    """The pid of the fork server kperf's load processes are forked from here (kperf.drivers.load_hosts.child)."""
    multiprocessing.forkserver.ensure_running()
    (server,) = (c.pid for c in psutil.Process().children() if "multiprocessing.forkserver" in " ".join(c.cmdline()))
    return server


@pytest.mark.parametrize("loop", sorted(PINNED_RECORDS))
def test_a_producer_pinned_to_one_core_at_full_speed_is_labelled_load_generator(bootstrap: str, loop: str) -> None:
    # The load process on one core (forked from the fork server, it takes that server's cores), where the brokers give
    # way to it: beside them at equal priority the loop got only 78% of a core in one CI run, held back by them. They
    # keep both cores: confined to the other one, they held back the native loop.
    core = min(os.sched_getaffinity(0))
    brokers = [find_broker(node, port).process.pid for node, port in broker_ports(bootstrap)]
    target = connect(bootstrap, start=False)
    with (topics.temporary(bootstrap, "kperf-limits", 6, 1) as topic, affinity([fork_server()], {core}),
          yielding(brokers)):
        spec = ProducerSpec(bootstrap, topic, 100, records=PINNED_RECORDS[loop], loop=loop, config=FEW_REQUESTS)
        (measured,) = measured_with_resources(target, [topic], spec.window_s, lambda: [produce(spec)])
    row = Result("run", "limits", "point", 0, {"client": "python"}, measured, environment.collect(target)).row()
    assert row["limit"] == limits.LOAD_GENERATOR, (row["limit_evidence"], measured.resources)
    assert row["loop"] == loop
    # Its series carries what was used window by window, and its steady windows are what was judged.
    assert measured.series is not None and "client_cpu_pct_busiest" in measured.series.resources
    assert row["steady_res.client_cpu_pct_busiest"] >= 0

"""What limited a point, on real runs against a real cluster: the rule fires on the load that should hit it."""

from __future__ import annotations

import multiprocessing.forkserver
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import psutil
import pytest

from kperf import drivers, limits
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


# The load generator made the limit by construction. Its process runs on one core at real-time priority (SCHED_RR,
# above every ordinary task whatever their share of the host: the kernel still leaves them 5% of each second, so it
# gets 95% of that core whenever it can run), and it compresses every batch hard (gzip at level 9, of text that
# shrinks fivefold: 10-20 MB/s of a core). It can always run: librdkafka compresses what its queue holds whatever the
# brokers' pace, and that queue (50,000 records of 1 kB) is seconds of compression, so the brokers, with a fifth of
# its bytes to take, would have to acknowledge nothing for that long to hold it back. Sized by time, not by count.
LOADED_S = 2.0
COMPRESSING = {"compression.type": "gzip", "compression.level": 9, "linger.ms": 50, "batch.size": 1_000_000,
               "queue.buffering.max.messages": 50_000}


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
def real_time(pids: list[int]) -> Iterator[None]:
    """Every thread of ``pids`` at the lowest real-time priority (SCHED_RR) for the block, then back to its own
    policy: a process forked meanwhile, and the threads it starts, inherit it. Without CAP_SYS_NICE (root), a skip."""
    held: dict[int, tuple[int, os.sched_param]] = {}
    try:
        for tid in (tid for pid in pids for tid in _threads(pid)):
            with suppress(ProcessLookupError):  # a thread that ended meanwhile
                held[tid] = os.sched_getscheduler(tid), os.sched_getparam(tid)
                try:
                    os.sched_setscheduler(tid, os.SCHED_RR, os.sched_param(os.sched_get_priority_min(os.SCHED_RR)))
                except PermissionError:
                    pytest.skip("real-time priority needs CAP_SYS_NICE: without it no load generator is the limit "
                                "by construction on a busy host")
        yield
    finally:
        for tid, (policy, param) in held.items():
            with suppress(ProcessLookupError):
                os.sched_setscheduler(tid, policy, param)


def fork_server() -> int:
    """The pid of the fork server kperf's load processes are forked from here (kperf.drivers.load_hosts.child)."""
    multiprocessing.forkserver.ensure_running()
    (server,) = (c.pid for c in psutil.Process().children() if "multiprocessing.forkserver" in " ".join(c.cmdline()))
    return server


@pytest.mark.parametrize("loop", ["native", "python"])
def test_a_producer_pinned_to_one_core_at_full_speed_is_labelled_load_generator(bootstrap: str, loop: str) -> None:
    core = min(os.sched_getaffinity(0))
    target = connect(bootstrap, start=False)
    with (topics.temporary(bootstrap, "kperf-limits", 6, 1) as topic, affinity([fork_server()], {core}),
          real_time([fork_server()])):
        spec = ProducerSpec(bootstrap, topic, 1_000, duration_s=LOADED_S, loop=loop, payload="text", config=COMPRESSING)
        (measured,) = measured_with_resources(target, [topic], spec.window_s, lambda: [produce(spec)])
    row = Result("run", "limits", "point", 0, {"client": "python"}, measured, environment.collect(target)).row()
    assert row["limit"] == limits.LOAD_GENERATOR, (row["limit_evidence"], measured.resources)
    assert row["loop"] == loop
    # What was judged is what the run recorded: the busiest process's share of a core, window by window in its
    # series, and its mean over the steady windows in the evidence.
    assert measured.series is not None and "client_cpu_pct_busiest" in measured.series.resources
    assert f"used {row['steady_res.client_cpu_pct_busiest']:.0f}% of a core" in row["limit_evidence"]

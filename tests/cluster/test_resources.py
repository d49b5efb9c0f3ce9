"""Resource sampling against real processes, and bytes on disk against a real broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kperf.drivers.resources import MIB, ResourceSampler, local_sampler, topic_disk_bytes
from kperf.kafka import clients, topics
from kperf.kafka.cluster import LocalCluster


def burn(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def own_cpu_pct(run) -> float:
    """This process's CPU % while ``run`` runs, by the OS's own account: what the sampler must match
    (a share of a shared machine is not fixed, the agreement of two ways of reading it is)."""
    cpu, wall = time.process_time(), time.monotonic()
    run()
    return 100 * (time.process_time() - cpu) / (time.monotonic() - wall)


def test_client_cpu_of_a_busy_process_matches_its_own_cpu_time() -> None:
    with ResourceSampler(clients=[psutil.Process()]) as sampler:
        expected = own_cpu_pct(lambda: burn(1.0))
    summary = sampler.summary()
    assert summary["client_cpu_pct"] == pytest.approx(expected, abs=10), (summary, expected)
    assert summary["client_cpu_pct_max"] >= summary["client_cpu_pct"] * 0.9, summary
    assert summary["client_rss_mib_max"] > 10, summary
    assert summary["samples"] >= 1
    assert not any(key.startswith("broker_") for key in summary)


def test_children_started_later_count_and_vanishing_ones_are_dropped() -> None:
    # The parent only sleeps: nearly all the client CPU is the spinning child's, started after priming.
    started = time.monotonic()
    with ResourceSampler(clients=[psutil.Process()], interval=0.25) as sampler:
        child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(1.5)
            child.send_signal(signal.SIGSTOP)  # frozen, so a sample sees all it will ever use
            time.sleep(0.6)
            child_cpu_s = sum(psutil.Process(child.pid).cpu_times()[:2])
        finally:
            child.kill()
            child.wait()
        time.sleep(0.6)  # samples after the child is gone must not fail
    summary = sampler.summary()
    wall_s = time.monotonic() - started
    assert summary["client_cpu_pct"] == pytest.approx(100 * child_cpu_s / wall_s, abs=5), (summary, child_cpu_s)
    assert child_cpu_s > 0 and summary["client_cpu_pct_max"] >= summary["client_cpu_pct"], summary
    assert summary["samples"] >= 6


def test_a_run_shorter_than_one_interval_still_gets_a_sample() -> None:
    with ResourceSampler(clients=[psutil.Process()], interval=10) as sampler:
        expected = own_cpu_pct(lambda: burn(0.3))
    summary = sampler.summary()
    assert summary["samples"] == 1
    assert summary["client_cpu_pct"] == pytest.approx(expected, abs=15), (summary, expected)
    assert summary["client_cpu_pct_max"] == pytest.approx(summary["client_cpu_pct"], abs=5)  # timed a few ms apart


def test_empty_groups_report_only_the_sample_count_and_the_host() -> None:
    with ResourceSampler() as sampler:
        time.sleep(0.1)
    summary = sampler.summary()
    assert summary["samples"] == 1 and summary["host_cpu_pct"] >= 0
    assert not any(key.startswith(("client_", "broker_")) for key in summary)


def test_each_intervals_figures_add_up_to_the_whole_runs_and_the_host_includes_the_client() -> None:
    with ResourceSampler(clients=[psutil.Process()], interval=0.2) as sampler:
        burn(1.0)
    summary, samples = sampler.summary(), sampler.samples()
    covered = sum(s.seconds for s in samples)
    assert len(samples) == summary["samples"] >= 1  # how many depends on the GIL: the client is a busy Python loop
    assert sum(s.values["client_cpu_pct"] * s.seconds for s in samples) / covered == pytest.approx(summary["client_cpu_pct"], abs=10)
    assert all(s.values["client_cpu_pct_busiest"] <= s.values["client_cpu_pct"] + 1e-9 for s in samples)
    assert [s.at for s in samples] == sorted(s.at for s in samples)
    # The host's CPU counts this process too (both are clock-tick counts, so only roughly).
    assert summary["host_cpu_pct"] >= summary["client_cpu_pct"] - 10, summary


@pytest.mark.cluster
def test_topic_bytes_on_disk_and_broker_resources(tmp_path: Path) -> None:
    with LocalCluster(1, directory=tmp_path / "cluster") as cluster:
        state = cluster.state
        assert state is not None
        bootstrap = cluster.bootstrap
        topics.create(bootstrap, "t", 2, 1)
        topics.create(bootstrap, "t-x", 1, 1)  # "t-x-0" must not count as a partition of "t"
        producer = clients.producer(bootstrap, {"acks": "all"})
        with local_sampler(state, [os.getpid()]) as sampler:
            for i in range(1000):
                producer.produce("t", os.urandom(1000), partition=i % 2)
            for _ in range(300):
                producer.produce("t-x", os.urandom(1000))
            assert producer.flush(30) == 0
        # Random payloads do not compress; record and batch headers add little.
        assert 1000 * 1000 <= topic_disk_bytes(state, "t") < 1.2e6
        assert 300 * 1000 <= topic_disk_bytes(state, "t-x") < 0.36e6
        assert topic_disk_bytes(state, "x") == 0
        summary = sampler.summary()
        assert summary["broker_cpu_pct"] > 0, summary
        assert summary["broker_rss_mib_max"] > 100, summary
        # The broker JVM is a child of this process, yet no client: counting it would add the broker's RSS to
        # this process's own (which, late in a test session, can exceed a fresh broker's).
        own_mib = psutil.Process().memory_info().rss / MIB
        assert 10 < summary["client_rss_mib_max"] < own_mib + summary["broker_rss_mib_max"] / 2, (summary, own_mib)

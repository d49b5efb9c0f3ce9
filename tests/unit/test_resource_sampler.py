"""The resource sampler against real processes (this one, a child it starts): no Kafka, no network.

(Bytes on disk and the brokers' resources, against a real broker: tests/cluster/test_resources.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil
import pytest

from kperf.drivers.resources import ResourceSampler

PATIENCE_S = 60.0  # how long a condition may take on a loaded machine: a bound against hanging, not a speed


def wait_for_samples(sampler: ResourceSampler, count: int, what: str) -> None:
    """Return once ``sampler`` has taken ``count`` samples (polled), or fail saying which ones never came."""
    deadline = time.monotonic() + PATIENCE_S
    while len(sampler.samples()) < count:
        assert time.monotonic() < deadline, f"the sampler took {len(sampler.samples())} of {count} samples {what}"
        time.sleep(sampler.interval / 10)  # the poll's pace, not a wait for anything


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
    # The client group is this process and a spinning child started after priming. This process is not idle: the
    # sampler's own thread and the polls below use CPU, more on a loaded machine, so the OS's account of both
    # processes is what the sampler's mean must match, and the child alone its busiest process.
    own_cpu_s, started = time.process_time(), time.monotonic()
    with ResourceSampler(clients=[psutil.Process()], interval=0.25) as sampler:
        child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            wait_for_samples(sampler, 4, "while the child spins")
            child.send_signal(signal.SIGSTOP)  # frozen: a sample begun after this sees all it will ever use
            wait_for_samples(sampler, len(sampler.samples()) + 2, "of the frozen child")
            child_cpu_s = sum(psutil.Process(child.pid).cpu_times()[:2])
        finally:
            child.kill()
            child.wait()
        wait_for_samples(sampler, len(sampler.samples()) + 2, "after the child is gone")  # they must not fail
    own_cpu_s, wall_s = time.process_time() - own_cpu_s, time.monotonic() - started
    summary = sampler.summary()
    seen = (summary, child_cpu_s, own_cpu_s, wall_s)
    assert summary["client_cpu_pct"] == pytest.approx(100 * (child_cpu_s + own_cpu_s) / wall_s, abs=5), seen
    assert summary["client_cpu_pct_busiest"] == pytest.approx(100 * child_cpu_s / wall_s, abs=5), seen
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
        pass  # shorter than an interval: the sample taken at the end is the only one
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

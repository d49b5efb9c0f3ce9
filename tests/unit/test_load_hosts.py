"""Load processes: spawned here (each its own, its death a failed run), placed on Dask workers, the checks that
refuse unfit workers, and the bridged peers."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from kperf.drivers import resources
from kperf.drivers.load_hosts import scheduler
from kperf.drivers.load_hosts.bridge import run_bridged
from kperf.drivers.load_hosts.checks import refuse_unfit
from kperf.drivers.load_hosts.child import DIED
from kperf.drivers.load_hosts.local import run_here, together_here
from kperf.drivers.load_hosts.peers import add_to_total, wait_for_peers
from kperf.drivers.load_hosts.placement import Slot, place
from kperf.errors import KperfError, MeasurementFailed


def slot(host: str, index: int, threads: int = 4) -> Slot:
    return Slot(f"tcp://{host}:{4000 + index}", host, f"{host}-{index}", threads)


def test_processes_spread_evenly_over_hosts_then_over_each_hosts_workers() -> None:
    # Host a runs three workers, host b one: hosts first, so b gets as many as a.
    pool = [slot("a", 0), slot("a", 1), slot("a", 2), slot("b", 0)]
    placed = place(pool, 6)
    assert Counter(s.host for s in placed) == {"a": 3, "b": 3}
    assert Counter(s.name for s in placed if s.host == "a") == {"a-0": 1, "a-1": 1, "a-2": 1}


def test_a_full_worker_leaves_the_rest_to_others_and_too_few_threads_are_refused() -> None:
    pool = [slot("a", 0, threads=1), slot("b", 0, threads=3)]
    assert Counter(s.host for s in place(pool, 4)) == {"a": 1, "b": 3}
    with pytest.raises(KperfError, match="the Dask workers have 4 threads in all, fewer than the 5 load processes"):
        place(pool, 5)


def test_threads_busy_with_a_concurrent_runs_tasks_are_not_placed_on_again() -> None:
    pool = [slot("a", 0, threads=2), slot("b", 0, threads=2)]
    # The producers' run holds one thread on each host: a group's two consumers take the two left, one a host.
    assert Counter(s.host for s in place(pool, 2, {pool[0].address: 1, pool[1].address: 1})) == {"a": 1, "b": 1}
    # One host full: everything goes to the other.
    assert Counter(s.host for s in place(pool, 2, {pool[0].address: 2})) == {"b": 2}
    with pytest.raises(KperfError, match="have 4 threads in all, 3 of them busy with other load running now, fewer than "
                                         "the 2 load processes a trial runs at once"):
        place(pool, 2, {pool[0].address: 2, pool[1].address: 1}, what="a trial runs at once")


MINE = {"kperf": "0.1.0", "confluent_kafka": "2.6.0", "daemon": False, "hostname": "here"}


@pytest.mark.parametrize(("info", "message"), [
    ({**MINE, "kperf": "0.0.9", "hostname": "load1"},
     "Dask worker tcp://10.0.0.5:4000 on 10.0.0.5 (load1) runs kperf 0.0.9, this client 0.1.0"),
    ({**MINE, "confluent_kafka": "2.5.0"}, "runs confluent_kafka 2.5.0, this client 2.6.0"),
    ({**MINE, "daemon": True}, "runs as a daemon (under a nanny), which cannot start load processes"),
    (OSError("no module named kperf"), "cannot run kperf's check: no module named kperf"),
])
def test_unfit_workers_are_refused_naming_host_and_versions(info: object, message: str) -> None:
    with pytest.raises(KperfError, match=message.replace("(", r"\(").replace(")", r"\)")):
        refuse_unfit("tcp://10.0.0.5:4000", "10.0.0.5", info, MINE)  # type: ignore[arg-type]
    refuse_unfit("tcp://10.0.0.5:4000", "10.0.0.5", MINE, MINE)  # the same: accepted


@pytest.mark.parametrize("value", ["127.0.0.1:8786", "http://h:8786", "tcp://h", "tcp://h:port"])
def test_a_workers_address_that_is_not_a_scheduler_address_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(scheduler.WORKERS_ENV, value)
    with pytest.raises(KperfError, match="is not a Dask scheduler address like tcp://host:8786"):
        scheduler.scheduler_address()


def test_a_scheduler_that_does_not_answer_is_refused_in_one_line() -> None:
    with pytest.raises(KperfError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:1 within 2 s"):
        scheduler.reach("tcp://127.0.0.1:1", 2)


def counting_peer(records: int) -> int:
    """A load process: waits for its peers, then counts until the run's total (its own and relayed) is enough."""
    wait_for_peers()
    total = 0
    while (total := add_to_total(1) or 0) < records:
        time.sleep(0.001)
    return total


def test_a_bridged_process_starts_on_go_and_stops_on_the_count_relayed_from_elsewhere() -> None:
    bridge = run_bridged(counting_peer, (1000,), {})
    try:
        deadline = time.monotonic() + 60
        while not bridge.ready():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert bridge.counted() == 0  # nothing counted before the start
        threading.Timer(0.2, bridge.start).start()
        while bridge.counted() < 10:
            assert bridge.child.outcome(0.01) is None and time.monotonic() < deadline
        bridge.relay(990)  # the peers elsewhere read the rest
        outcome = None
        while outcome is None:
            outcome = bridge.child.outcome(0.1)
            assert time.monotonic() < deadline
        assert outcome[0] == "ok" and outcome[1] >= 1000 and bridge.counted() < 1000
    finally:
        bridge.child.stop()


# What the load processes of the tests below do (module functions: a spawned process imports them by name).
def crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


def fail_or_wait(fail: bool, pid_file: Path) -> None:
    pid_file.with_suffix(f".{os.getpid()}").write_text("started")
    wait_for_peers()  # both have started
    if fail:
        raise MeasurementFailed("the load failed here", "load failed")
    time.sleep(600)  # until stopped


def own_peak() -> float:
    return resources.peak_rss_mib()


def test_each_load_process_is_its_own_and_results_come_in_the_calls_order() -> None:
    assert run_here(os.getpid, [((), {})]) != [os.getpid()]  # one alone too: a crash in it is not this process's
    assert run_here(pow, [((2, k), {}) for k in range(4)]) == [1, 2, 4, 8]


def test_a_load_process_that_dies_fails_the_run_naming_how_it_ended() -> None:
    with pytest.raises(MeasurementFailed, match=r"^a load process died before reporting \(killed by SIGSEGV\)$") as failed:
        run_here(crash, [((), {})])
    assert failed.value.cause == DIED


def test_a_load_process_that_fails_fails_the_run_and_its_peers_are_stopped(tmp_path: Path) -> None:
    with pytest.raises(MeasurementFailed, match="the load failed here"):
        run_here(fail_or_wait, [((True, tmp_path / "pid"), {}), ((False, tmp_path / "pid"), {})])
    started = [int(p.suffix[1:]) for p in tmp_path.iterdir()]
    assert len(started) == 2 and not any(psutil.pid_exists(pid) for pid in started)  # stopped and reaped


def test_a_load_process_reports_its_own_peak_memory_not_its_parents() -> None:
    hog = b"x" * (400 * 2**20)  # this process's peak grows past 400 MiB; a process it spawns inherits none of it
    (theirs,) = run_here(own_peak, [((), {})])
    assert theirs < resources.peak_rss_mib() - 300
    del hog


def _interrupted_here() -> None:
    """A job that interrupts its own worker (as Ctrl-C reaches the whole process group), then waits to be stopped."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(60)


def test_an_interrupt_stops_a_kept_workers_job_and_leaves_an_idle_worker_running() -> None:
    """The group's SIGINT (Ctrl-C; Jupyter's before it shuts a kernel down) ends a job running on a kept worker, as
    in a process of its own, and an idle worker goes on serving: before, it died of it, broke the pool for the next
    call and printed "Process SpawnProcess-N:" at a study's end."""
    workers = set(together_here([os.getpid, os.getpid]))
    for pid in workers:
        os.kill(pid, signal.SIGINT)
    assert set(together_here([os.getpid, os.getpid])) == workers  # the same two, still serving
    with pytest.raises(KeyboardInterrupt):
        together_here([_interrupted_here, os.getpid])
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in workers)

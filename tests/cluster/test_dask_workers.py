"""Load on a real Dask cluster: a scheduler and two workers on loopback addresses that look like two hosts.

The workers run as a user starts them on load hosts (``dask worker --no-nanny``);
one listens on 127.0.0.1, the other on 127.0.0.2, so Dask (and kperf's
placement, which groups workers by the address they listen on) sees two hosts.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import psutil
import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from kperf.drivers.consumer import consume
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.load_hosts.scheduler import WORKERS_ENV
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.kafka import clients, topics
from kperf.results import Measurement, ResultStore
from kperf.study import plan, profiles
from kperf.study.local_dask import LocalDask
from tests.helpers import KPERF, assert_nothing_lost, kperf, load_processes

pytestmark = pytest.mark.cluster
HOSTS = {"w1": "127.0.0.1", "w2": "127.0.0.2"}
THREADS = 2  # per worker: two load processes each


@pytest.fixture(scope="module")
def dask(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalDask]:
    cluster = LocalDask(tmp_path_factory.mktemp("dask"))
    try:
        cluster.start_scheduler()
        for name, host in HOSTS.items():
            cluster.start_worker(name, host, THREADS)
        yield cluster
    finally:
        cluster.stop()


def run_json(data: Path, *args: str) -> dict:
    result = kperf(data, *args, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


# Records and offered rate per loop: enough for a rate (kperf.validity: 1 s, windows of 0.1 s) however fast each
# loop runs: the producers paced (6 s and 10 s or more), the consumers reading it all with more than twice the span a
# rate needs (2026-11-27 here: two native consumers read 6 million in 2.4 s, two Python ones 3 million in 2.8 s; a
# run of 1.2 million Python records once took only 0.95 s and the unit was rightly refused).
LOAD = {"native": (6_000_000, 1_000_000), "python": (3_000_000, 300_000)}


@pytest.mark.parametrize("loop", sorted(LOAD))
def test_producers_spread_over_both_hosts_and_a_consumer_group_reads_every_record_once(
        tmp_path: Path, bootstrap: str, dask: LocalDask, loop: str) -> None:
    records, rate = LOAD[loop]
    with topics.temporary(bootstrap, "dask", 4, 1) as topic:
        base = ["--bootstrap", bootstrap, "--topic", topic, "--workers", dask.address, "--window", "0.1", "--loop", loop]
        produced = run_json(tmp_path, "produce", *base, "--records", str(records), "--producers", "4",
                            "--throughput", str(rate))
        assert (produced["records"], produced["errors"], produced["loop"]) == (records, 0, loop)
        assert produced["env.load_processes"] == 4 and produced["env.load_hosts"] == "127.0.0.1,127.0.0.2"
        by_host = json.loads(produced["env.load_detail"])  # what the tasks reported of where they ran
        assert {host: (d["processes"], d["workers"]) for host, d in by_host.items()} == {
            "127.0.0.1": (2, ["w1"]), "127.0.0.2": (2, ["w2"])}
        assert produced["res.client_cpu_pct"] > 0  # sampled on the workers' hosts

        consumed = run_json(tmp_path, "consume", *base, "--records", str(records), "--consumers", "2")
        assert (consumed["records"], consumed["verified"], consumed["loop"]) == (records, True, loop)  # each once
        assert consumed["env.load_hosts"] == "127.0.0.1,127.0.0.2"


def test_the_stock_tools_run_on_a_worker_host_and_report_it(tmp_path: Path, bootstrap: str, dask: LocalDask) -> None:
    with topics.temporary(bootstrap, "dask-java", 2, 1) as topic:
        base = ["--bootstrap", bootstrap, "--topic", topic, "--workers", dask.address, "--client", "java", "--window",
                "0.1"]
        produced = run_json(tmp_path, "produce", *base, "--records", "2000000")  # enough for a rate, as above
        assert produced["records"] == 2_000_000 and produced["errors"] == 0
        assert produced["env.load_processes"] == 1 and produced["env.load_hosts"] in HOSTS.values()
        assert produced["res.client_cpu_pct"] > 0  # the JVM, sampled as its task's child on the worker's host
        consumed = run_json(tmp_path, "consume", *base, "--records", "2000000")
        assert consumed["records"] == 2_000_000 and consumed["env.load_hosts"] in HOSTS.values()


def test_bad_input_is_refused_in_one_line_before_any_load(tmp_path: Path, bootstrap: str, dask: LocalDask) -> None:
    bare = LocalDask(tmp_path / "bare")  # a scheduler of its own: first without workers, then with a nanny's
    without_java = LocalDask(tmp_path / "without-java")  # one whose worker finds no Java
    try:
        bare.start_scheduler()
        with topics.temporary(bootstrap, "dask-bad", 1, 1) as topic:
            base = ["produce", "--bootstrap", bootstrap, "--topic", topic, "--records", "1000"]
            assert_refused(tmp_path, [*base, "--workers", bare.address], f"the Dask scheduler at {bare.address} has no workers")
            bare.start_worker("nannied", nanny=True)
            assert_refused(tmp_path, [*base, "--workers", bare.address], "runs as a daemon (under a nanny)")
            assert_refused(tmp_path, [*base, "--workers", dask.address, "--producers", "5"],
                           "the Dask workers have 4 threads in all, fewer than the 5 load processes asked")
            without_java.start_scheduler()
            without_java.start_worker("no-java", env={**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")})
            assert_refused(tmp_path, [*base, "--workers", without_java.address, "--client", "java"],
                           "on 127.0.0.1 cannot run --client java: Java not found")
            assert_refused(tmp_path, [*base, "--workers", "tcp://127.0.0.1:1"],
                           "cannot reach the Dask scheduler at tcp://127.0.0.1:1 within")
        assert not list(tmp_path.glob("adhoc/results/*.parquet"))  # nothing measured, nothing recorded
    finally:
        bare.stop()
        without_java.stop()


SPREAD = """\
name: spread
topic: {partitions: 4, replication_factor: 1}
producer: {processes: 2, acks: "1", linger_ms: 5}
record: {size: 200}
rate: {records_per_s: 2000}
consumers: [{group: billing}, {group: analytics}]
duration_s: 3
window_s: 0.5
warm_up_s: 1
warm_up_max_s: 1  # one round
slo:
  produce_latency: {percentile: 99, max_ms: 5000}
  consumer_lag: {max_records: 20000}
  no_acked_loss: true
headroom: {enabled: false}
catch_up: {backlog_records: 10000, timeout_s: 20}
"""


def test_a_capacity_trial_places_its_producers_and_groups_together_on_the_workers(
        tmp_path: Path, bootstrap: str, dask: LocalDask) -> None:
    # A trial runs three loads at once (the producers, each group), each placed by its own process: 2 + 1 + 1
    # processes on two workers of two threads fit only if each placement sees the others' tasks.
    workload = tmp_path / "spread.yaml"
    workload.write_text(SPREAD)
    result = kperf(tmp_path, "capacity", str(workload), "--bootstrap", bootstrap, "--workers", dask.address, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    (folder,) = (tmp_path / "capacity").iterdir()
    records = ResultStore.of_run(folder).load()
    assert set(records["param.phase"]) == {"sustain", "catch-up"}
    for (phase, _), unit in records.groupby(["param.phase", "repeat"]):
        per_host: Counter[str] = Counter()
        for detail in unit["env.load_detail"]:
            per_host.update({host: d["processes"] for host, d in json.loads(detail).items()})
        assert per_host == {"127.0.0.1": 2, "127.0.0.2": 2}, (phase, per_host)  # four processes, two a worker
    found = json.loads((folder / "capacity.json").read_text())
    assert_nothing_lost(found["sustain"])
    assert found["catch_up"]["every_record_read"]

    crowded = tmp_path / "crowded.yaml"  # five processes at once: refused before any load
    crowded.write_text(SPREAD.replace("processes: 2", "processes: 3"))
    assert_refused(tmp_path / "crowded", ["capacity", str(crowded), "--bootstrap", bootstrap, "--workers", dask.address],
                   "the Dask workers have 4 threads in all, fewer than the 5 load processes a trial of spread runs at once")
    assert not (tmp_path / "crowded").exists()


def test_two_groups_placed_at_the_same_moment_never_share_a_worker_thread(
        bootstrap: str, dask: LocalDask, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two groups placed at once by two clients of their own (as two kperf commands sharing the workers): one of two
    # runs (consumer groups of two and of one), and one of a lone consumer. Placed from the same count of busy
    # threads, the lone one would go to the worker that got two of the first three (three tasks on a worker of two
    # threads: one queued). Every consumer waits for records, written only once all four are members of their
    # groups at the same time, which they can only be each on a worker thread of its own.
    monkeypatch.setenv(WORKERS_ENV, dask.address)
    records = 2000
    with topics.temporary(bootstrap, "dask-groups", 2, 1) as topic:
        sizes = {f"kperf-test-{uuid.uuid4().hex[:12]}": n for n in (2, 1, 1)}
        jobs = [partial(consume, ConsumerSpec(bootstrap, topic, records=records, consumers=n, group=group))
                for group, n in sizes.items()]
        start = threading.Barrier(2)

        def placed_with(group: list[Callable[[], Measurement]]) -> list[Measurement]:
            start.wait()
            return dispatch.together(group)

        with ThreadPoolExecutor(2) as pool:
            groups = [pool.submit(placed_with, jobs[:2]), pool.submit(placed_with, jobs[2:])]
            admin = clients.admin(bootstrap)
            while not all_members_in(admin, sizes):
                assert not any(g.done() for g in groups), [g.exception() for g in groups if g.done()]
                time.sleep(0.05)
            monkeypatch.delenv(WORKERS_ENV)  # every run has been dispatched: the records are written from here
            produce(ProducerSpec(bootstrap, topic, 100, records=records))
            measured = [m for g in groups for m in g.result()]
    assert [m.records for m in measured] == [records] * 3
    per_worker: Counter[str] = Counter()
    for m in measured:
        per_worker.update({w: d["processes"] for d in json.loads(m.load["load_detail"]).values() for w in d["workers"]})
    assert per_worker == {"w1": 2, "w2": 2}  # four load processes, each on a thread of its own


def all_members_in(admin: AdminClient, sizes: dict[str, int]) -> bool:
    """Whether each consumer group has its number of members now."""
    try:
        described = {g: f.result() for g, f in admin.describe_consumer_groups(list(sizes)).items()}
    except KafkaException:  # a group not formed yet
        return False
    return all(len(described[g].members) == n for g, n in sizes.items())


def assert_refused(data: Path, args: list[str], message: str) -> None:
    result = kperf(data, *args)
    assert result.returncode == 1
    line = result.stderr.strip()
    assert "\n" not in line and line.startswith("kperf: error: ") and message in line, line


def test_a_worker_killed_mid_point_fails_the_unit_and_resume_completes_the_study(
        tmp_path: Path, bootstrap: str, dask: LocalDask) -> None:
    # The workers as a study setting (--set, as a profile or notebook would give them), not --workers
    args = ["study", "batch", "--profile", "smoke", "--bootstrap", bootstrap, "--set", "clients=[python]",
            "--set", f"workers={dask.address}"]
    study = subprocess.Popen([KPERF, *args], env={**os.environ, "KPERF_DATA": str(tmp_path)}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    workers = {name: psutil.Process(dask.processes[name].pid) for name in HOSTS}
    deadline = time.monotonic() + 300
    while True:  # once a unit is recorded, kill the worker running a load process of the next
        busy = [name for name, w in workers.items() if load_processes(w)] if list(tmp_path.glob("runs/*/results/*.parquet")) else []
        if busy:
            break
        assert study.poll() is None and time.monotonic() < deadline, "the study ended or stalled before the kill"
        time.sleep(0.02)
    (run,) = (tmp_path / "runs").iterdir()
    before = {p.name for p in (run / "results").glob("*.parquet")}
    workers[busy[0]].kill()
    _, stderr = study.communicate(timeout=300)
    assert study.returncode == 1
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("kperf: error: notebook batch failed"), line
    assert f"Dask worker {busy[0]} on {HOSTS[busy[0]]} left mid-point" in line, line
    assert {p.name for p in (run / "results").glob("*.parquet")} == before  # the failed unit recorded nothing

    dask.start_worker(busy[0], HOSTS[busy[0]], THREADS)
    resumed = kperf(tmp_path, "study", "--resume", timeout=600)  # with the study's own workers
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    table = ResultStore.of_run(run).load()
    counts = Counter(zip(table["point"], table["param.client"], table["repeat"]))
    assert set(counts) == {u.key for u in plan.units("batch", profiles.parameters("batch", "smoke", clients=["python"]))}
    assert set(counts.values()) == {1}
    assert table["env.load_hosts"].notna().all() and (table["env.load_processes"] >= 1).all()

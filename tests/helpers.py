"""Running the real ``kperf`` command, as a user does, in a folder of the test's own."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import psutil

from kperf.capacity.slo import BINARY
from kperf.kafka import METRICS_ENV, clients, topics
from kperf.kafka.cluster import LocalCluster
from kperf.kafka.release import C1_ONLY

KPERF = str(Path(sys.executable).with_name("kperf"))
ROOT = Path(__file__).resolve().parent.parent  # the checkout
# The experiments the whole-study test (tests/cluster/test_study.py) runs: those its report's assertions read
# (batch's answer, the codecs advice, end_to_end's java reader, the fault's restarted broker), and transactions,
# which sets the cluster's transaction.version and back: on that test's own cluster no other test's transactions
# are refused meanwhile, so it need not run alone. Every experiment runs the same study code; nbval runs each other
# notebook in its smoke form (notebooks/), and not these (nor capacity's, which that test's --workload runs) again
# when that test runs in the same session (conftest.py): each notebook is executed once.
STUDIED = ("batch", "end_to_end", "codecs", "faults", "transactions")
DATA = ROOT / "tests" / "data"  # recorded captures, the sample run, vendored schemas
SESSION_CLUSTER_ENV = "KPERF_TEST_SESSION_CLUSTER"  # the folder of the session's cluster (conftest.py), when started


def assert_nothing_lost(verdicts: list[dict[str, Any]]) -> None:
    """A capacity trial's SLOs (``found["sustain"]``) as a test in a lane may judge them: every one reported, and the
    binary ones measured and held (no acknowledged record lost, none left unsent). Whether a latency or lag bound
    held beside the other lanes' load is this host's speed, and so is whether it could be measured at all (CI,
    2026-12-03, three lanes: a share group first delivered a record once the 3 s trial's producers had stopped, so
    it had no end-to-end latency to give, NaN, which fails that SLO): only the far-below test, alone, asserts every
    SLO met."""
    assert verdicts, verdicts
    binary = [v for v in verdicts if v["name"] in BINARY]
    assert binary and all(math.isfinite(v["value"]) and v["met"] for v in binary), verdicts


def kperf(
    data: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``kperf args`` with results and cluster under ``data``; never inherits the session's cluster or
    sample run (a test that wants one passes it)."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("KPERF_BOOTSTRAP", "KPERF_RUN_DIR", METRICS_ENV)}
    env = {**inherited, "KPERF_DATA": str(data), **(env or {})}
    return subprocess.run([KPERF, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def status(data: Path) -> dict[str, Any]:
    result = kperf(data, "cluster", "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def load_processes(parent: psutil.Process) -> list[psutil.Process]:
    """The load processes ``parent`` runs now: the children of its fork server (kperf.drivers.load_hosts.child)."""
    try:
        servers = [c for c in parent.children() if "forkserver" in " ".join(c.cmdline())]
        return [c for server in servers for c in server.children()]
    except psutil.NoSuchProcess:
        return []


# The suite's clusters share this host's 2 cores with the lanes' load, and KRaft's quorum time-outs (a voter that
# heard nothing from the leader for 2 s calls an election) are shorter than a starved JVM's stalls: in a run of
# 2026-11-29 the session cluster's voters logged 68 quorum state changes (fetch time-outs, elections) in 45 min,
# each waited out by its tests, and nine tests failed. Four times Kafka's defaults; fencing a broker
# (broker.session.timeout.ms, 9 s), which the fault tests measure, is left alone, and their pauses and kills spare
# the active controller.
QUORUM_UNDER_LOAD = {"controller.quorum.fetch.timeout.ms": "8000", "controller.quorum.election.timeout.ms": "4000"}


# Every test cluster's brokers compile with C1 alone, the session's and the whole-study test's too: on this 2-core
# host C2's compiler threads compete with the load and never repay it. A 3-broker cluster carrying 1 million records
# produced and read back at replication factor 1, then 1 million at 3, 20 times over: 184.0 CPU-s with the JVM's
# tiers (15.9 CPU-s its first round, 6.5 a round over its last eight) and 138.4 with C1 alone (10.8, then 5.2);
# a 1-broker cluster's first minute 18.2 CPU-s against 13.9 (2026-12-02). kperf's own clusters (kperf cluster up,
# make study) keep the JVM's tiers, as Kafka's scripts start a broker.
C1_BROKERS = (C1_ONLY,)


def local_cluster(brokers: int, directory: Path, **options: Any) -> LocalCluster:
    """A local cluster for tests, whose data is thrown away after: killed when stopped, not shut down cleanly (a
    3-broker KRaft cluster stopped as a whole can wait out the full clean-shutdown time-out, 30 s), and with
    :data:`QUORUM_UNDER_LOAD` under the test's own broker settings; its brokers compiled by C1 alone
    (:data:`C1_BROKERS`).
    ``kperf cluster down``'s clean shutdown stays tested in tests/cluster/test_cluster.py."""
    options["broker_config"] = {**QUORUM_UNDER_LOAD, **(options.get("broker_config") or {})}
    return LocalCluster(brokers, directory=directory, stop_timeout_s=0,
                        broker_jvm_options=C1_BROKERS, **options)


def start_session_cluster(directory: Path) -> tuple[LocalCluster, dict[str, str]]:
    """The suite's session cluster in ``directory``, started (three brokers), and the variables that name it to tests
    and notebooks: its bootstrap, its folder and its exporters. Not kperf's default cluster folder, so kperf sees a
    cluster of the user's: it reads the brokers' own view from the exporters named, as it would a user's."""
    cluster = local_cluster(3, directory)
    state = cluster.start()
    return cluster, {"KPERF_BOOTSTRAP": cluster.bootstrap, SESSION_CLUSTER_ENV: str(cluster.directory),
                     METRICS_ENV: ",".join(state.metrics_urls)}


def round_trip(bootstrap: str, replication_factor: int) -> None:
    """Produce ten records to a fresh topic and read the same ten back."""
    sent = [f"record-{i}".encode() for i in range(10)]
    with topics.temporary(bootstrap, "roundtrip", 1, replication_factor) as topic:
        producer = clients.producer(bootstrap, {"acks": "all"})
        for value in sent:
            producer.produce(topic, value)
        assert producer.flush(30) == 0
        consumer = clients.consumer(bootstrap, {"group.id": f"test-{uuid.uuid4()}", "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        received: list[bytes] = []
        for _ in range(60):
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                received.append(msg.value())
            if len(received) == len(sent):
                break
        consumer.close()
    assert received == sent


def jvm_alive(pid: int, create_time: float) -> bool:
    try:
        return abs(psutil.Process(pid).create_time() - create_time) < 0.01
    except psutil.NoSuchProcess:
        return False


def check_three_brokers_replicate(cluster: LocalCluster) -> list[tuple[int | None, float | None]]:
    """A 3-broker cluster just up: every broker listed, groups served (the offsets topic made, each of its partitions
    led, before a first group asks), a record round trip at replication factor 3. Its brokers' (pid, start time),
    for the caller to check they are gone once it stopped the cluster."""
    assert cluster.state is not None
    found = clients.admin(cluster.bootstrap).list_topics(timeout=10)
    assert len(found.brokers) == 3
    offsets = found.topics["__consumer_offsets"].partitions
    assert len(offsets) == 50 and all(p.leader >= 0 for p in offsets.values())
    assert cluster.state.broker_config["offsets.topic.replication.factor"] == "3"
    round_trip(cluster.bootstrap, replication_factor=3)
    return [(b.pid, b.create_time) for b in cluster.state.brokers]

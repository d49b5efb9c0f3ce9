"""The local cluster against real Kafka JVMs: up, status, round trip, reuse, down. A 3-broker cluster replicating,
serving groups once up and gone once stopped is checked on the whole-study test's own cluster (test_study.py,
tests.helpers.check_three_brokers_replicate): one start fewer."""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kperf.errors import KperfError
from kperf.kafka import topics
from kperf.kafka.cluster import LocalCluster, choose_port_base, new_cluster_id
from kperf.kafka.release import TOOLS, ensure_kafka, pinned_version
from tests.helpers import jvm_alive, kperf, local_cluster, round_trip, status

pytestmark = pytest.mark.cluster


def test_one_broker_via_cli_up_status_reuse_down(tmp_path: Path) -> None:
    up = kperf(tmp_path, "cluster", "up", "--brokers", "1")
    assert up.returncode == 0, up.stderr
    info = status(tmp_path)
    assert info["running"] and info["kafka_version"].startswith("4.")
    assert up.stdout.strip() == info["bootstrap"]
    (broker,) = info["brokers"]
    assert info["broker_config"]["offsets.topic.replication.factor"] == "1"
    try:
        round_trip(info["bootstrap"], replication_factor=1)

        again = kperf(tmp_path, "cluster", "up", "--brokers", "1")
        assert again.returncode == 0 and again.stdout.strip() == info["bootstrap"]
        assert "already running" in again.stderr
        assert status(tmp_path)["brokers"][0]["pid"] == broker["pid"]

        other = kperf(tmp_path, "cluster", "up", "--brokers", "3")
        assert other.returncode == 1
        assert other.stderr.count("\n") == 1 and "already running" in other.stderr
    finally:
        down = kperf(tmp_path, "cluster", "down")
    assert down.returncode == 0, down.stderr
    assert not jvm_alive(broker["pid"], broker["create_time"])
    stopped = status(tmp_path)
    assert not stopped["running"] and (tmp_path / "cluster" / "broker-1" / "logs").is_dir()  # data kept

    assert kperf(tmp_path, "cluster", "down", "--purge").returncode == 0
    assert not (tmp_path / "cluster").exists()


def test_port_in_use_is_refused_before_anything_starts(tmp_path: Path) -> None:
    base = choose_port_base(1, None)
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", base))
        squatter.listen()
        result = kperf(tmp_path, "cluster", "up", "--brokers", "1", "--port-base", str(base))
    assert result.returncode == 1
    assert result.stderr.startswith(f"kperf: error: port {base} on 127.0.0.1 is already in use")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "cluster").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cluster", "up", "--brokers", "0"], "--brokers must be between 1 and"),
        (["cluster", "up", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["cluster", "up", "--brokers", "three"], "invalid int value: 'three'"),
    ],
)
def test_bad_input_is_one_line_and_starts_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    result = kperf(tmp_path, *args)
    assert result.returncode != 0
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "cluster").exists()


def test_broker_that_dies_at_start_is_reported(tmp_path: Path) -> None:
    cluster = LocalCluster(1, directory=tmp_path / "cluster", heap="1k")  # the JVM refuses a 1 KiB heap
    with pytest.raises(KperfError, match="broker 1 exited during start-up"):
        cluster.start()
    assert cluster.state is not None and not cluster.state.running()


def test_kafka_home_scripts_are_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A KAFKA_HOME cluster starts through bin/*.sh with kperf's heap and log settings in the environment.

    The distribution is laid out from the same jars, with scripts that do what
    kafka-run-class.sh does with those variables (a real tarball cannot be
    fetched here), and log the environment they saw.
    """
    libs = Path(ensure_kafka().libs or "")
    home = tmp_path / "kafka"
    (home / "bin").mkdir(parents=True)
    (home / "libs").symlink_to(libs)
    for script, main_class in TOOLS.values():
        path = home / "bin" / script
        path.write_text(
            "#!/bin/sh\n"
            f'echo "$KAFKA_HEAP_OPTS|$LOG_DIR" >> "{tmp_path}/scripts.log"\n'
            f'exec java $KAFKA_HEAP_OPTS $KAFKA_LOG4J_OPTS -cp "{home}/libs/*" {main_class} "$@"\n'
        )
        path.chmod(0o755)
    monkeypatch.setenv("KAFKA_HOME", str(home))
    with local_cluster(1, tmp_path / "cluster", heap="512m") as cluster:
        assert cluster.state is not None and cluster.state.kafka_source == "KAFKA_HOME"
        round_trip(cluster.bootstrap, replication_factor=1)
    seen = (tmp_path / "scripts.log").read_text().splitlines()
    assert f"-Xms512m -Xmx512m|{tmp_path / 'cluster' / 'broker-1'}" in seen


def test_cluster_ids_are_kraft_ids_never_read_as_options() -> None:
    ids = [new_cluster_id() for _ in range(2000)]  # about 31 would start with '-' without the guard
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)


def test_another_kafka_release_runs_the_cluster_and_the_stock_tools(tmp_path: Path) -> None:
    """--kafka-version: the oldest release kperf runs serves the local cluster, its stock tools measure, results
    record it; a running cluster of another release is not taken for the pinned one, and data of a newer
    release is not served by an older one."""
    old = "3.7.2"
    newer = kperf(tmp_path / "newer", "cluster", "up", "--brokers", "1")
    assert newer.returncode == 0 and kperf(tmp_path / "newer", "cluster", "down").returncode == 0
    older = kperf(tmp_path / "newer", "--kafka-version", old, "cluster", "up", "--brokers", "1", timeout=600)
    assert older.returncode == 1 and older.stderr.count("\n") == 1, older.stderr
    assert f"holds the data of a Kafka {pinned_version()} cluster, newer than {old}" in older.stderr
    assert kperf(tmp_path / "newer", "cluster", "down", "--purge").returncode == 0

    up = kperf(tmp_path, "--kafka-version", old, "cluster", "up", "--brokers", "1", timeout=600)
    assert up.returncode == 0, up.stderr
    try:
        info = status(tmp_path)
        assert info["kafka_version"] == old
        bootstrap = info["bootstrap"]
        topics.create(bootstrap, "t", 1, 1)
        # Every run paced at 1,000 records/s, so each lasts the seconds a rate needs on any machine: the Java
        # consumer reads as the two producers send (a topic read after would take it a fraction of a second).
        sent = {"python": 3_000, "java": 2_500}
        with ThreadPoolExecutor(1) as reader:
            reading = reader.submit(kperf, tmp_path, "--kafka-version", old, "consume", "--bootstrap", bootstrap,
                                    "--topic", "t", "--records", str(sum(sent.values())), "--window", "0.1",
                                    "--client", "java", "--json")  # fmt: skip
            for client, records in sent.items():
                result = kperf(tmp_path, "--kafka-version", old, "produce", "--bootstrap", bootstrap, "--topic", "t",
                               "--records", str(records), "--throughput", "1000", "--record-size", "100",
                               "--client", client, "--json")  # fmt: skip
                assert result.returncode == 0, result.stderr
                record = json.loads(result.stdout)
                assert record["records"] == records
                assert record["env.kafka_version"] == record["env.kafka_release"] == old
            read = reading.result()
        assert read.returncode == 0 and json.loads(read.stdout)["records"] >= sum(sent.values()), read.stderr
        pinned = kperf(tmp_path, "cluster", "up", "--brokers", "1")
        assert pinned.returncode == 1 and pinned.stderr.count("\n") == 1
        assert f"is Kafka {old}, not {pinned_version()}; stop it first" in pinned.stderr
    finally:
        assert kperf(tmp_path, "cluster", "down", "--purge").returncode == 0

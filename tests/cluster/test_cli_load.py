"""kperf produce / consume / import as a user runs them: real cluster, recorded results, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from kperf.exits import Exit
from kperf.kafka import BOOTSTRAP_ENV, topics
from kperf.results import FAILED, ResultStore
from tests.helpers import DATA, kperf

pytestmark = pytest.mark.cluster
FIXTURES = DATA / "tool-output"


@pytest.fixture(scope="module")
def topic(bootstrap: str) -> Iterator[str]:
    with topics.temporary(bootstrap, "cli", 2, 1) as name:
        yield name


def recorded(data: Path) -> list[dict]:
    return ResultStore.of_run(data / "adhoc").load().to_dict("records")


def test_python_and_java_clients_produce_and_consume(tmp_path: Path, bootstrap: str, topic: str) -> None:
    # Each run long enough for a rate (kperf.validity: 1 s with windows of 0.1 s) on any machine: the Python
    # producers paced (their native loop sends a million records in well under a second), the Java producer and
    # the Python loop's consumer reading at a few hundred thousand records/s.
    base = ["--bootstrap", bootstrap, "--topic", topic, "--json", "--window", "0.1"]
    runs = [
        ["produce", *base, "--records", "1000000", "--record-size", "100", "--producers", "2", "-X", "linger.ms=10",
         "--throughput", "400000", "--loop", "native"],
        ["produce", *base, "--records", "1000000", "--record-size", "100", "--client", "java", "-X", "acks=1",
         "-X", "buffer.memory=67108864"],  # a Java client setting librdkafka does not have
        ["consume", *base, "--records", "2000000", "--loop", "python"],
        ["consume", *base, "--records", "2000000", "--client", "java"],
    ]
    rows = []
    for args in runs:
        result = kperf(tmp_path, *args)
        assert result.returncode == 0, result.stderr
        rows.append(json.loads(result.stdout))
    python_p, java_p, python_c, java_c = rows
    assert (python_p["client"], python_p["records"], python_p["errors"]) == ("python", 1_000_000, 0)
    assert python_p["param.linger.ms"] == "10" and python_p["param.producers"] == 2
    assert (python_p["loop"], python_c["loop"], java_p["loop"]) == ("native", "python", None)  # as asked; none: java
    assert (java_p["client"], java_p["records"], java_p["errors"]) == ("java", 1_000_000, 0)
    assert java_p["latency_ack_p99_ms"] >= java_p["latency_ack_p50_ms"] >= 0
    assert python_c["records"] == 2_000_000 and python_c["rebalance_ms"] > 0
    assert python_c["verified"] and python_c["missing"] == 0  # the Python-produced records, all there once
    assert java_c["client"] == "java" and java_c["records"] >= 2_000_000
    assert [r["client"] for r in recorded(tmp_path)] == ["python", "java", "python", "java"]
    assert all(r["res.client_rss_mib_max"] > 0 for r in recorded(tmp_path))


def test_without_the_native_build_the_python_loops_run_and_say_so(tmp_path: Path, bootstrap: str, topic: str) -> None:
    """A host where 'make native' built nothing (a cache without it): the Python loops run, said in one line before
    any load, and the record says so; the native loop asked for is refused in one line, before any load."""
    unbuilt = {"KPERF_CACHE": str(tmp_path / "cache")}
    args = ["produce", "--bootstrap", bootstrap, "--topic", topic, "--records", "2500", "--throughput", "1000", "--json"]
    ran = kperf(tmp_path / "ran", *args, "--producers", "2", env=unbuilt)  # two load processes: still one line
    assert ran.returncode == 0, ran.stderr
    said = [line for line in ran.stderr.splitlines() if "native loops" in line]
    assert said == ["kperf: the native loops are not built: run 'make native' (needs gcc and npm): running the Python loops"]
    assert json.loads(ran.stdout)["loop"] == "python"
    refused = kperf(tmp_path / "refused", *args, "--loop", "native", env=unbuilt)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == ["kperf: error: the native loops are not built: run 'make native' "
                                                   "(needs gcc and npm)"]
    assert not (tmp_path / "refused" / "adhoc").exists()  # nothing measured, nothing recorded


def test_a_run_that_read_nothing_is_kept_as_a_failed_unit_and_exits_3(tmp_path: Path, bootstrap: str) -> None:
    """ConsumerPerformance on an empty topic reads nothing once its time-out runs out: no rate, a failed unit kept with
    its reason (whether the run raised or its record broke a validity rule), and the exit says it failed. (A short
    join bound: the tool's time-out is that plus its idle 10 s.)"""
    with topics.temporary(bootstrap, "empty", 1, 1) as empty:
        result = kperf(tmp_path, "consume", "--bootstrap", bootstrap, "--topic", empty, "--records", "10", "--client",
                       "java", "--join-timeout", "5")
    assert result.returncode == Exit.FAILED, result.stderr
    (kept,) = recorded(tmp_path)
    assert kept["records"] == 0 and pd.isna(kept["records_per_s"]) and kept[FAILED]
    assert f"kperf: failed: {kept[FAILED]}" in result.stderr


def test_a_cluster_named_by_the_environment_is_named_first(tmp_path: Path, bootstrap: str, topic: str) -> None:
    """$KPERF_BOOTSTRAP loads a cluster no option named: the command says which on its first line, before any load."""
    produce = ["produce", "--topic", topic, "--records", "2500", "--throughput", "1000", "--json"]  # 2.5 s: a rate
    named = kperf(tmp_path, *produce, env={BOOTSTRAP_ENV: bootstrap})
    assert named.returncode == 0, named.stderr
    assert named.stderr.splitlines()[0] == f"kperf: cluster {bootstrap}, from ${BOOTSTRAP_ENV} (no --bootstrap given)"
    given = kperf(tmp_path, *produce, "--bootstrap", bootstrap, env={BOOTSTRAP_ENV: bootstrap})
    assert given.returncode == 0 and BOOTSTRAP_ENV not in given.stderr


def test_a_password_given_as_a_client_setting_is_refused_and_written_nowhere(
    tmp_path: Path, bootstrap: str, topic: str
) -> None:
    """Client settings are recorded with the results: connection secrets belong in the client properties file."""
    result = kperf(
        tmp_path, "produce", "--bootstrap", bootstrap, "--topic", topic, "--records", "100", "--json",
        "-X", "sasl.password=hunter2-secret",
    )
    assert result.returncode == 1 and "sasl.password is a connection setting" in result.stderr
    assert "hunter2" not in result.stdout + result.stderr
    assert not any(b"hunter2" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["produce", "--records", "5", "-X", "batch.size"], "-X 'batch.size' is not KEY=VALUE"),
        (["produce", "--records", "5", "--client", "jvm"], "unknown client 'jvm'"),
        (["produce", "--records", "5", "--producers", "2", "--client", "java"], "--producers is not supported with --client java"),
        (["produce", "--records", "5", "--record-size", "0"], "record size must be at least 1 byte"),
        (["produce", "--records", "5", "-X", "compression.type=lz5"], 'Invalid value "lz5"'),
        (["produce", "--records", "5", "--duration", "3"], "either a record count or a duration"),
        (["consume", "--duration", "5", "--client", "java"], "--duration is not supported with --client java"),
        (["produce", "--records", "5", "--partitions", "3"], "has 2 partition(s), not the 3 --partitions asks for"),
        (["consume", "--records", "5", "--partitions", "1", "--client", "java"], "has 2 partition(s), not the 1"),
    ],
)
def test_bad_input_is_one_line_and_records_nothing(
    tmp_path: Path, bootstrap: str, topic: str, args: list[str], message: str
) -> None:
    result = kperf(tmp_path, *args[:1], "--bootstrap", bootstrap, "--topic", topic, *args[1:])
    assert result.returncode == 1 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "adhoc").exists()


def test_missing_topic_and_unreachable_cluster(tmp_path: Path, bootstrap: str) -> None:
    missing = kperf(tmp_path, "produce", "--bootstrap", bootstrap, "--topic", "no-such-topic", "--records", "5")
    assert missing.returncode == 1 and "topic no-such-topic does not exist" in missing.stderr
    gone = kperf(tmp_path, "consume", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--records", "5", timeout=180)
    assert gone.returncode == 1 and "cannot reach Kafka at 127.0.0.1:1 within" in gone.stderr
    nothing = kperf(tmp_path, "produce", "--topic", "t", "--records", "5")
    assert nothing.returncode == 1 and "no cluster: give --bootstrap" in nothing.stderr
    assert not (tmp_path / "adhoc").exists()


def test_import_records_every_measurement_or_none(tmp_path: Path) -> None:
    files = [FIXTURES / "kafka-4.1.1-producer.txt", FIXTURES / "kafka-2.x-consumer.txt"]
    result = kperf(tmp_path, "import", *map(str, files))
    assert result.returncode == Exit.FAILED, result.stderr  # the consumer read its records in 0.71 s: no rate
    rows = recorded(tmp_path)
    assert [(r["role"], r["records"]) for r in rows] == [("producer", 200000), ("consumer", 200411)]
    assert not rows[0][FAILED] and rows[1][FAILED] == "rate over 0.71 s, below the 1 s a rate needs"
    assert f"kperf: failed: {rows[1][FAILED]}" in result.stderr

    damaged = tmp_path / "damaged.txt"
    damaged.write_text(files[0].read_text()[:-40])
    bad = kperf(tmp_path, "import", str(files[0]), str(damaged))
    assert bad.returncode == 1 and f"{damaged}:2: cannot read" in bad.stderr
    assert len(recorded(tmp_path)) == 2  # the good file of that call was not recorded either

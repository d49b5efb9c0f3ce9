"""kperf on a Kafka-API cluster that is not Apache Kafka: franz-go's kfake (built by `make kfake`, as `make test`
does), in memory, in one process of the test's own.

What it can carry is measured there; what it lacks is refused in one line before any load; what kperf records
about it is what it answered (API versions, feature levels), its Kafka version "unknown" (it exports no JMX).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kperf import validity
from kperf.exits import Exit
from kperf.kafka import features, topics
from kperf.paths import cache_dir
from kperf.results import FAILED, ResultStore
from tests.helpers import ROOT, kperf

KFAKE = cache_dir() / "kfake" / "kfake-broker"
# The experiments whose requests differ (a producer's settings, several consumers of a group, compression,
# replication and acks, a producer and a consumer at once); the others send what batch sends, and each runs on
# Apache Kafka under nbval (notebooks/).
STUDIED = ["batch", "threads", "codecs", "replication", "end_to_end"]
# Each one's requests once: unthrottled batches only (a paced one sends the same requests, slower), replication at
# rf 3 only (both acks; rf 1 is every other experiment's), threads with two producers and two consumers only (one
# of each is batch's and every consumer's) and codecs with lz4 only (none is batch's): 10 units, not 18. Codecs'
# smoke points hold 2 million records, sized for Apache Kafka: kfake, in one process, took 26-117 s a point for them
# under the suite's load (2026-11-29: 35,000-147,000 records/s); 300,000 still give each client more than the span a
# rate needs, and a point that falls short is measured again, longer (calibration).
NARROWED = ["--set", "batch.throughputs=[-1]", "--set", "replication.replication_factors=[3]",
            "--set", "threads.producer_counts=[2]", "--set", "threads.consumer_counts=[2]",
            "--set", "codecs.codecs=[lz4]", "--set", "codecs.records=300000"]

pytestmark = [pytest.mark.cluster, pytest.mark.skipif(not KFAKE.is_file(), reason="kfake not built (make kfake)")]


def kfake(*args: str) -> Iterator[str]:
    """A kfake cluster on free ports of 127.0.0.1 for as long as the caller holds it; its bootstrap servers.
    It prints its addresses once listening; it is stopped by its pid."""
    process = subprocess.Popen([str(KFAKE), "-port", "0", *args], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()  # bounded: the process either listens and prints, or exits
        assert line, f"kfake-broker exited with {process.wait(timeout=10)} before listening"
        yield line
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Three kfake brokers: enough for the replication factors of the smoke study and workload."""
    yield from kfake("-brokers", "3")


@pytest.fixture(scope="module")
def lacking() -> Iterator[str]:
    """A kfake broker standing for an older or partial implementation: Produce only up to v6 (no zstd),
    no InitProducerId (no idempotent producer)."""
    yield from kfake("-max-versions", "0=6,22=-1")


def records(data: Path, folder: str = "adhoc") -> list[dict[str, Any]]:
    return ResultStore.of_run(data / folder).load().to_dict("records")


def assert_honest(rows: list[dict[str, Any]]) -> None:
    """No record is a rate from zero records or from a span below kperf.validity's rule."""
    for row in rows:
        if row.get("records_per_s") is None or row.get(FAILED):
            continue
        assert row["records"] > 0, row
        window = row.get("param.window_s") or 0
        assert row["seconds"] >= validity.min_span_s(float(window)), row


def test_what_it_answers_is_recorded_and_nothing_is_guessed(tmp_path: Path, cluster: str) -> None:
    answered = features.of(cluster)
    assert {0, 1, 3, 18, 19}.issubset(answered.apis), answered.apis
    described = answered.describe()
    with topics.temporary(cluster, "described", 1, 1) as topic:
        # Paced for its seconds: a rate on any machine (a count sent as fast as it can may be too short for one)
        made = kperf(tmp_path, "produce", "--bootstrap", cluster, "--topic", topic, "--duration", "2",
                     "--window", "0.5", "--throughput", "2000", "--json")
    assert made.returncode == Exit.OK, made.stderr
    row = json.loads(made.stdout)
    assert row["env.kafka_version"] == "unknown"  # kfake exports no JMX: never guessed from its API versions
    assert row["env.api_versions"] == described["api_versions"] and row["env.features"] == described["features"]


def test_both_clients_produce_and_consume_there(tmp_path: Path, cluster: str) -> None:
    """Paced producers run their seconds on any machine, so each is a rate. A consumer reads their records as fast
    as it can (the native loop and the Java consumer 1.8 million in 0.95 s here): one that read them in under
    kperf.validity's span is a failed unit for that reason alone (exit 3), never a rate from too short a span; the
    exit is the one its recorded span and fetches call for."""
    with topics.temporary(cluster, "both", 3, 1) as topic:
        base = ["--bootstrap", cluster, "--topic", topic, "--json", "--window", "0.5", "--throughput", "150000"]
        produced = [kperf(tmp_path, "produce", *base, "--duration", "6"),
                    kperf(tmp_path, "produce", *base, "--records", "900000", "--client", "java")]  # no --duration
        for result in produced:
            assert result.returncode == Exit.OK, result.stderr
            row = json.loads(result.stdout)
            assert row["records_per_s"] > 0 and not row[FAILED], row
        total = sum(json.loads(r.stdout)["records"] for r in produced)
        for client, loop in (("python", "python"), ("python", "native"), ("java", "")):
            chosen = ["--client", client, *(["--loop", loop] if loop else [])]
            consumed = kperf(tmp_path, "consume", *base[:-2], "--records", str(total), *chosen)
            row = json.loads(consumed.stdout)
            assert row["records"] >= total, row
            judged = validity.failure(row)  # from the figures it recorded: its records, span and fetches
            assert consumed.returncode == (Exit.OK if judged is None else Exit.FAILED), (judged, consumed.stderr)
            assert row["records_per_s"] > 0 if judged is None else (row[FAILED] == judged and "a rate needs" in judged), row
    rows = records(tmp_path)
    assert [(r["client"], r["loop"]) for r in rows] == [("python", "native"), ("java", None), ("python", "python"),
                                                        ("python", "native"), ("java", None)]
    assert_honest(rows)


def test_capacity_is_measured_there(tmp_path: Path, cluster: str) -> None:
    """The smoke workload, far below what kfake carries: a verdict from measurements, not a refusal."""
    result = kperf(tmp_path, "capacity", "--bootstrap", cluster, str(ROOT / "examples" / "smoke.yaml"), timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Yes: this cluster carried smoke" in result.stdout, result.stdout
    (run,) = (tmp_path / "capacity").iterdir()
    rows = ResultStore.of_run(run).load().to_dict("records")
    assert rows and all(r["env.kafka_version"] == "unknown" for r in rows)
    assert_honest(rows)


@pytest.mark.timeout(1200, method="signal")  # a whole study: twice the cluster tests' limit
def test_a_smoke_study_of_what_it_can_carry(tmp_path: Path, cluster: str) -> None:
    """The experiments whose requests differ (STUDIED; faults kills a broker process: refused below), measured and reported; a unit
    may still fail (then with its reason, and the study exits 3)."""
    result = kperf(tmp_path, "study", "--profile", "smoke", "--bootstrap", cluster, *STUDIED, *NARROWED,
                   timeout=1100)
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "report.html").is_file()
    rows = ResultStore.of_run(run).load().to_dict("records")
    failed = [r for r in rows if r.get(FAILED)]  # exit 3 exactly when a unit failed, each named on stderr
    assert result.returncode == (Exit.FAILED if failed else Exit.OK), result.stderr
    assert {r["experiment"] for r in rows} == set(STUDIED)
    assert all(r.get(FAILED) or r["records"] > 0 for r in rows)
    for name in STUDIED:  # measured there: a unit too short for a rate is measured again, longer (calibration)
        assert any(r["experiment"] == name and not r.get(FAILED) for r in rows), name
    assert_honest(rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["produce", "--topic", "refused", "--records", "1000", "-X", "compression.type=zstd"],
         "answers Produce only up to v6, and zstd compression needs v7"),
        (["produce", "--topic", "refused", "--records", "1000", "-X", "enable.idempotence=true"],
         "does not answer InitProducerId (API key 22)"),
        (["produce", "--topic", "refused", "--records", "1000", "--client", "java"],  # idempotent by default
         "does not answer InitProducerId (API key 22)"),
        (["study", "--profile", "smoke", "codecs", "--set", "codecs.codecs=zstd"],
         "answers Produce only up to v6, and zstd compression needs v7"),
    ],
)
def test_what_it_lacks_is_refused_in_one_line_before_load(
    tmp_path: Path, lacking: str, args: list[str], message: str
) -> None:
    with topics.temporary(lacking, "refused", 1, 1) as topic:
        result = kperf(tmp_path, *[topic if a == "refused" else a for a in args], "--bootstrap", lacking)
    assert result.returncode == Exit.ERROR, result.stderr  # nothing measured: refused before any load
    errors = [line for line in result.stderr.splitlines() if line.startswith("kperf: error")]
    assert errors == [f"kperf: error: the cluster at {lacking} {message}"], result.stderr
    assert not (tmp_path / "adhoc").exists() and not list(tmp_path.glob("runs/*/results*"))


def test_a_broker_it_cannot_kill_is_refused_before_load(tmp_path: Path, cluster: str) -> None:
    result = kperf(tmp_path, "study", "--profile", "smoke", "faults", "--bootstrap", cluster)
    assert result.returncode == Exit.ERROR and "is not a Kafka process on this host" in result.stderr, result.stderr


def test_a_cluster_answering_only_older_api_versions_is_described_without_feature_levels() -> None:
    """ApiVersions before v3 carries no feature levels: asked again at the broker's newest, none recorded."""
    for bootstrap in kfake("-max-versions", "18=2"):
        answered = features.of(bootstrap)
        assert answered.apis[18] == (0, 2) and 0 in answered.apis and answered.finalized == {}

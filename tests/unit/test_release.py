"""Finding Java and Kafka, and the one-line errors when they are missing."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from kperf.errors import KperfError
from kperf.kafka import release
from tests.helpers import kperf


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('java version "1.8.0_392"', 8),
        ('openjdk version "21" 2023-09-19', 21),
        ("no version here", None),
    ],
)
def test_java_major_version(output: str, major: int | None) -> None:
    assert release.parse_java_major(output) == major


def test_pinned_version_is_a_4x_release() -> None:
    assert release.pinned_version().startswith("4.")


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("3.6.2", "Kafka 3.6.2 is too old: kperf runs KRaft brokers and the stock tools of 3.7 or newer"),
        ("2.8.0", "Kafka 2.8.0 is too old"),
        ("4.x", "Kafka version '4.x' is not a release number such as "),
        ("4.1", "Kafka version '4.1' is not a release number"),
    ],
)
def test_versions_kperf_cannot_run_are_refused(version: str, message: str) -> None:
    with pytest.raises(KperfError, match=re.escape(message)):
        release.check_version(version)
    assert release.check_version("3.7.0") == "3.7.0"


def fake_executable(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return folder


def test_old_java_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java_home = tmp_path / "jdk"
    fake_executable(java_home / "bin", "java", """echo 'openjdk version "11.0.2" 2019-01-15' >&2""")
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    with pytest.raises(KperfError, match="Java 11 .* is too old: Kafka 4.x needs Java 17"):
        release.java_executable()


def test_missing_java_is_one_line_naming_it(tmp_path: Path) -> None:
    result = kperf(tmp_path, "kafka", "fetch", env={"PATH": str(tmp_path), "JAVA_HOME": ""})
    assert result.returncode == 1
    assert result.stderr.startswith("kperf: error: Java not found") and result.stderr.count("\n") == 1


def test_failing_maven_download_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_executable(
        tmp_path / "bin", "mvn", "echo '[ERROR] Failed to execute goal: Could not transfer artifact'; exit 1"
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("KPERF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no Maven metadata of this user's to list releases from
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    monkeypatch.delenv("KPERF_KAFKA_VERSION", raising=False)
    with pytest.raises(KperfError, match=r"could not fetch Kafka 4\.\S+ with Maven: \[ERROR\] Failed to execute goal"):
        release.ensure_kafka()
    assert not (tmp_path / "cache" / f"kafka-{release.pinned_version()}" / "libs").exists()


def test_kafka_home_that_is_not_kafka(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(KperfError, match="is not a Kafka distribution"):
        release.ensure_kafka()


def test_failing_exporter_download_is_one_line_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_executable(
        tmp_path / "bin", "mvn", "echo '[ERROR] Failed to execute goal: Could not transfer artifact'; exit 1"
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("KPERF_CACHE", str(tmp_path / "cache"))
    with pytest.raises(KperfError, match=r"could not fetch the JMX exporter \S+ with Maven: \[ERROR\] Failed to execute goal"):
        release.ensure_jmx_exporter()
    assert not list((tmp_path / "cache").iterdir())


def test_the_exporter_agent_goes_to_the_broker_jvm_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = release.exporter_agent_option(tmp_path / "agent.jar", "127.0.0.1", 40001)
    assert agent == f"-javaagent:{tmp_path / 'agent.jar'}=127.0.0.1:40001:{release.EXPORTER_CONFIG}"
    maven = release.KafkaDistribution(version="4.3.1", java="java", libs=tmp_path)
    argv, _ = maven.command("server", ["server.properties"], jvm_options=[agent])
    assert argv.index(agent) < argv.index("-cp")  # a JVM option, before the main class
    monkeypatch.setenv("KAFKA_OPTS", "-Dfrom.user=1")
    home = release.KafkaDistribution(version="4.3.1", java="java", home=tmp_path, source="KAFKA_HOME")
    argv, env = home.command("server", ["server.properties"], jvm_options=[agent])
    assert agent not in argv and env["KAFKA_OPTS"] == f"-Dfrom.user=1 {agent}"  # the user's options kept


def test_the_releases_maven_lists_are_numbers_kperf_runs_and_no_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The version list Maven keeps of kafka-tools (what `mvn dependency:get ...:RELEASE` fetches): a stand-in mvn here.
    metadata = tmp_path / ".m2" / "repository" / "org" / "apache" / "kafka" / "kafka-tools" / "maven-metadata-central.xml"
    metadata.parent.mkdir(parents=True)
    listed = ["3.6.2", "3.7.0", "4.3.1", "4.4.0-SNAPSHOT", "4.1.1", "4.2.0-rc1", "4.1.1", "nightly"]
    metadata.write_text("<metadata><versioning><versions>" + "".join(f"<version>{v}</version>" for v in listed)
                        + "</versions></versioning></metadata>")
    monkeypatch.setenv("HOME", str(tmp_path))
    mvn = fake_executable(tmp_path / "bin", "mvn", "exit 0") / "mvn"
    assert release.released_versions(str(mvn)) == ["3.7.0", "4.1.1", "4.3.1"]
    assert release.release_key("4.4.0-SNAPSHOT") == (4, 4, 0)  # a source build is run, but never listed as a release

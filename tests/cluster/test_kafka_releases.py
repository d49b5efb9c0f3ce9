"""Kafka releases from Maven Central: one it does not have is refused naming those it has."""

from __future__ import annotations

from pathlib import Path

from kperf.kafka import release
from tests.helpers import kperf


def test_a_version_maven_does_not_have_is_one_line_naming_those_it_has(tmp_path: Path) -> None:
    result = kperf(tmp_path, "--kafka-version", "4.99.0", "kafka", "fetch", env={"KPERF_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("kperf: error: Kafka 4.99.0 is not on Maven Central; releases kperf can run: 3.7.0,")
    assert f" {release.pinned_version()}" in result.stderr
    assert list((tmp_path / "cache").iterdir()) == []  # nothing left behind

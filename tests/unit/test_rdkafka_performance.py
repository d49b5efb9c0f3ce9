"""What kperf reads of rdkafka_performance's output (real captures, tests/data/rdkafka-performance) and writes for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kperf.drivers import rdkafka_performance
from kperf.errors import KperfError

DATA = Path(__file__).parent.parent / "data" / "rdkafka-performance"


def test_the_producers_final_line_is_its_result() -> None:
    m = rdkafka_performance.parse((DATA / "producer.txt").read_text(), "producer")
    assert (m.role, m.client, m.records, m.bytes, m.seconds, m.errors) == (
        "producer", "rdkafka_performance", 300_000, 30_000_000, pytest.approx(1.318, abs=1e-3), {})
    assert m.records_per_s == pytest.approx(227_580, abs=1)  # what the tool printed, to the record per second


def test_the_consumers_summary_is_its_result() -> None:
    m = rdkafka_performance.parse((DATA / "consumer.txt").read_text(), "consumer")
    assert (m.role, m.records, m.bytes, m.seconds) == ("consumer", 300_000, 30_000_000, pytest.approx(0.45, abs=1e-3))
    assert m.records_per_s == pytest.approx(666_058, abs=1)


def test_failed_deliveries_are_errors_and_only_delivered_bytes_count() -> None:
    line = ("% 1000 messages produced (100000 bytes), 900 delivered (offset 5, 100 failed) in 2000ms: 450 msgs/s "
            "and 0.05 MB/s, 3 produce failures, 0 in queue, no compression\n")
    m = rdkafka_performance.parse(line, "producer")
    assert (m.records, m.bytes, m.errors) == (900, 90_000, {"failed": 100, "produce_failures": 3})


def test_output_without_a_summary_is_a_one_line_error() -> None:
    with pytest.raises(KperfError, match="printed no consumer summary: % Waiting for group rebalance.."):
        rdkafka_performance.parse("% Waiting for group rebalance..\n", "consumer")
    with pytest.raises(KperfError, match=r"printed no producer summary: \(no output\)"):
        rdkafka_performance.parse("", "producer")


def test_settings_are_written_one_a_line_as_the_tool_reads_them() -> None:
    text = rdkafka_performance.conf_file({"queued.min.messages": 1_000_000, "enable.idempotence": True,
                                          "sasl.jaas.config": "a=b c"})
    assert text == "queued.min.messages=1000000\nenable.idempotence=true\nsasl.jaas.config=a=b c\n"
    with pytest.raises(KperfError, match="cannot take the setting x"):
        rdkafka_performance.conf_file({"x": "one\ntwo"})


def test_a_tool_not_built_is_a_one_line_error_naming_the_make_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPERF_CACHE", str(tmp_path))
    assert rdkafka_performance.binary() is None
    with pytest.raises(KperfError, match="rdkafka_performance is not built: run 'make rdkafka-perf'"):
        rdkafka_performance.run("producer", "127.0.0.1:1", "t", 10, 100)

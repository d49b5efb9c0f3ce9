"""Saved output of Kafka's perf tools imported as Measurements (kperf import): no cluster, the captures in tests/data."""

from __future__ import annotations

import pytest

from kperf.drivers.stock_tools_measurements import JOIN_COUNTED_TWICE, consumer_output, import_file
from kperf.drivers.stock_tools_output import ToolOutputError
from kperf.errors import KperfError, MeasurementFailed
from kperf.results import MIB
from tests.helpers import DATA

CAPTURES = DATA / "tool-output"


def test_import_real_producer_output():
    (m,) = import_file(CAPTURES / "kafka-4.1.1-producer.txt")
    assert (m.role, m.client, m.records) == ("producer", "java", 200000)
    assert m.records_per_s == pytest.approx(38543.1)
    assert m.mib_per_s == pytest.approx(3.68)  # bytes derived from the printed MB/sec
    assert m.bytes == pytest.approx(200000 * 100, rel=0.005)  # the 100-byte records of the capture
    assert m.latency_ms == {
        "ack": {"avg": 1937.09, "p50": 2059, "p95": 2367, "p99": 2384, "p999": 2389, "max": 2392}
    }
    assert m.errors == {}


@pytest.mark.parametrize(
    "name, records, rate",
    [
        ("kafka-4.1.1-producer-throttled.txt", 300000, 49668.9),
        ("kafka-2.x-producer.txt", 200000, 38543.1),
        ("kafka-trunk-producer-warmup.txt", 200000, 49668.9),  # the steady-state total, warm-up excluded
    ],
)
def test_import_other_producer_outputs(name, records, rate):
    (m,) = import_file(CAPTURES / name)
    assert m.records == records
    assert m.records_per_s == pytest.approx(rate)
    assert m.bytes / m.records == pytest.approx(100, rel=0.01)
    assert m.latency_ms["ack"]["p50"] <= m.latency_ms["ack"]["p99"] <= m.latency_ms["ack"]["max"]


@pytest.mark.parametrize("name", ["kafka-4.1.1-consumer.txt", "kafka-2.x-consumer.txt", "kafka-4.1.1-consumer-hide-header.txt"])
def test_import_consumer_summary(name):
    (m,) = import_file(CAPTURES / name)
    assert (m.role, m.client, m.records) == ("consumer", "java", 200411)
    assert m.bytes == pytest.approx(200411 * 100, abs=60)  # MB printed with four decimals
    # seconds is the tool's fetch time, from the group's first assignment (the join, 3.5-4 s here, is its
    # rebalance_ms), so the rate is the tool's fetch rate; its own fetch_* columns, from 0.7 s, are left out (a rate
    # comes from at least kperf.validity.MIN_SPAN_S).
    assert m.seconds == pytest.approx(m.measures["fetch_ms"] / 1000) and m.seconds < 1
    assert m.records_per_s == pytest.approx({"kafka-4.1.1-consumer-hide-header.txt": 292570.8029}.get(name, 283466.7610),
                                            rel=1e-4)
    assert set(m.measures) == {"rebalance_ms", "fetch_ms"}
    assert m.errors == {}


@pytest.mark.parametrize("rebalance_ms, fetch_ms, fails", [
    (4096, 707, False),  # the capture as printed
    (4964, -161, True),  # a consumer-protocol member's empty first assignment counted as a second join (CI's)
    (4803, 0, True),  # the join as long as the whole run
    (4802, 1, False),  # a millisecond left: the tool's to give
])
def test_a_consumer_summary_without_a_positive_fetch_time_fails_the_unit(rebalance_ms: int, fetch_ms: int,
                                                                       fails: bool) -> None:
    header, row = (CAPTURES / "kafka-4.1.1-consumer.txt").read_text().splitlines()
    fields = row.split(", ")
    fields[6:8] = [str(rebalance_ms), str(fetch_ms)]
    text = f"{header}\n{', '.join(fields)}\n"
    if not fails:
        assert consumer_output(text, "out")[0].seconds == fetch_ms / 1000
        return
    with pytest.raises(MeasurementFailed, match=rf"^out: ConsumerPerformance printed a fetch time of {fetch_ms} ms, "
                                                rf"its join \({rebalance_ms} ms\) as long as its whole run") as caught:
        consumer_output(text, "out")
    assert caught.value.cause == JOIN_COUNTED_TWICE and not caught.value.timed_out


def test_import_detailed_consumer_rows_as_intervals():
    rows = import_file(CAPTURES / "kafka-4.1.1-consumer-detailed.txt")
    text_rows = [line.split(", ") for line in (CAPTURES / "kafka-4.1.1-consumer-detailed.txt").read_text().splitlines()[1:]]
    assert len(rows) == len(text_rows) > 1
    assert all(m.measures["interval"] == 1 for m in rows)
    assert sum(m.records for m in rows) == int(text_rows[-1][4])  # intervals add up to the running total
    assert sum(m.bytes for m in rows) == pytest.approx(float(text_rows[-1][2]) * MIB, abs=60)
    for m, fields in zip(rows, text_rows):
        assert m.records_per_s == pytest.approx(float(fields[9]), rel=0.01)  # the interval's fetch.nMsg.sec (no join)


def test_import_consumer_timeout_is_an_error():
    (m,) = import_file(CAPTURES / "kafka-4.1.1-consumer-timeout.txt")
    assert m.records == 0
    assert m.errors == {"CONSUMER_TIMEOUT": 1}


@pytest.mark.parametrize("name", ["kafka-4.1.1-e2e.txt", "kafka-2.x-e2e.txt"])
def test_import_end_to_end(name):
    (m,) = import_file(CAPTURES / name)
    assert (m.role, m.client) == ("end-to-end", "java")
    assert m.latency_ms == {"e2e": {"avg": 2.2938, "p50": 1, "p99": 13, "p999": 28}}  # no p95 or max printed
    assert (m.records, m.bytes, m.seconds) == (0, 0, 0.0)  # not printed by the tool


def test_import_missing_file(tmp_path):
    with pytest.raises(KperfError, match="nothing-here.txt: no such file"):
        import_file(tmp_path / "nothing-here.txt")


def test_import_damaged_file_names_file_and_line(tmp_path):
    lines = (CAPTURES / "kafka-4.1.1-producer.txt").read_text().splitlines()
    damaged = tmp_path / "damaged.txt"
    damaged.write_text(f"{lines[0]}\n{lines[1][:60]}\n")
    with pytest.raises(ToolOutputError, match=rf"{damaged}:2: cannot read producer line"):
        import_file(damaged)

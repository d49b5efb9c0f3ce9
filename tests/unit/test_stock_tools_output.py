"""kperf.drivers.stock_tools_output reads what Kafka's perf tools really print (tests/data/tool-output)."""


import pytest

from kperf.drivers.stock_tools_output import (
    EndToEndSummary,
    ToolOutputError,
    consumed_total,
    detect_and_parse,
    parse_consumer,
    parse_end_to_end,
    parse_producer,
)
from kperf.errors import KperfError
from tests.helpers import DATA

CAPTURES = DATA / "tool-output"
MIB = 2**20
NOISE = (
    "OpenJDK 64-Bit Server VM warning: Sharing is only supported for boot loader classes\n"
    "[2026-11-22 02:32:39,067] WARN [Consumer clientId=perf] Bootstrap broker disconnected (org.apache.kafka.clients.NetworkClient)\n"
    "\n"
)


def read(name: str) -> tuple[str, str]:
    path = CAPTURES / name
    return path.read_text(), str(path)


def test_consumed_total_is_the_metrics_tables_whole_count_or_nothing():
    text, _ = read("kafka-4.3.1-consumer-detailed-metrics.txt")
    assert consumed_total(text) == 2_000_000  # the client's total, not the per-topic line
    assert consumed_total(read("kafka-4.1.1-consumer.txt")[0]) == 0  # no table: a consumer that got no partition


def test_real_producer_rates_agree_with_record_size():
    periodic, final = parse_producer(*read("kafka-4.1.1-producer.txt"))
    assert final.records == 200000
    assert final.mib_per_s == pytest.approx(final.records_per_s * 100 / MIB, abs=0.006)
    assert (final.p50_ms, final.p95_ms, final.p99_ms, final.p999_ms) == (2059, 2367, 2384, 2389)
    assert final.p50_ms <= final.p95_ms <= final.p99_ms <= final.p999_ms <= final.max_ms
    assert periodic and all(p.p50_ms is None for p in periodic)
    assert all(p.mib_per_s == pytest.approx(p.records_per_s * 100 / MIB, abs=0.006) for p in periodic)
    assert max(p.max_ms for p in periodic) <= final.max_ms


def test_real_throttled_producer_stays_under_its_cap():
    _, final = parse_producer(*read("kafka-4.1.1-producer-throttled.txt"))
    assert final.records == 300000 and final.records_per_s <= 50000


@pytest.mark.parametrize(
    "name", ["kafka-4.1.1-consumer.txt", "kafka-4.1.1-consumer-hide-header.txt"]
)
def test_real_consumer_summary_is_self_consistent(name):
    [row] = parse_consumer(*read(name))
    assert row.mib == pytest.approx(row.records * 100 / MIB, abs=5e-5)
    assert row.records >= 200000  # the tool finishes the last poll's batch
    fetch_s = row.fetch_ms / 1000
    assert row.fetch_records_per_s == pytest.approx(row.records / fetch_s, rel=1e-6)
    assert row.records_per_s == pytest.approx(row.records / ((row.rebalance_ms + row.fetch_ms) / 1000), rel=1e-6)
    assert row.start < row.end


def test_real_detailed_consumer_rows_are_running_totals():
    rows = parse_consumer(*read("kafka-4.1.1-consumer-detailed.txt"))
    assert len(rows) == 5 and rows[0].start is None
    assert [r.start for r in rows[1:]] == [r.end for r in rows[:-1]]
    assert all(a.records < b.records for a, b in zip(rows, rows[1:]))
    for a, b in zip(rows, rows[1:]):
        assert b.records_per_s == pytest.approx((b.records - a.records) / (b.fetch_ms / 1000), rel=1e-6)


def test_real_consumer_timeout_warning_is_skipped_and_zeros_are_the_tools():
    [row] = parse_consumer(*read("kafka-4.1.1-consumer-timeout.txt"))
    assert row.records == 0 and row.fetch_ms == 1081


def test_real_end_to_end():
    summary = parse_end_to_end(*read("kafka-4.1.1-e2e.txt"))
    assert summary == EndToEndSummary(avg_ms=2.2938, p50_ms=1, p99_ms=13, p999_ms=28, samples=5)


def test_kafka_2_producer_final_line_with_six_decimals():
    periodic, final = parse_producer(*read("kafka-2.x-producer.txt"))
    assert periodic == []
    assert final == parse_producer(*read("kafka-4.1.1-producer.txt"))[1]


def test_kafka_2_consumer_reads_the_same_row():
    [row] = parse_consumer(*read("kafka-2.x-consumer.txt"))
    assert (row.mib, row.mib_per_s, row.records_per_s) == (19.1127, 3.9793, 41726.2128)
    assert (row.rebalance_ms, row.fetch_ms, row.fetch_mib_per_s, row.fetch_records_per_s) == (4096, 707, 27.0335, 283466.761)


def test_kafka_2_end_to_end_with_blank_line():
    assert parse_end_to_end(*read("kafka-2.x-e2e.txt")) == parse_end_to_end(*read("kafka-4.1.1-e2e.txt"))


def test_steady_state_total_is_the_final_line():
    _, final = parse_producer(*read("kafka-trunk-producer-warmup.txt"))
    assert (final.records, final.records_per_s, final.p999_ms) == (200000, 49668.9, 1608)


def test_old_consumer_rows_lack_fetch_columns():
    text = (
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec\n"
        "2026-11-22 02:32:39:067, 2026-11-22 02:32:43:870, 19.1127, 3.9793, 200411, 41726.2128\n"
    )
    [row] = parse_consumer(text)
    assert row.records == 200411 and row.rebalance_ms is row.fetch_mib_per_s is None


def test_decimal_comma_locale():
    text, source = read("kafka-4.1.1-consumer-hide-header.txt")
    [row] = parse_consumer(text.replace("19.1127", "19,1127"), source)
    assert row.mib == 19.1127


@pytest.mark.parametrize(
    "name,kind",
    [
        ("kafka-4.1.1-producer.txt", tuple),
        ("kafka-4.1.1-consumer-detailed.txt", list),
        ("kafka-4.1.1-consumer-hide-header.txt", list),
        ("kafka-4.1.1-e2e.txt", EndToEndSummary),
        ("kafka-2.x-e2e.txt", EndToEndSummary),
    ],
)
def test_detect_and_parse_skips_noise(name, kind):
    text, source = read(name)
    assert isinstance(detect_and_parse(NOISE + text + NOISE, source), kind)
    assert detect_and_parse(NOISE + text, source) == detect_and_parse(text, source)


@pytest.mark.parametrize(
    "name",
    [
        "kafka-4.1.1-producer.txt",
        "kafka-4.1.1-consumer.txt",
        "kafka-4.1.1-consumer-detailed.txt",
        "kafka-4.1.1-consumer-hide-header.txt",
        "kafka-4.1.1-e2e.txt",
    ],
)
@pytest.mark.parametrize("cut", [0.3, 0.5, 0.75])
def test_truncated_last_line_names_file_and_line(name, cut):
    """A cut inside the last number still reads as a number: no parser can tell."""
    text, source = read(name)
    lines = text.splitlines()
    index = len(lines) - 1
    lines[index] = lines[index][: int(len(lines[index]) * cut)]
    with pytest.raises(ToolOutputError, match=rf"^{source}:{index + 1}: cannot read "):
        detect_and_parse("\n".join(lines), source)


def test_damaged_number_raises():
    text, source = read("kafka-4.1.1-producer.txt")
    with pytest.raises(ToolOutputError, match=r":2: cannot read producer line"):
        parse_producer(text.replace("2059 ms 50th", "20x9 ms 50th"), source)


@pytest.mark.parametrize("parse", [parse_producer, parse_consumer, parse_end_to_end, detect_and_parse])
@pytest.mark.parametrize("text", ["", NOISE])
def test_no_summary_raises_naming_the_file(parse, text):
    with pytest.raises(ToolOutputError, match=r"^run\.txt: ") as caught:
        parse(text, "run.txt")
    assert isinstance(caught.value, KperfError)


def test_producer_without_final_line_raises():
    text, source = read("kafka-4.1.1-producer.txt")
    with pytest.raises(ToolOutputError, match="no ProducerPerformance final line"):
        parse_producer(text.splitlines()[0], source)

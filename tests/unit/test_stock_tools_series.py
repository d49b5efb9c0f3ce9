"""The stock tools' time series, built from what they really printed (tests/data/tool-output, README there).

The Kafka 4.3.1 captures ran with ``--reporting-interval 1000`` (one line a
second); the 4.1.1 producer capture has the tool's fixed 5000 ms windows.
"""

import math
import re
from dataclasses import replace

import pytest

from kperf.drivers.stock_tools_measurements import (
    FIXED_PRODUCER_INTERVAL_MS,
    REPORTING_INTERVAL_MS,
    ToolOutput,
    detailed_consumer_measurement,
    end_to_end_series,
    import_file,
    producer_measurement,
    producer_series,
    tail_seconds,
)
from kperf.drivers.stock_tools_output import (
    ProducerSummary,
    ToolOutputError,
    parse_consumer,
    parse_consumer_counts,
    parse_producer,
)
from kperf.results import MIB, Measurement
from kperf.series import Series
from kperf.steady import steady_state
from tests.helpers import DATA

CAPTURES = DATA / "tool-output"
CONSUMER = "kafka-4.3.1-consumer-detailed-metrics.txt"
# kperf's clock from the consumer capture's last row to its metrics table (tail_seconds), when it was recorded.
CONSUMER_TAIL_S = 0.607
CONSUMER_TIMEOUT_MS = 10_000  # the capture's --timeout
CONSUMER_ASKED = 2_000_000  # the capture's --messages


def read(name: str) -> str:
    return (CAPTURES / name).read_text()


def assert_contiguous(series: Series) -> None:
    """Windows lie back to back from 0, none empty of time."""
    assert series.starts_s[0] == 0.0
    for start, seconds, following in zip(series.starts_s, series.seconds, series.starts_s[1:]):
        assert following == pytest.approx(start + seconds, abs=1e-9)
    assert all(s >= 0 for s in series.seconds)


def producer(name: str, interval_ms: int | None) -> Measurement:
    periodic, final = parse_producer(read(name), name)
    return producer_measurement(periodic, final, 100, interval_ms)


@pytest.mark.parametrize(
    "name, interval_ms",
    [("kafka-4.3.1-producer.txt", REPORTING_INTERVAL_MS), ("kafka-4.3.1-producer-paced.txt", REPORTING_INTERVAL_MS),
     ("kafka-4.1.1-producer.txt", FIXED_PRODUCER_INTERVAL_MS), ("kafka-4.1.1-producer-throttled.txt", FIXED_PRODUCER_INTERVAL_MS)],
)
def test_producer_windows_add_up_to_the_tools_total(name, interval_ms):
    m = producer(name, interval_ms)
    periodic, final = parse_producer(read(name), name)
    series = m.series
    assert series is not None and series.width_s == interval_ms / 1000
    assert sum(series.records) == m.records == final.records
    assert sum(series.bytes) == m.bytes == final.records * 100
    assert_contiguous(series)
    assert series.starts_s[-1] + series.seconds[-1] == pytest.approx(m.seconds)  # the last window ends the run
    assert series.load_s == pytest.approx(m.seconds)
    # One window per periodic line, then the records acknowledged after the last one.
    assert series.records[: len(periodic)] == tuple(p.records for p in periodic)
    assert len(series.records) == len(periodic) + 1
    # The tool prints each window's max latency only: p50 and p99 are not invented.
    assert series.latency == "ack"
    assert series.latency_max_ms[: len(periodic)] == tuple(p.max_ms for p in periodic)
    assert all(math.isnan(v) for v in series.latency_p50_ms + series.latency_p99_ms)


def test_producer_window_lengths_are_the_printed_rates():
    periodic, _ = parse_producer(read("kafka-4.3.1-producer.txt"))
    series = producer("kafka-4.3.1-producer.txt", REPORTING_INTERVAL_MS).series
    assert series is not None
    for line, seconds in zip(periodic[1:], series.seconds[1:]):  # the first: see the next test
        assert seconds * line.records_per_s == pytest.approx(line.records, rel=1e-5)
        assert seconds >= REPORTING_INTERVAL_MS / 1000  # printed once the interval has passed


def test_producer_uncertain_first_window_is_its_shortest():
    # "1 records sent, 0.1 records/sec": 6.7 to 20 s by the rate; its one record took 7611 ms.
    periodic, _ = parse_producer(read("kafka-4.3.1-producer.txt"))
    assert (periodic[0].records, periodic[0].records_per_s, periodic[0].max_ms) == (1, 0.1, 7611.0)
    series = producer("kafka-4.3.1-producer.txt", REPORTING_INTERVAL_MS).series
    assert series is not None
    assert series.seconds[0] == pytest.approx(7.611)
    assert series.records[-1] / series.seconds[-1] < 400_000  # the last window keeps a plausible length


@pytest.mark.parametrize("name", ["kafka-4.3.1-producer.txt", "kafka-4.3.1-producer-paced.txt"])
def test_long_producer_run_has_a_steady_state(name):
    m = producer(name, REPORTING_INTERVAL_MS)
    row = m.row()
    assert row["steady_windows"] >= 15
    assert row["steady_low"] < row["steady_records_per_s"] < row["steady_high"]
    assert 0 < row["steady_start_s"] < row["steady_end_s"] <= m.seconds + 1e-9


def test_paced_producer_steady_rate_is_under_its_cap():
    row = producer("kafka-4.3.1-producer-paced.txt", REPORTING_INTERVAL_MS).row()
    assert row["steady_records_per_s"] <= 100_000  # --throughput 100000


def test_imported_producer_output_has_a_series():
    (m,) = import_file(CAPTURES / "kafka-4.3.1-producer.txt")
    assert m.series is not None and sum(m.series.records) == m.records == 3_000_000
    assert m.series.width_s == pytest.approx(1.0, abs=0.01)  # not printed: the median window's
    assert "steady_records_per_s" in m.row()


def test_warmup_output_has_no_series():
    # Its periodic lines come from two overlapping Stats (the whole run's, then the steady state's).
    (m,) = import_file(CAPTURES / "kafka-trunk-producer-warmup.txt")
    assert m.series is None and "steady_records_per_s" not in m.row()


def consumer(text: str | None = None) -> Measurement:
    m = detailed_consumer_measurement(text or read(CONSUMER), CONSUMER, CONSUMER_TAIL_S, CONSUMER_TIMEOUT_MS, CONSUMER_ASKED)
    assert m is not None
    return m


def test_consumer_whole_run_from_rows_metrics_and_kperfs_clock():
    text = read(CONSUMER)
    rows = parse_consumer(text)
    m = consumer()
    counts = parse_consumer_counts(text)
    assert m.records == sum(counts.leads) == 2_000_000  # the partitions' positions: the rows stop short of them
    assert len(counts.leads) == 3 and counts.consumed <= m.records
    assert rows[-1].records < m.records
    # The rows' milliseconds, then the tail kperf timed; seconds from the group's first assignment (the join apart).
    rows_ms = sum(r.rebalance_ms + r.fetch_ms for r in rows)
    assert m.measures["rebalance_ms"] == rows[0].rebalance_ms > 0
    assert m.seconds == pytest.approx((rows_ms - rows[0].rebalance_ms) / 1000 + CONSUMER_TAIL_S, abs=1e-3)
    assert m.measures["fetch_ms"] == round(m.seconds * 1000)
    assert m.bytes == pytest.approx(m.records * 100, abs=53 * m.records / rows[-1].records)
    assert m.errors == {}


def test_consumer_rows_are_the_windows():
    text = read(CONSUMER)
    rows = parse_consumer(text)
    m = consumer()
    series = m.series
    assert series is not None and series.width_s == 1.0
    assert sum(series.records) == m.records and sum(series.bytes) == m.bytes
    assert_contiguous(series)
    assert series.records[: len(rows)] == tuple(b.records - a for a, b in zip([0, *(r.records for r in rows)], rows))
    assert series.seconds[: len(rows)] == pytest.approx([(r.rebalance_ms + r.fetch_ms) / 1000 for r in rows])
    assert series.seconds[-1] == pytest.approx(CONSUMER_TAIL_S)  # the records after the last row
    # Load from the end of the first row (the group join is in it) to the end of reading.
    assert series.load_from_s == pytest.approx((rows[0].rebalance_ms + rows[0].fetch_ms) / 1000)
    assert series.load_s == pytest.approx(m.seconds + m.measures["rebalance_ms"] / 1000, abs=1e-3)  # the join too
    assert series.latency == ""


def test_long_consumer_run_has_a_steady_state():
    m = consumer()
    row = m.row()
    assert row["steady_windows"] >= 15
    assert row["steady_low"] < row["steady_records_per_s"] < row["steady_high"]
    assert row["steady_start_s"] >= m.series.load_from_s


def test_consumer_that_gave_up_stopped_loading_a_timeout_before_its_end():
    text = read(CONSUMER).replace(
        "\nMetric Name", "\nWARNING: Exiting before consuming the expected number of records: timeout (10000 ms) "
        "exceeded. You can use the --timeout option to increase the timeout.\nMetric Name", 1)
    rows = parse_consumer(text)
    last_row_s = sum(r.rebalance_ms + r.fetch_ms for r in rows) / 1000
    m = detailed_consumer_measurement(text, CONSUMER, 12.0, CONSUMER_TIMEOUT_MS, CONSUMER_ASKED + 1000)
    assert m is not None and m.errors == {"CONSUMER_TIMEOUT": 1}
    # As the summary would: the wait included (the join not).
    assert m.seconds == pytest.approx(last_row_s + 12.0 - rows[0].rebalance_ms / 1000, abs=1e-3)
    assert m.series.load_s == pytest.approx(last_row_s + 2.0)  # the last record came a --timeout before the end


def test_consumer_rows_too_short_to_size_the_rest_give_nothing():
    # Only the first row (its group join and one record): the rest's bytes would be a guess.
    text = read(CONSUMER)
    lines = text.splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    one_row = "".join(lines[: rows[0] + 1] + lines[rows[-1] + 1 :])
    assert detailed_consumer_measurement(one_row, CONSUMER, 60.0, CONSUMER_TIMEOUT_MS, CONSUMER_ASKED) is None


@pytest.mark.parametrize(
    "lead, asked",
    [("809244", CONSUMER_ASKED + 500), ("810244", CONSUMER_ASKED), ("9244", CONSUMER_ASKED - 800_000)],
    ids=["short of the ask", "over a poll above it", "below the last row"],
)
def test_consumer_positions_that_cannot_be_the_records_read_give_nothing(lead, asked):
    # Partition 0's position moved 809244 records; a gap in its offsets (transaction markers,
    # compaction) or a group that started elsewhere would show as these.
    text, found = re.subn(r"(?<=records-lead:\{client-id=perf-consumer-client, topic=paced, partition=0\}) *: 809244\.000",
                          f" : {lead}.000", read(CONSUMER))
    assert found == 1
    assert detailed_consumer_measurement(text, CONSUMER, CONSUMER_TAIL_S, CONSUMER_TIMEOUT_MS, asked) is None


@pytest.mark.parametrize(
    "pattern, new, message",
    [
        (r"records-consumed-total(?=:\{client-id=perf-consumer-client\})", "records-consumed", "no records-consumed-total"),
        (r"(?<=client-id=perf-consumer-client\}) *: 2000000\.000", " : 20x0000.000", "cannot read consumer metric"),
        (r"(?<=partition=1\}) *: 609435\.000", " : 609435.500", "cannot read consumer metric"),
    ],
)
def test_unreadable_consumer_metrics_raise(pattern, new, message):
    text, found = re.subn(pattern, new, read(CONSUMER))
    assert found == 1
    with pytest.raises(ToolOutputError, match=message):
        detailed_consumer_measurement(text, CONSUMER, CONSUMER_TAIL_S, CONSUMER_TIMEOUT_MS, CONSUMER_ASKED)


def test_summary_rows_are_not_detailed_output():
    with pytest.raises(ToolOutputError, match="not --show-detailed-stats rows"):
        detailed_consumer_measurement(read("kafka-4.1.1-consumer.txt"), "summary", 0.0, CONSUMER_TIMEOUT_MS, 200_000)


def test_consumer_bytes_are_the_rows_mib():
    rows = parse_consumer(read(CONSUMER))
    series = consumer().series
    assert sum(series.bytes[: len(rows)]) == round(rows[-1].mib * MIB)


def arrived(text: str) -> ToolOutput:
    """``text`` as the runner returns it, line ``i`` having arrived at ``i`` seconds."""
    lines = tuple(text.splitlines(keepends=True))
    return ToolOutput(lines, tuple(float(i) for i in range(len(lines))), "", 0.0)


def test_tail_runs_from_the_last_row_to_the_metrics_table():
    lines = read(CONSUMER).splitlines()
    last_row = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    table = next(i for i, line in enumerate(lines) if line.startswith("Metric Name"))
    assert table == last_row + 2  # after a blank line
    assert tail_seconds(arrived(read(CONSUMER))) == table - last_row


def test_tail_needs_a_row_and_the_end_of_reading():
    text = read(CONSUMER)
    header_and_table = "".join(line for line in text.splitlines(keepends=True) if not line[:1].isdigit())
    assert tail_seconds(arrived(header_and_table)) is None  # everything read within the first interval
    with pytest.raises(ToolOutputError, match="no metrics table"):
        tail_seconds(arrived(text[: text.index("\nMetric Name") + 1]))


def test_a_run_too_short_for_a_periodic_line_is_one_window():
    # Recorded 2026-11-23 (Kafka 4.3.1, 10,000 records of 687 B paced at 20,000/s): the tool printed only its total.
    final = ProducerSummary(records=10000, records_per_s=10438.413361, mib_per_s=6.84, avg_ms=193.44, max_ms=474.0,
                            p50_ms=167, p95_ms=277, p99_ms=283, p999_ms=284)
    series = producer_series([], final, 687, 1000)
    assert series is not None and series.records == (10000,) and series.starts_s == (0.0,)
    assert series.seconds[0] == pytest.approx(10000 / 10438.413361)


def test_a_tools_series_is_dated_by_when_its_first_result_line_arrived() -> None:
    # The capture's lines as the tool printed them, each arriving 1 s after the one before (monotonic clock),
    # which ran 1,000,000 s behind the wall clock: window 0 ends when the first periodic line arrives.
    lines = tuple(f"{line}\n" for line in read("kafka-4.3.1-producer.txt").splitlines())
    measured = producer("kafka-4.3.1-producer.txt", REPORTING_INTERVAL_MS)
    assert measured.series is not None and math.isnan(measured.series.started_at)
    first = next(i for i, line in enumerate(lines) if line[:1].isdigit())
    output = ToolOutput(lines, tuple(float(i) for i in range(len(lines))), "", float(len(lines)), epoch_offset=1e6)
    dated = output.dated(measured).series
    assert dated is not None
    assert dated.started_at == pytest.approx(1e6 + first - (dated.starts_s[0] + dated.seconds[0]))
    assert dated.records == measured.series.records  # nothing else changes


def test_end_to_end_latency_runs_as_windows_of_a_thousand_round_trips_from_its_progress_lines() -> None:
    # The capture's lines (round trips 0, 1000, ... 4000 printed, then the average), the line i arriving at i s.
    output = replace(arrived(read("kafka-4.1.1-e2e.txt")), epoch_offset=1e6)
    series = end_to_end_series(output, 5000, 100)
    assert series is not None
    assert series.records == (1, 1000, 1000, 1000, 1000, 999) and sum(series.records) == 5000  # every round trip once
    assert series.bytes == tuple(100 * r for r in series.records)
    assert series.seconds[0] == pytest.approx(0.105835273)  # round trip 0 alone: its own printed latency
    assert series.seconds[1:] == pytest.approx((1.0,) * 5) and series.width_s == pytest.approx(1.0)  # a line a second
    assert series.started_at == pytest.approx(1e6 - 0.105835273) and series.load_s == pytest.approx(5.105835273)
    steady = steady_state(series)  # round trip 0 (the JVM and connections warming) is left out
    assert steady is not None and steady.records_per_s == pytest.approx(4999 / 5.0)
    assert end_to_end_series(output, 4000, 100) is None  # a count the lines contradict: no series, not a wrong one

"""Every output format Kafka's stock perf tools printed, 0.10.0.0 to 4.3.1, is read.

The table lists each distinct result-line format with the first and last
release that printed it. The format strings are copied verbatim from the tools'
sources at those releases (apache/kafka: ``tools/src/main/java/org/apache/kafka/tools/
{ProducerPerformance,ConsumerPerformance,EndToEndLatency}.java`` and, before 3.5,
``core/src/main/scala/kafka/tools/{ConsumerPerformance,EndToEndLatency}.scala``;
releases after 3.8 located by their "Bump version" commits). Patch releases never
changed a result line. The numbers are real Kafka 4.1.1 measurements
(``tests/data/tool-output``), printed with each release's format string, as the
older releases cannot run here; Java's ``%n`` is a newline.
"""

from __future__ import annotations

import pytest

from kperf.drivers.stock_tools_output import (
    EndToEndSummary,
    ProducerSummary,
    detect_and_parse,
    parse_consumer,
    parse_end_to_end,
    parse_producer,
)

# Real 4.1.1 numbers: kafka-4.1.1-producer.txt (periodic, total), kafka-4.1.1-consumer.txt (summary),
# kafka-4.1.1-consumer-detailed.txt (second row), kafka-4.1.1-e2e.txt.
PERIODIC = (187072, 36745.6, 3.50, 1914.1, 2392.0)
TOTAL = (200000, 38543.1, 3.68, 1937.09, 2392.00, 2059, 2367, 2384, 2389)
SUMMARY = ("2026-11-22 02:32:39:067", "2026-11-22 02:32:43:870", 19.1127, 3.9793, 200411, 41726.2128)
SUMMARY_FETCH = (4096, 707, 27.0335, 283466.7610)
DETAILED = ("2026-11-22 02:32:48:824", 0, 2.2836, 11.3043, 23945, 118534.6535)
DETAILED_FETCH = (0, 202, 11.3043, 118534.6535)

PRODUCER_FORMATS = [
    # (id, first release, last release, verbatim format string, values)
    ("P1 periodic", "0.10.0.0", "2.1.1",
     "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f max latency.%n", PERIODIC),
    ("P2 periodic", "2.2.0", "4.3.1",
     "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.%n", PERIODIC),
    ("P3 total", "0.10.0.0", "3.9.2",
     "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
     "%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.%n", TOTAL),
    ("P4 total", "4.0.0", "4.1.2",
     "%d records sent, %.1f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
     "%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.%n", TOTAL),
    ("P5 total", "4.2.0", "4.3.1",
     "%d%s records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, "
     "%d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.%n", (TOTAL[0], "", *TOTAL[1:])),
]  # fmt: skip

CONSUMER_FORMATS = [
    # (id, first, last, header, row format, values, detailed?, with rebalance/fetch columns?)
    ("C1+C6 summary, old consumer", "0.10.0.0", "1.1.1",
     "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec",
     "%s, %s, %.4f, %.4f, %d, %.4f%n", SUMMARY, False, False),
    ("C2+C8 detailed, header without threadId", "0.10.0.0", "0.11.0.3",
     "time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec",
     "%s, %d, %.4f, %.4f, %d, %.4f%n", DETAILED, True, False),
    ("C3+C8 detailed, old consumer", "1.0.0", "1.1.1",
     "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec",
     "%s, %d, %.4f, %.4f, %d, %.4f%n", DETAILED, True, False),
    ("C4+C7 summary", "1.0.0", "4.3.1",
     "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
     "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
     "%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f%n", SUMMARY + SUMMARY_FETCH, False, True),
    ("C5+C9 detailed", "1.0.0", "4.3.1",
     "time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
     "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
     "%s, %d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f%n", DETAILED + DETAILED_FETCH, True, True),
]  # fmt: skip

# Lines that are not results, printed by some releases among the results: each must be skipped.
NOT_RESULTS = [
    ("P6 warm-up banner", "4.2.0", "4.3.1",
     "Warmup first 100000 records. Steady state results will print after the complete test summary."),
    ("P7 steady-state marker", "4.2.0", "4.3.1", "In steady state."),
    ("P8a payload file", "0.10.2.0", "4.3.1", "Reading payloads from: /tmp/payloads.txt"),
    ("P8b payload count", "0.10.2.0", "4.1.2", "Number of messages read: 2000"),
    ("P8c payload count", "4.2.0", "4.3.1", "Number of records read: 2000"),
    ("P8d deprecation", "4.2.0", "4.3.1", "Option --producer-props has been deprecated and will be removed in a "
     "future version. Use --command-property instead."),
    ("C10 consumer timeout", "2.0.0", "4.1.2", "WARNING: Exiting before consuming the expected number of messages: "
     "timeout (1000 ms) exceeded. You can use the --timeout option to increase the timeout."),
    ("C10' consumer timeout", "4.2.0", "4.3.1", "WARNING: Exiting before consuming the expected number of records: "
     "timeout (1000 ms) exceeded. You can use the --timeout option to increase the timeout."),
    ("C11 threads deprecated", "2.7.0", "3.9.2",
     "WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by the test"),
    ("C12 option deprecated", "4.2.0", "4.3.1", "Warning: --messages is deprecated. Use --num-records instead."),
    ("E4 topic created", "2.1.1", "4.3.1",
     'Topic "e2e" does not exist. Will create topic with 1 partition(s) and replication factor = 1'),
    ("E6 old class name", "3.5.0", "3.9.2", "WARNING: The 'kafka.tools' package is deprecated and will change to "
     "'org.apache.kafka.tools' in the next major release."),
    ("E7 positional arguments", "4.2.0", "4.3.1", "WARNING: Positional argument usage is deprecated and will be "
     "removed in Apache Kafka 5.0. Please use named arguments instead: --bootstrap-server, --topic, --num-records, "
     "--producer-acks, --record-size, --command-config"),
]  # fmt: skip

# --print-metrics (0.11.0.0 to 4.3.1): a blank line, a header, then "%-Ns : %.3f" or "%-Ns : %s" rows.
METRICS_TABLE = (
    "\nMetric Name                                                          Value\n"
    "app-info:version:{client-id=perf-producer-client}                  : 4.1.1\n"
    "producer-metrics:record-send-rate:{client-id=perf-producer-client} : 38543.100\n"
    "producer-metrics:record-queue-time-max:{client-id=perf-producer-client} : NaN\n"
)

# EndToEndLatency, 0.10.0.0 to 3.4.1 (Scala): "Avg latency: %.4f ms\n" through println, so a blank line
# follows it; 3.5.0 to 4.3.1 (Java): "Avg latency: %.4f ms%n". Progress lines are i + "\t" + a Java double.
E2E_SCALA = "0\t105.835273\n1000\t4.320019\nAvg latency: 2.2938 ms\n\nPercentiles: 50th = 1, 99th = 13, 99.9th = 28\n"
E2E_JAVA = E2E_SCALA.replace(" ms\n\n", " ms\n")


def java(format_string: str, values: tuple) -> str:
    """A Java format string printed with ``values`` (the specifiers used here mean the same in Python)."""
    return format_string.replace("%n", "\n") % values


@pytest.mark.parametrize("name,first,last,fmt,values", PRODUCER_FORMATS, ids=[f[0] for f in PRODUCER_FORMATS])
def test_every_producer_line_format(name: str, first: str, last: str, fmt: str, values: tuple) -> None:
    line = java(fmt, values)
    numbers = [v for v in values if v != ""]
    if "50th" in fmt:
        periodic, final = parse_producer(line)
        assert periodic == []
        assert final == ProducerSummary(*numbers)
    else:
        periodic, final = parse_producer(line + java(PRODUCER_FORMATS[2][3], TOTAL))
        assert periodic == [ProducerSummary(*numbers)]


def test_steady_state_total_follows_the_whole_run_and_is_the_final_one() -> None:
    fmt = PRODUCER_FORMATS[-1][3]
    steady = (100000, " steady state", *TOTAL[1:])
    text = (NOT_RESULTS[0][3] + "\n" + java(PRODUCER_FORMATS[1][3], PERIODIC) + NOT_RESULTS[1][3] + "\n"
            + java(fmt, (TOTAL[0], "", *TOTAL[1:])) + java(fmt, steady) + METRICS_TABLE)  # fmt: skip
    periodic, final = parse_producer(text)
    assert periodic == [ProducerSummary(*PERIODIC)]
    assert final == ProducerSummary(100000, *TOTAL[1:], steady_state=True)


@pytest.mark.parametrize(
    "name,first,last,header,fmt,values,detailed,fetch", CONSUMER_FORMATS, ids=[f[0] for f in CONSUMER_FORMATS]
)
@pytest.mark.parametrize("with_header", [True, False], ids=["header", "hide-header"])
def test_every_consumer_format(
    name: str, first: str, last: str, header: str, fmt: str, values: tuple, detailed: bool, fetch: bool,
    with_header: bool,
) -> None:  # fmt: skip
    text = (header + "\n" if with_header else "") + java(fmt, values)
    [row] = parse_consumer(text)
    assert detect_and_parse(text) == [row]
    when, second, mib, mibps, records, rps = values[:6]
    assert (row.end, row.mib, row.mib_per_s, row.records, row.records_per_s) == (
        when if detailed else second, mib, mibps, records, rps
    )
    assert row.start == (None if detailed else when)
    expected_fetch = values[6:] if fetch else (None,) * 4
    assert (row.rebalance_ms, row.fetch_ms, row.fetch_mib_per_s, row.fetch_records_per_s) == expected_fetch


def test_consumer_values_of_the_first_rebalance_before_2_8_are_read_as_printed() -> None:
    # KAFKA-10701: an epoch-sized join time and a negative fetch time, printed by 1.0 to 2.7.
    header, fmt = CONSUMER_FORMATS[3][3], CONSUMER_FORMATS[3][4]
    [row] = parse_consumer(header + "\n" + java(fmt, (*SUMMARY, 1718000003021, -1717999998019, -0.0, -0.0002)))
    assert (row.rebalance_ms, row.fetch_ms, row.fetch_records_per_s) == (1718000003021, -1717999998019, -0.0002)


@pytest.mark.parametrize("name,first,last,line", NOT_RESULTS, ids=[f[0] for f in NOT_RESULTS])
def test_every_line_that_is_not_a_result_is_skipped(name: str, first: str, last: str, line: str) -> None:
    producer = java(PRODUCER_FORMATS[2][3], TOTAL)
    consumer = CONSUMER_FORMATS[3][3] + "\n" + java(CONSUMER_FORMATS[3][4], SUMMARY + SUMMARY_FETCH)
    for text in (producer, consumer, E2E_JAVA):
        assert detect_and_parse(line + "\n" + text) == detect_and_parse(text)


def test_metrics_table_after_the_result_is_skipped() -> None:
    producer = java(PRODUCER_FORMATS[2][3], TOTAL)
    assert parse_producer(producer + METRICS_TABLE) == parse_producer(producer)


@pytest.mark.parametrize("text", [E2E_SCALA, E2E_JAVA], ids=["0.10.0.0-3.4.1 scala", "3.5.0-4.3.1 java"])
def test_every_end_to_end_format(text: str) -> None:
    assert parse_end_to_end(text) == EndToEndSummary(avg_ms=2.2938, p50_ms=1, p99_ms=13, p999_ms=28, samples=2)
    assert isinstance(detect_and_parse(text), EndToEndSummary)


def test_end_to_end_progress_may_print_a_java_double_in_exponent_form() -> None:
    # Double.toString switches to E notation from 1e7 ms.
    assert parse_end_to_end("0\t1.2345678E7\n" + E2E_JAVA).samples == 3

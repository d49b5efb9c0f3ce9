"""ShareConsumerPerformance's output is read as it really prints it (tests/data/tool-output), what it cannot do is
refused before load in one line, and its time bound covers the whole run."""

from __future__ import annotations

import pytest

from kperf.drivers import share_consumer_perf
from kperf.drivers.stock_tools_output import SHARE_CONSUMER_HEADER, ToolOutputError, parse_share_consumer
from kperf.errors import KperfError
from tests.helpers import DATA

CAPTURE = DATA / "tool-output" / "kafka-4.3.1-share-consumer.txt"
ROW = "2026-11-26 17:30:01:123, 2026-11-26 17:30:05:623, 19.0735, 4.2386, 44444.4444, 200000, 4500"
FIRST = "2026-11-26 17:30:01:100, 2026-11-26 17:30:02:623, 0.0001, 0.0001, 0.6920, 1, 1523 for share consumer 1"


def test_a_real_run_is_read_with_its_deliveries_its_clock_and_its_first_delivery() -> None:
    summary = parse_share_consumer(CAPTURE.read_text(), str(CAPTURE))
    assert summary.records >= 200_000 and summary.elapsed_ms > 0
    # Its rates are its counts over its own clock (printed with four decimals).
    assert summary.records_per_s == pytest.approx(summary.records / (summary.elapsed_ms / 1000), rel=1e-3)
    assert summary.mib_per_s == pytest.approx(summary.mib / (summary.elapsed_ms / 1000), rel=1e-3)
    # The first delivery: the earliest of the members' first rows, one of two printed run together on a line.
    assert summary.first_delivery == "2026-11-26 19:53:02:422"
    assert summary.reading_ms == 1779 and 0 < summary.reading_ms < summary.elapsed_ms


def test_the_summary_row_is_read_field_by_field_in_any_locale() -> None:
    for text in (ROW, ROW.replace(".", ",")):
        summary = parse_share_consumer(f"{FIRST}\n{SHARE_CONSUMER_HEADER}\n{text}\n")
        assert (summary.start, summary.end, summary.records, summary.elapsed_ms) == (
            "2026-11-26 17:30:01:123", "2026-11-26 17:30:05:623", 200_000, 4500)
        assert (summary.mib, summary.mib_per_s, summary.records_per_s) == (19.0735, 4.2386, 44444.4444)
        assert summary.first_delivery == "2026-11-26 17:30:02:623" and summary.reading_ms == 3000


def test_members_rows_run_together_are_each_read() -> None:
    second = FIRST.replace("02:623", "02:400").replace("consumer 1", "consumer 12")
    summary = parse_share_consumer(f"{FIRST}{second}\n\n{SHARE_CONSUMER_HEADER}\n{ROW}\n")
    assert summary.first_delivery == "2026-11-26 17:30:02:400"  # member 12's, read past member 1's


@pytest.mark.parametrize("text", [
    f"{SHARE_CONSUMER_HEADER}\n",  # no row: the tool died before its summary
    f"{FIRST}\n{SHARE_CONSUMER_HEADER}\n{ROW}\n{ROW}\n",  # two summaries: not one run's output
    f"{SHARE_CONSUMER_HEADER}\n{ROW}\n",  # deliveries and no progress row: no first delivery to time from
    f"{FIRST}\n{SHARE_CONSUMER_HEADER}\n2026-11-26 17:30:01:123, 2026-11-26 17:30:05:623, 19.0735, 4.2386, 200000\n",
    # the earliest row counts more than the first record: it came an interval after the first delivery
    f"{FIRST.replace(', 1, 1523', ', 4769, 1523')}\n{SHARE_CONSUMER_HEADER}\n{ROW}\n",
])
def test_output_that_is_not_one_summary_is_an_error_naming_the_line(text: str) -> None:
    with pytest.raises(ToolOutputError, match="share consumer row|no ShareConsumerPerformance (summary|progress)|not the first one"):
        parse_share_consumer(text, "out.txt")


@pytest.mark.parametrize("records, mode, release, cause", [
    (1000, "explicit", "4.3.1", "--ack explicit is not supported with --client java"),
    (None, "implicit", "4.3.1", "--records is required"),
    (1000, "implicit", "4.1.1", "need Kafka 4.2.0 or later"),
])
def test_what_the_tool_cannot_do_is_refused_in_one_line(records: int | None, mode: str, release: str,
                                                        cause: str) -> None:
    with pytest.raises(KperfError, match=cause) as refused:
        share_consumer_perf.check(records, mode, release)
    assert "\n" not in str(refused.value)


def test_a_run_the_tool_can_do_passes() -> None:
    share_consumer_perf.check(1000, "implicit", "4.3.1")


def test_its_time_out_covers_the_join_and_twice_the_slowest_reading() -> None:
    # The tool interrupts its members once the run passes its --timeout: it must bound the whole run.
    assert share_consumer_perf.timeout_s(100_000, 30.0) == 30.0 + 2 * 100_000 / 2000

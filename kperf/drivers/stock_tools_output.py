"""Read the text Kafka's stock perf tools print (every release, 0.10 to 4.3) as numbers.

The tools are ProducerPerformance (``kafka-producer-perf-test.sh``),
ConsumerPerformance (``kafka-consumer-perf-test.sh``), EndToEndLatency
(``kafka-e2e-latency.sh``, before 3.5 ``kafka-run-class.sh
kafka.tools.EndToEndLatency``) and, for share groups, ShareConsumerPerformance
(``kafka-share-consumer-perf-test.sh``). Their output is the only record a published
study gives, so kperf must read it exactly: ordinary noise (log lines, blank
lines, JVM warnings, the tools' own warnings and banners, the
``--print-metrics`` table) is skipped, but a line that is meant to be tool
output and cannot be read raises :class:`ToolOutputError` instead of becoming
a zero. ``tests/unit/test_stock_tools_formats.py`` lists every format each release printed,
read from the tools' sources at each release.

"MB" in these tools is ``bytes / (1024 * 1024)``, so fields here say ``mib``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from kperf.errors import KperfError


class ToolOutputError(KperfError):
    """Tool output that cannot be read: the message names the file and line."""


@dataclass(frozen=True)
class ProducerSummary:
    """One ProducerPerformance line; percentiles are None on periodic lines,
    which the tool prints without them. ``steady_state``: the total of the
    records after ``--warmup-records`` (Kafka 4.2 on), not of the whole run."""

    records: int
    records_per_s: float
    mib_per_s: float
    avg_ms: float
    max_ms: float
    p50_ms: int | None = None
    p95_ms: int | None = None
    p99_ms: int | None = None
    p999_ms: int | None = None
    steady_state: bool = False


@dataclass(frozen=True)
class ConsumerSummary:
    """One ConsumerPerformance row.

    A summary row covers ``start``..``end``. A ``--show-detailed-stats`` row
    covers one reporting interval ending at ``end``: ``mib`` and ``records``
    are then running totals, the rates are the interval's, and ``start`` is
    the previous row's time (None on the first row, whose start is not
    printed). The four rebalance/fetch fields are None for the Kafka 1.x
    old-consumer rows, which did not print them.
    """

    start: str | None
    end: str
    mib: float
    mib_per_s: float
    records: int
    records_per_s: float
    rebalance_ms: int | None = None
    fetch_ms: int | None = None
    fetch_mib_per_s: float | None = None
    fetch_records_per_s: float | None = None


@dataclass(frozen=True)
class EndToEndSummary:
    """EndToEndLatency's result. Percentiles are whole milliseconds as the
    tool prints them; ``samples`` counts the progress lines it printed (one
    per 1000 messages), None when there were none."""

    avg_ms: float
    p50_ms: int
    p99_ms: int
    p999_ms: int
    samples: int | None


# Java formats doubles with the default Locale (decimal comma in e.g. de_DE),
# prints Infinity/NaN for rates over a zero interval, and Double.toString may
# use an exponent.
_NUM = r"-?(?:\d+(?:[.,]\d+)?(?:E-?\d+)?|Infinity|NaN)"
_INT = r"\d+"
# Before 2.8 ConsumerPerformance's first rebalance time could be epoch-sized and
# its fetch time negative (KAFKA-10701): they are the tool's numbers, so read.
_SIGNED_INT = r"-?\d+"


def _rates(max_unit: str) -> str:
    return (
        rf"(?P<records>{_INT})(?P<steady> steady state)? records sent, (?P<rps>{_NUM}) records/sec "
        rf"\((?P<mibps>{_NUM}) MB/sec\), (?P<avg>{_NUM}) ms avg latency, (?P<max>{_NUM}){max_unit} max latency"
    )


# The periodic line's max latency had no unit until 2.2 ("187.0 max latency.").
_PRODUCER_PERIODIC = re.compile(rf"{_rates('(?: ms)?')}\.")
_PRODUCER_TOTAL = re.compile(
    rf"{_rates(' ms')}, (?P<p50>{_INT}) ms 50th, (?P<p95>{_INT}) ms 95th, "
    rf"(?P<p99>{_INT}) ms 99th, (?P<p999>{_INT}) ms 99\.9th\."
)
_PRODUCER_MARK = " records sent"

_CONSUMER_BASE = "data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"
_CONSUMER_EXTRA = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
_CONSUMER_DETAILED = "time, threadId"
_CONSUMER_HEADERS = {  # header -> (--show-detailed-stats rows?, rebalance/fetch columns?)
    f"{first}, {_CONSUMER_BASE}{extra}": (first == _CONSUMER_DETAILED, bool(extra))
    for first in ("start.time, end.time", _CONSUMER_DETAILED)
    for extra in ("", _CONSUMER_EXTRA)
}
# 0.10 and 0.11 printed the detailed header without the threadId their rows have.
_CONSUMER_HEADERS[f"time, {_CONSUMER_BASE}"] = (True, False)
_CONSUMER_HEADER_MARKS = ("start.time", "time, ")
# The values after the two leading fields (two times, or a time and a thread
# id); the last four are absent in Kafka 1.x old-consumer rows.
_CONSUMER_VALUES = re.compile(
    rf"(?P<mib>{_NUM}), (?P<mibps>{_NUM}), (?P<records>{_INT}), (?P<rps>{_NUM})"
    rf"(?:, (?P<rebalance>{_SIGNED_INT}), (?P<fetch>{_SIGNED_INT}), (?P<fetch_mibps>{_NUM}), (?P<fetch_rps>{_NUM}))?"
)

# ConsumerPerformance's --print-metrics table (ToolsUtils.printMetrics: "%-<width>s : %.3f", the metric's
# group:name:{tags} then its value): kperf reads two metrics of the tool's consumer from it.
_FETCH_METRIC = re.compile(rf"consumer-fetch-manager-metrics:(?P<name>[\w-]+):\{{(?P<tags>[^}}]*)\}} *: (?P<value>{_NUM})")
METRICS_HEADER = "Metric Name"  # the first line of the --print-metrics table

E2E_PROGRESS = re.compile(rf"{_INT}\t{_NUM}")
E2E_AVG = re.compile(rf"Avg latency: (?P<avg>{_NUM}) ms")
_E2E_PERCENTILES = re.compile(
    rf"Percentiles: 50th = (?P<p50>{_INT}), 99th = (?P<p99>{_INT}), 99\.9th = (?P<p999>{_INT})"
)
_E2E_MARKS = ("Avg latency", "Percentiles")


def _number(text: str) -> float:
    """A Java-formatted double, whatever the Locale's decimal separator."""
    return float(text.replace(",", "."))


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Numbered, stripped, non-blank lines: blank ones are never tool output."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line:
            yield lineno, line


def claims_result(line: str) -> bool:
    """Every result line of the three tools starts with a digit (a count or a
    time), and nothing else they or the JVM print does: log4j lines start with
    '[', headers, warnings and the latency summary with a letter."""
    return line[:1].isdigit()


def _cannot_read(source: str, lineno: int, what: str, line: str) -> ToolOutputError:
    return ToolOutputError(f"{source}:{lineno}: cannot read {what}: {line!r}")


def _no_summary(source: str, what: str) -> ToolOutputError:
    return ToolOutputError(f"{source}: no {what} found in the output")


def parse_producer(
    text: str, source: str = "<text>"
) -> tuple[list[ProducerSummary], ProducerSummary]:
    """ProducerPerformance output as (periodic lines, final line).

    With ``--warmup-records`` (Kafka releases after 4.1) the tool prints a second, "steady
    state" total after the whole-run total; that one is returned as final,
    since excluding the warm-up is why the user asked for it.
    """
    periodic: list[ProducerSummary] = []
    final: ProducerSummary | None = None
    steady = False
    for lineno, line in _lines(text):
        if not claims_result(line):
            continue
        if match := _PRODUCER_TOTAL.fullmatch(line):
            if not steady:
                final = _producer(match)
                steady = final.steady_state
        elif match := _PRODUCER_PERIODIC.fullmatch(line):
            periodic.append(_producer(match))
        else:
            raise _cannot_read(source, lineno, "producer line", line)
    if final is None:
        raise _no_summary(source, "ProducerPerformance final line")
    return periodic, final


def _producer(match: re.Match[str]) -> ProducerSummary:
    percentiles = {k: int(v) for k in ("p50", "p95", "p99", "p999") if (v := match.groupdict().get(k))}
    return ProducerSummary(
        records=int(match["records"]),
        records_per_s=_number(match["rps"]),
        mib_per_s=_number(match["mibps"]),
        avg_ms=_number(match["avg"]),
        max_ms=_number(match["max"]),
        **{f"{k}_ms": v for k, v in percentiles.items()},
        steady_state=match["steady"] is not None,
    )


def parse_consumer(text: str, source: str = "<text>") -> list[ConsumerSummary]:
    """ConsumerPerformance rows, with or without header or detailed stats."""
    rows: list[ConsumerSummary] = []
    shape: tuple[bool, bool] | None = None  # from the header; None without one
    for lineno, line in _lines(text):
        if line.startswith(_CONSUMER_HEADER_MARKS):
            if line not in _CONSUMER_HEADERS:
                raise _cannot_read(source, lineno, "consumer header", line)
            shape = _CONSUMER_HEADERS[line]
        elif claims_result(line):
            row = _consumer_row(line, shape, rows[-1].end if rows else None)
            if row is None:
                raise _cannot_read(source, lineno, "consumer row", line)
            rows.append(row)
    if not rows:
        raise _no_summary(source, "ConsumerPerformance row")
    return rows


def _consumer_row(
    line: str, shape: tuple[bool, bool] | None, previous_end: str | None
) -> ConsumerSummary | None:
    """One row, or None when it does not have the shape the header (or, with
    --hide-header, the tool) prints."""
    parts = line.split(", ", 2)
    match = _CONSUMER_VALUES.fullmatch(parts[-1]) if len(parts) == 3 else None
    if match is None:
        return None
    first, second, _ = parts
    detailed = second.isdigit()  # a thread id where a time would be
    has_fetch = match["rebalance"] is not None
    if shape is not None and shape != (detailed, has_fetch):
        return None
    return ConsumerSummary(
        start=previous_end if detailed else first,
        end=first if detailed else second,
        mib=_number(match["mib"]),
        mib_per_s=_number(match["mibps"]),
        records=int(match["records"]),
        records_per_s=_number(match["rps"]),
        rebalance_ms=int(match["rebalance"]) if has_fetch else None,
        fetch_ms=int(match["fetch"]) if has_fetch else None,
        fetch_mib_per_s=_number(match["fetch_mibps"]) if has_fetch else None,
        fetch_records_per_s=_number(match["fetch_rps"]) if has_fetch else None,
    )


@dataclass(frozen=True)
class ConsumerCounts:
    """What ConsumerPerformance's consumer says it read (``--print-metrics``).

    ``consumed``: ``records-consumed-total``, which the client counts only once
    a fetched batch has been returned to the end, so the last, partly returned
    one is missing from it while the consumer is open (from 4.2 the tool prints
    the table before closing it). ``leads``: each partition's ``records-lead``,
    its position after the last poll less its log start offset.
    """

    consumed: int
    leads: tuple[int, ...]


def parse_consumer_counts(text: str, source: str = "<text>") -> ConsumerCounts:
    """The record counts of ConsumerPerformance's ``--print-metrics`` table."""
    consumed: int | None = None
    leads: list[int] = []
    for lineno, line in _lines(text):
        if not line.startswith(("consumer-fetch-manager-metrics:records-consumed-total:",
                                "consumer-fetch-manager-metrics:records-lead:")):
            continue
        match = _FETCH_METRIC.fullmatch(line)
        value = _number(match["value"]) if match else math.nan
        if match is None or not value.is_integer() or value < 0:
            raise _cannot_read(source, lineno, "consumer metric", line)
        tags = match["tags"]
        if match["name"] == "records-consumed-total" and "topic=" not in tags:
            consumed = int(value)
        elif match["name"] == "records-lead" and "partition=" in tags:
            leads.append(int(value))
    if consumed is None or not leads:
        raise _no_summary(source, "records-consumed-total and records-lead metrics (--print-metrics)")
    return ConsumerCounts(consumed, tuple(leads))


def consumed_total(text: str) -> int:
    """``records-consumed-total`` of ConsumerPerformance's ``--print-metrics`` table, 0 when it has none (a consumer
    that never got a partition): what a detailed run that ended within its first reporting interval read, as it
    printed no row (short of the last, partly returned batch: see ConsumerCounts)."""
    for line in text.splitlines():
        match = _FETCH_METRIC.fullmatch(line.strip())
        if match and match["name"] == "records-consumed-total" and "topic=" not in match["tags"]:
            return int(_number(match["value"]))
    return 0


@dataclass(frozen=True)
class ShareConsumerSummary:
    """ShareConsumerPerformance's summary row (4.2 on), and its members' first delivery. Its clock runs from before
    its members subscribe to the end of reading: the join is in ``elapsed_ms`` and in the rates it prints;
    ``reading_ms`` runs from the first delivery instead. ``records`` counts deliveries: a record the group was
    given twice (its lock ran out) counts twice."""

    start: str
    end: str
    mib: float
    mib_per_s: float
    records_per_s: float
    records: int
    elapsed_ms: int  # its fetch.time.ms: its whole clock
    first_delivery: str  # the end of the earliest progress row: a member's first poll that returned records

    @property
    def reading_ms(self) -> float:
        """From the group's first delivery to the end of reading."""
        return (_tool_time(self.end) - _tool_time(self.first_delivery)).total_seconds() * 1000


SHARE_CONSUMER_HEADER = "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms"
# printStats with index -1: "%s, %s, %.4f, %.4f, %.4f, %d, %d" (its dates "yyyy-MM-dd HH:mm:ss:SSS" by default).
_SHARE_CONSUMER_ROW = re.compile(
    rf"(?P<start>[^,]+), (?P<end>[^,]+), (?P<mib>{_NUM}), (?P<mibps>{_NUM}), (?P<rps>{_NUM}), (?P<records>{_INT}), "
    rf"(?P<fetch>{_INT})")
# --show-detailed-stats: each member prints "<summary fields> for share consumer %d" with printf, then its newline
# with println: two calls, so two members' rows may run together ("... share consumer 22026-11-26 ...") and leave
# a blank line. A row is found wherever it is; its index ends where a date starts. A member's first row comes with
# its first record when its join took longer than the interval (which runs from the member's start): that row
# counts 1 record, which parse_share_consumer checks.
_TOOL_DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
_SHARE_PROGRESS = re.compile(
    rf"(?P<start>{_TOOL_DATE}), (?P<end>{_TOOL_DATE}), {_NUM}, {_NUM}, {_NUM}, (?P<records>{_INT}), {_INT} "
    r"for share consumer (?P<member>\d+?)(?=\d{4}-|\s|$)")
_TOOL_TIME = "%Y-%m-%d %H:%M:%S:%f"  # the tools' default --date-format, yyyy-MM-dd HH:mm:ss:SSS


def _tool_time(text: str) -> datetime:
    return datetime.strptime(text, _TOOL_TIME)


def parse_share_consumer(text: str, source: str = "<text>") -> ShareConsumerSummary:
    """ShareConsumerPerformance's output with ``--show-detailed-stats``: its members' progress rows, then its header
    and summary row. A run that delivered records has progress rows: their earliest end is the first delivery."""
    progress = list(_SHARE_PROGRESS.finditer(text))
    summary: re.Match[str] | None = None
    for lineno, line in _lines(_SHARE_PROGRESS.sub("", text)):
        if line == SHARE_CONSUMER_HEADER or not claims_result(line):
            continue
        match = _SHARE_CONSUMER_ROW.fullmatch(line)
        if match is None or summary is not None:
            raise _cannot_read(source, lineno, "share consumer row", line)
        summary = match
    if summary is None:
        raise _no_summary(source, "ShareConsumerPerformance summary row")
    records = int(summary["records"])
    if records and not progress:
        raise _no_summary(source, "ShareConsumerPerformance progress row (--show-detailed-stats), for the first delivery")
    earliest = min(progress, key=lambda row: _tool_time(row["end"]), default=None)
    if earliest is not None and earliest["records"] != "1":  # a member read before its first interval ended
        raise ToolOutputError(f"{source}: the earliest progress row counts {earliest['records']} records, not the "
                              "first one: the first delivery is not known to the reporting interval")
    first = summary["end"] if earliest is None else earliest["end"]
    return ShareConsumerSummary(
        start=summary["start"], end=summary["end"], mib=_number(summary["mib"]), mib_per_s=_number(summary["mibps"]),
        records_per_s=_number(summary["rps"]), records=records, elapsed_ms=int(summary["fetch"]), first_delivery=first)


def parse_end_to_end(text: str, source: str = "<text>") -> EndToEndSummary:
    """EndToEndLatency output: progress lines, then average and percentiles."""
    samples = 0
    avg: float | None = None
    percentiles: re.Match[str] | None = None
    for lineno, line in _lines(text):
        if match := E2E_AVG.fullmatch(line):
            avg = _number(match["avg"])
        elif match := _E2E_PERCENTILES.fullmatch(line):
            percentiles = match
        elif claims_result(line) and E2E_PROGRESS.fullmatch(line):
            samples += 1
        elif claims_result(line) or line.startswith(_E2E_MARKS):
            raise _cannot_read(source, lineno, "end-to-end latency line", line)
    if avg is None or percentiles is None:
        raise _no_summary(source, "EndToEndLatency average and percentiles")
    return EndToEndSummary(
        avg_ms=avg,
        p50_ms=int(percentiles["p50"]),
        p99_ms=int(percentiles["p99"]),
        p999_ms=int(percentiles["p999"]),
        samples=samples or None,
    )


def detect_and_parse(
    text: str, source: str = "<text>"
) -> tuple[list[ProducerSummary], ProducerSummary] | list[ConsumerSummary] | EndToEndSummary:
    """Parse output whose tool is not known, e.g. a file a user hands over;
    the result has the type of the matching ``parse_*`` function."""
    lines = [line for _, line in _lines(text)]
    if any(_PRODUCER_MARK in line for line in lines):
        return parse_producer(text, source)
    if any(line.startswith(_E2E_MARKS) for line in lines):
        return parse_end_to_end(text, source)
    if any(line.startswith(_CONSUMER_HEADER_MARKS) or claims_result(line) for line in lines):
        return parse_consumer(text, source)
    raise ToolOutputError(f"{source}: not the output of a Kafka perf tool")

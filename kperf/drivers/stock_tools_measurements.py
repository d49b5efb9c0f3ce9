"""What Kafka's stock perf tools printed, as Measurements with time series: pure, no tool is run here.

:mod:`kperf.drivers.stock_tools_output` reads the tools' text as numbers; this module turns those numbers (and, for
a run kperf started, when each line arrived: :class:`ToolOutput`) into the same :class:`~kperf.results.Measurement`
shape as kperf's own drivers, with a time series from the producer's and consumer's periodic lines
(:func:`producer_series`, :func:`detailed_consumer_measurement`) so their records get a steady state too.
:func:`import_file` does the same for output saved by someone else. Numbers are the tools' own: where a tool does
not print a figure, it is derived from what it prints and the comment says how.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from kperf.drivers.stock_tools_output import (
    E2E_AVG,
    E2E_PROGRESS,
    METRICS_HEADER,
    ConsumerCounts,
    ConsumerSummary,
    EndToEndSummary,
    ProducerSummary,
    ToolOutputError,
    claims_result,
    detect_and_parse,
    parse_consumer,
    parse_consumer_counts,
)
from kperf.errors import KperfError, MeasurementFailed
from kperf.load import WINDOW_S
from kperf.results import MIB, Measurement
from kperf.series import Series
from kperf.validity import MIN_SPAN_S, min_span_s

CLIENT = "java"
# ... "number of messages" until 4.1, "number of records" from 4.2
CONSUMER_TIMEOUT_WARNING = "WARNING: Exiting before consuming the expected number of "
# Time series: both tools print one line per reporting interval. ProducerPerformance's was fixed at 5000 ms
# (Stats, 0.10.0.0 to 4.1.1) and is --reporting-interval from 4.2.0 (kperf.drivers.stock_tools.SERIES_FROM).
REPORTING_INTERVAL_MS = round(WINDOW_S * 1000)  # one row a second by default; a point's window_s sets it
FIXED_PRODUCER_INTERVAL_MS = 5000
JAVA_PRINTED_RATE_STEP = 0.1  # periodic lines print records/sec with one decimal ("%.1f")
PRINTED_MB_STEP = 1e-4  # ConsumerPerformance prints MB with four decimals ("%.4f")
BYTES_PRECISION = 1e-4  # the least precision of a consumer run's bytes kperf reports (relative)
MAX_POLL_RECORDS = 500  # the Java consumer's default max.poll.records: the most one poll returns
JOIN_COUNTED_TWICE = "tool counted its join twice"  # a MeasurementFailed cause

# What Throwable.printStackTrace() starts a trace with: the exception's class
# name, then ": message" (Kafka's ApiExceptions print no "\tat" frames at all).
_EXCEPTION_LINE = re.compile(r"(?:[A-Za-z_$][\w$]*\.)*(?P<name>[A-Za-z_$][\w$]*(?:Exception|Error))(?::.*)?")


@dataclass(frozen=True)
class ToolOutput:
    """What a tool printed: its stdout lines, when each arrived (time.monotonic()), its stderr."""

    lines: tuple[str, ...]
    arrivals: tuple[float, ...]
    stderr: str
    wall_s: float
    epoch_offset: float = 0.0  # time.time() - time.monotonic() while it ran: an arrival on the wall clock

    @property
    def stdout(self) -> str:
        return "".join(self.lines)

    def dated(self, measured: Measurement) -> Measurement:
        """``measured`` with its series placed on the wall clock, so resource samples fall in its windows.

        Both tools print their first result line (a digit first) the moment its
        window ends, the first periodic line or detailed row (or, with none,
        the producer's final line, at the end of its only window): that line's
        arrival, less the window's end, is when window 0 began.
        """
        series = measured.series
        first = next((i for i, line in enumerate(self.lines) if claims_result(line.strip())), None)
        if series is None or first is None or not series.seconds:
            return measured
        window_end = series.starts_s[0] + series.seconds[0]
        return replace(measured, series=replace(series, started_at=self.arrivals[first] + self.epoch_offset - window_end))


def exceptions(stderr: str) -> dict[str, int]:
    """Exceptions printed to stderr, by class name (e.g. TimeoutException): ProducerPerformance counts only
    acknowledged records and prints each failed send's exception (its callback calls printStackTrace())."""
    return dict(Counter(m["name"] for ln in stderr.splitlines() if (m := _EXCEPTION_LINE.fullmatch(ln.strip()))))


def tail_seconds(output: ToolOutput) -> float | None:
    """Seconds from the last detailed row to the end of reading, by kperf's clock; None without a row.

    The tool prints a row the moment it takes the row's time, and, when its
    reading loop ends, the timeout warning (if it gave up) or its metrics table
    (from 4.2, before closing the consumer): the arrival of those two lines on
    stdout dates the loop's end to a few milliseconds, as the tool's own
    summary would (its end.time is taken there).
    """
    lines = [line.strip() for line in output.lines]
    rows = [i for i, line in enumerate(lines) if line[:1].isdigit()]
    if not rows:
        return None
    end = next((i for i in range(rows[-1] + 1, len(lines))
                if lines[i].startswith((CONSUMER_TIMEOUT_WARNING, METRICS_HEADER))), None)
    if end is None:
        raise ToolOutputError("ConsumerPerformance output: no metrics table after its last row")
    return output.arrivals[end] - output.arrivals[rows[-1]]


def end_to_end_series(output: ToolOutput, round_trips: int, record_size: int) -> Series | None:
    """EndToEndLatency's round trips as a time series, on the wall clock: the tool prints a line after every
    1000th round trip (its number and that one's latency) and its average once the last is done, so each of
    those lines' arrival ends a window of the round trips since the line before. Window 0 is round trip 0 alone,
    its printed latency long (the JVM's start and connecting come before it, in no window). None without a
    progress line and the average."""
    lines = [line.strip() for line in output.lines]
    marks = [(int(line.split("\t", 1)[0]), arrival, line) for line, arrival in zip(lines, output.arrivals)
             if E2E_PROGRESS.fullmatch(line)]
    end = next((arrival for line, arrival in zip(lines, output.arrivals) if E2E_AVG.fullmatch(line)), None)
    if not marks or marks[0][0] != 0 or end is None or marks[-1][0] >= round_trips:
        return None
    first_s = float(marks[0][2].split("\t", 1)[1]) / 1000  # round trip 0's latency, ms
    began = marks[0][1] - first_s
    done = np.array([-1] + [index for index, _, _ in marks] + [round_trips - 1])
    times = np.array([began] + [arrival for _, arrival, _ in marks] + [end]) - began
    counts, seconds, starts = np.diff(done), np.diff(times), times[:-1]
    return Series(float(np.median(seconds[1:])), tuple(starts.tolist()), tuple(seconds.tolist()), tuple(counts.tolist()),
                  tuple((counts * record_size).tolist()), float(times[-1]), started_at=began + output.epoch_offset)


def import_file(path: Path) -> list[Measurement]:
    """Measurements from saved output of any of the three tools, e.g. from a published study.

    Producer output gives one Measurement (its final line), with the time
    series of its periodic lines (:func:`producer_series`; the reporting
    interval is not printed, so the series' width is the median window's).
    Consumer output gives one per row: a ``--show-detailed-stats`` row becomes
    the records of its interval alone, marked ``measures["interval"] = 1``, and
    no series: the records after the last row are not in the output. EndToEndLatency
    output gives one, whose seconds are unknown (0.0): the tool prints none.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise KperfError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise KperfError(f"{path}: cannot read: {exc}") from None
    parsed = detect_and_parse(text, str(path))
    if isinstance(parsed, EndToEndSummary):
        # Neither the record count nor the record size is printed: both stay 0.
        return [end_to_end_measurement(parsed, 0, 0, 0.0)]
    if isinstance(parsed, list):
        return consumer_output(text, str(path))
    return [producer_measurement(*parsed, None, None)]


def ack_latency(final: ProducerSummary) -> dict[str, float]:
    """ProducerPerformance's send-to-acknowledgement statistics (ms) from its final line;
    empty when nothing was acknowledged (the tool then prints NaN and zeros)."""
    if final.records == 0:
        return {}
    stats = {
        "avg": final.avg_ms,
        "p50": final.p50_ms,
        "p95": final.p95_ms,
        "p99": final.p99_ms,
        "p999": final.p999_ms,
        "max": final.max_ms,
    }
    return {k: float(v) for k, v in stats.items() if v is not None}


def producer_measurement(
    periodic: Sequence[ProducerSummary], final: ProducerSummary, record_size: int | None, interval_ms: float | None
) -> Measurement:
    """One Measurement from ProducerPerformance's final line, with the series of its periodic lines."""
    latency = ack_latency(final)
    seconds = _producer_seconds(final)
    return Measurement(
        role="producer",
        client=CLIENT,
        records=final.records,
        bytes=_producer_bytes(final, seconds, record_size),
        seconds=seconds,
        latency_ms={"ack": latency} if latency else {},
        series=producer_series(periodic, final, record_size, interval_ms),
    )


def _producer_seconds(line: ProducerSummary) -> float:
    """A line's elapsed seconds: its rate is records over the milliseconds it covers (Stats.printWindow and
    printTotal: ``1000.0 * count / elapsed``). The total spans the tool's start to its last acknowledgement
    (it prints after closing the producer)."""
    return line.records / line.records_per_s if line.records_per_s > 0 else 0.0


def _producer_bytes(line: ProducerSummary, seconds: float, record_size: int | None) -> int:
    """Without the record size (payload files, imported text) bytes are derived
    from the printed MB/sec, which has two decimals."""
    return line.records * record_size if record_size is not None else round(line.mib_per_s * MIB * seconds)


def producer_series(
    periodic: Sequence[ProducerSummary], final: ProducerSummary, record_size: int | None, interval_ms: float | None
) -> Series | None:
    """ProducerPerformance's run as a time series: a window per periodic line (:func:`_window_seconds`), then the
    records after the last.

    That last window holds the records acknowledged after the last periodic
    line, until the producer closed: the rest of the run's elapsed time (the
    final line's, to 0.1 records/s or better), which is where the load ends. A
    window's latency is the printed max only: the tool prints no percentiles per
    window. None when the windows cannot be laid out: output of
    ``--warmup-records`` runs, whose lines come from two overlapping Stats.
    """
    counts = np.array([line.records for line in periodic], dtype=np.int64)
    total_s = _producer_seconds(final)
    if final.steady_state or counts.sum() > final.records or total_s <= 0:
        return None
    seconds = _window_seconds(periodic, counts, interval_ms)
    ends = np.minimum(np.cumsum(seconds), total_s)
    starts = np.concatenate(([0.0], ends))[: len(ends)]  # no periodic line: no window before the tail
    sizes = [_producer_bytes(line, s, record_size) for line, s in zip(periodic, seconds.tolist())]
    maxima = [line.max_ms for line in periodic]
    tail = final.records - int(counts.sum())
    last = float(ends[-1]) if len(ends) else 0.0
    if tail > 0:
        starts, ends = np.append(starts, last), np.append(ends, total_s)
        sizes.append(max(_producer_bytes(final, total_s, record_size) - sum(sizes), 0))
        maxima.append(math.nan)
    windows = len(starts)
    width_s = interval_ms / 1000 if interval_ms else float(np.median(seconds)) if len(seconds) else total_s
    return Series(
        width_s, tuple(starts.tolist()), tuple((ends - starts).tolist()), (*counts.tolist(), *([tail] if tail > 0 else [])),
        tuple(sizes), total_s if tail > 0 else last, 0.0, "ack", (math.nan,) * windows, (math.nan,) * windows,
        tuple(maxima),
    )


def _window_seconds(periodic: Sequence[ProducerSummary], counts: np.ndarray, interval_ms: float | None) -> np.ndarray:
    """The length of each periodic line's window.

    Each periodic line covers one window of the tool's Stats: the records
    acknowledged from the previous line (or the tool's start, just before its
    first send) until the acknowledgement that passed ``interval_ms``, which
    is printed at once with its elapsed milliseconds as ``count / rate``.
    Windows are laid back to back from the tool's start, so their boundaries
    come from the printed counts and rates and are approximate to the printed
    precision: a rate has one decimal, which makes a window of a few records
    (the first, while metadata is fetched) seconds uncertain. A window whose
    length that rounding leaves uncertain by more than a millisecond is laid
    at its shortest: the lower bound of its rate's rounding, the interval when
    known, and for the first window its max latency (all its records were
    sent after it began and acknowledged before it was printed).
    """
    rates = np.array([line.records_per_s for line in periodic], dtype=float)
    half_step = JAVA_PRINTED_RATE_STEP / 2
    floor_s = (interval_ms or 0.0) / 1000
    printed = np.divide(counts, rates, out=np.zeros(len(counts)), where=rates > 0)  # Infinity: no time passed
    lowest = np.maximum(counts / (rates + half_step), floor_s)
    if len(periodic):
        lowest[0] = max(lowest[0], periodic[0].max_ms / 1000)
    highest = np.divide(counts, rates - half_step, out=np.full(len(counts), np.inf), where=rates > half_step)
    seconds: np.ndarray = np.where(highest - lowest > 0.001, lowest, np.maximum(printed, lowest))
    return seconds


def _consumer_measurement(
    row: ConsumerSummary, records: int | None = None, mib: float | None = None, interval: bool = False,
    shortest_s: float = MIN_SPAN_S,
) -> Measurement:
    """One Measurement from a ConsumerPerformance row (``records``/``mib``
    override the row's running totals for a detailed-stats interval). A whole
    run's fetch rates are the tool's own, kept only from a fetch time of at
    least ``shortest_s`` (:func:`kperf.validity.min_span_s`), as kperf's
    consumer gives its own."""
    records = row.records if records is None else records
    mib = row.mib if mib is None else mib
    if row.rebalance_ms is not None and row.fetch_ms is not None:
        # From the group's first assignment, as kperf's own consumer: the tool
        # prints fetch time as its elapsed time less the rebalance (group join)
        # time, exact to the ms. Its own MB.sec and nMsg.sec include the join
        # (a group that forms slowly would pass for a slow consumer); fetch_*
        # and kperf's rates exclude it.
        seconds = row.fetch_ms / 1000
    else:
        seconds = records / row.records_per_s if row.records_per_s > 0 else 0.0
    fields: dict[str, float | None] = {
        "rebalance_ms": row.rebalance_ms,
        "fetch_ms": row.fetch_ms,
        "interval": 1 if interval else None,
    }
    if interval or (row.fetch_ms is not None and row.fetch_ms / 1000 >= shortest_s):
        fields |= {"fetch_mib_per_s": row.fetch_mib_per_s, "fetch_records_per_s": row.fetch_records_per_s}
    return Measurement(
        role="consumer",
        client=CLIENT,
        records=records,
        bytes=round(mib * MIB),  # the tool prints MB with four decimals: +-53 bytes
        seconds=seconds,
        measures={k: v for k, v in fields.items() if v is not None},
    )


def _require_fetch_time(row: ConsumerSummary, source: str) -> None:
    """Fail a summary whose fetch time is not positive: the tool then counted more than one first assignment
    as a join, each from its start, and its time gives no rate.

    Its rebalance listener adds the time from its start at each assignment it gets while it owns no partition
    (ConsumerPerfRebListener, 4.3.1). A consumer-protocol member (KIP-848) is called back for every assignment it
    reconciles, an empty first one too, so the member's join is counted twice (CI, 2026-12-02: a fetch time of
    -161 ms under load). Before 2.8 the first join was epoch-sized (KAFKA-10701). A double count that leaves
    the fetch time positive cannot be told from the summary: it is shorter by the time to the empty assignment
    (docs/measure.md)."""
    if row.fetch_ms is not None and row.fetch_ms <= 0:
        raise MeasurementFailed(
            f"{source}: ConsumerPerformance printed a fetch time of {row.fetch_ms} ms, its join "
            f"({row.rebalance_ms} ms) as long as its whole run: it counted more than one first assignment as a join, "
            f"so its time gives no rate", JOIN_COUNTED_TWICE)


def consumer_output(text: str, source: str) -> list[Measurement]:
    """ConsumerPerformance output as Measurements: summary rows as they are,
    detailed-stats rows (running totals) as their intervals.

    The tool prints CONSUMER_TIMEOUT_WARNING when its --timeout passed before
    it read the records asked for; the last row, its short total, then
    carries the error CONSUMER_TIMEOUT rather than passing for a result.
    """
    rows = parse_consumer(text, source)
    if rows[0].start is not None:  # only a detailed first row has no start time
        for row in rows:
            _require_fetch_time(row, source)
        measurements = [_consumer_measurement(row) for row in rows]
    else:
        measurements, records, mib = [], 0, 0.0
        for row in rows:
            measurements.append(_consumer_measurement(row, row.records - records, row.mib - mib, interval=True))
            records, mib = row.records, row.mib
    if CONSUMER_TIMEOUT_WARNING in text:
        measurements[-1] = replace(measurements[-1], errors={"CONSUMER_TIMEOUT": 1})
    return measurements


def detailed_consumer_measurement(
    text: str, source: str, tail_s: float, timeout_ms: int, asked: int, max_poll_records: int = MAX_POLL_RECORDS,
    interval_ms: int = REPORTING_INTERVAL_MS,
) -> Measurement | None:
    """The whole run and its time series from ConsumerPerformance's ``--show-detailed-stats --print-metrics`` output;
    None when its records (:func:`_records_read`) or bytes (:func:`_run_bytes`) cannot be told.

    Each row covers the time from the previous row (the first: from the
    tool's start, its group join included) to the poll that returned the
    record that passed the reporting interval: exactly ``rebalance.time.ms +
    fetch.time.ms`` milliseconds (printExtendedProgress: fetch is the row's
    elapsed time less the join time in it), and consecutive rows share their
    boundary, so the windows lie back to back to the millisecond. The tool
    prints no row for the records after the last one (the loop just ends) and,
    with detailed stats, no summary row: the run's seconds are the rows'
    milliseconds plus ``tail_s``, kperf's clock from the last row to the end of
    the reading loop (:func:`tail_seconds`), the span of the summary's
    start.time to end.time, join included as there.

    The series' load begins at the end of the first row (the join is in it)
    and ends with the last record read: at the end of the loop, or, when the
    tool gave up (CONSUMER_TIMEOUT), ``timeout_ms`` before it.
    """
    rows = parse_consumer(text, source)
    if rows[0].start is not None or any(row.rebalance_ms is None or row.fetch_ms is None for row in rows):
        raise ToolOutputError(f"{source}: not --show-detailed-stats rows with rebalance and fetch times")
    timed_out = CONSUMER_TIMEOUT_WARNING in text
    records = _records_read(parse_consumer_counts(text, source), rows[-1], timed_out, asked, max_poll_records)
    row_bytes = np.round(np.array([row.mib for row in rows]) * MIB).astype(np.int64)
    size = None if records is None else _run_bytes(row_bytes, rows[-1], records)
    if records is None or size is None:
        return None
    ends_s = np.cumsum([(row.rebalance_ms or 0) + (row.fetch_ms or 0) for row in rows]) / 1000
    end_s = round((float(ends_s[-1]) + tail_s) * 1000) / 1000  # in whole milliseconds, as the tool's own times
    load_s = max(float(ends_s[-1]), end_s - timeout_ms / 1000) if timed_out else end_s
    series = _consumer_series(rows, row_bytes, records, size, ends_s, load_s, interval_ms)
    summary = _consumer_summary(rows, records, size, end_s)
    _require_fetch_time(summary, source)
    measured = _consumer_measurement(summary, shortest_s=min_span_s(interval_ms / 1000))
    return replace(measured, series=series, errors={"CONSUMER_TIMEOUT": 1} if timed_out else {})


def _records_read(counts: ConsumerCounts, last: ConsumerSummary, timed_out: bool, asked: int, max_poll_records: int) -> int | None:
    """The records a detailed run read: the sum of the partitions' ``records-lead`` in the metrics table.

    That is how far each partition's position moved from its log start, so
    exact for a new group (the tool's own, reading from the earliest offset)
    of a topic with one offset per record (kperf's: no transactions, no
    compaction). ``records-consumed-total`` falls short of it by the last,
    partly returned batch, so it is no count, only a check: the leads must
    reach it and the ``last`` row, and, unless the tool gave up, lie within one
    poll (``max_poll_records``) above ``asked`` (the tool stops after the poll
    that reached it); otherwise None (the offsets have gaps: no figures).
    """
    records = sum(counts.leads)
    if records < max(counts.consumed, last.records) or (not timed_out and not asked <= records < asked + max_poll_records):
        return None
    return records


def _run_bytes(row_bytes: np.ndarray, last: ConsumerSummary, records: int) -> int | None:
    """The bytes a detailed run read: the ``last`` row's running total (four decimals of MB: +-53 bytes) and, for
    the records after it, the rows' mean record size; None (the run is too short to tell) when that leaves the
    bytes uncertain by more than BYTES_PRECISION."""
    tail = records - last.records
    size = int(row_bytes[-1]) + round(tail * row_bytes[-1] / last.records)
    if (1 + tail / last.records) * MIB * PRINTED_MB_STEP / 2 > BYTES_PRECISION * size:
        return None
    return size


def _consumer_series(
    rows: Sequence[ConsumerSummary], row_bytes: np.ndarray, records: int, size: int, ends_s: np.ndarray, load_s: float,
    interval_ms: int,
) -> Series:
    """A window per detailed row, ending at ``ends_s``, then one of the records after the last row until ``load_s``."""
    tail = records - rows[-1].records
    counts = np.diff([0, *(row.records for row in rows)])
    sizes = np.diff([0, *row_bytes.tolist()])
    if tail > 0:
        ends_s, counts, sizes = np.append(ends_s, load_s), np.append(counts, tail), np.append(sizes, size - row_bytes[-1])
    starts_s = np.concatenate(([0.0], ends_s[:-1]))
    return Series(
        interval_ms / 1000, tuple(starts_s.tolist()), tuple((ends_s - starts_s).tolist()), tuple(counts.tolist()),
        tuple(sizes.tolist()), load_s, float(ends_s[0]),
    )


def _consumer_summary(rows: Sequence[ConsumerSummary], records: int, size: int, end_s: float) -> ConsumerSummary:
    """The summary row the tool would have printed for the whole run. rebalance_ms: the rows' join times (the first
    row's: the tool resets its per-row counter by replacing a local AtomicLong its listener no longer sees, so later
    rebalances print 0); fetch_ms the rest."""
    rebalance_ms = sum(row.rebalance_ms or 0 for row in rows)
    fetch_ms = round(end_s * 1000) - rebalance_ms
    return ConsumerSummary(
        start=None, end=rows[-1].end, mib=size / MIB, mib_per_s=size / MIB / end_s, records=records,
        records_per_s=records / end_s, rebalance_ms=rebalance_ms, fetch_ms=fetch_ms,
        fetch_mib_per_s=size / MIB / (fetch_ms / 1000) if fetch_ms > 0 else 0.0,
        fetch_records_per_s=records / (fetch_ms / 1000) if fetch_ms > 0 else 0.0,
    )


def end_to_end_measurement(summary: EndToEndSummary, records: int, size: int, seconds: float) -> Measurement:
    """EndToEndLatency's statistics: only those it prints (no p95, no max)."""
    latency = {"avg": summary.avg_ms, "p50": summary.p50_ms, "p99": summary.p99_ms, "p999": summary.p999_ms}
    return Measurement(
        role="end-to-end",
        client=CLIENT,
        records=records,
        bytes=size,
        seconds=seconds,
        latency_ms={"e2e": {k: float(v) for k, v in latency.items()}},
    )

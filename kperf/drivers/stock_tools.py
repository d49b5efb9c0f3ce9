"""Kafka's stock perf tools driven with kperf's parameters, their output as Measurements.

ProducerPerformance, ConsumerPerformance and EndToEndLatency are what
published Kafka studies report, so kperf runs them beside its own drivers and
turns what they print (read by :mod:`kperf.drivers.stock_tools_output`) into the same
:class:`~kperf.results.Measurement` shape, with a time series from the
producer's and consumer's periodic lines (:func:`producer_series`,
:func:`detailed_consumer_measurement`) so their records get a steady state too.
``import_file`` does the same for output saved by someone else. Numbers are
the tools' own: where a tool does not print a figure, it is derived from what
it prints and the comment says how.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from kperf.drivers.consumer import ConsumerSpec
from kperf.drivers.driver import Driver
from kperf.drivers.load_hosts import checks, dispatch
from kperf.drivers.payloads import Payloads
from kperf.drivers.producer import ProducerSpec
from kperf.drivers.stock_tools_output import (
    E2E_AVG,
    E2E_PROGRESS,
    METRICS_HEADER,
    ConsumerSummary,
    EndToEndSummary,
    ProducerSummary,
    ToolOutputError,
    claims_result,
    detect_and_parse,
    parse_consumer,
    parse_consumer_counts,
    parse_end_to_end,
    parse_producer,
)
from kperf.errors import KperfError
from kperf.kafka import properties, security
from kperf.kafka.release import KafkaDistribution, ensure_kafka, release_key
from kperf.load import WINDOW_S
from kperf.processes import die_with_parent
from kperf.results import MIB, Measurement, Series

CLIENT = "java"
PAYLOAD_FILE_RECORDS = 2000  # distinct records in the payload file of a "text" payload
# Subprocess time limits: JVM start-up and connecting, plus twice the run time
# at a rate well below what any working setup reaches, so only a hang hits them.
STARTUP_S = 60.0
SLOWEST_RECORDS_PER_S = 2000.0  # producer and consumer
SLOWEST_ROUND_TRIPS_PER_S = 50.0  # EndToEndLatency: one synchronous send and poll per record
CONSUMER_TIMEOUT_MS = 10_000  # ConsumerPerformance's own default --timeout
# ... "number of messages" until 4.1, "number of records" from 4.2
CONSUMER_TIMEOUT_WARNING = "WARNING: Exiting before consuming the expected number of "
# Time series: both tools print one line per reporting interval. ProducerPerformance's was fixed at 5000 ms
# (Stats, 0.10.0.0 to 4.1.1) and is --reporting-interval from 4.2.0. ConsumerPerformance has had
# --reporting-interval and --show-detailed-stats throughout, but only from 4.2.0 does it print its
# --print-metrics table before closing the consumer, which is how kperf learns when reading ended (see
# java_consume). Both checked in each release's kafka-tools jar (3.7.2, 4.1.1, 4.2.0, 4.3.1).
REPORTING_INTERVAL_MS = round(WINDOW_S * 1000)  # one row a second by default; a point's window_s sets it
FIXED_PRODUCER_INTERVAL_MS = 5000
SERIES_FROM = (4, 2, 0)
JAVA_PRINTED_RATE_STEP = 0.1  # periodic lines print records/sec with one decimal ("%.1f")
PRINTED_MB_STEP = 1e-4  # ConsumerPerformance prints MB with four decimals ("%.4f")
BYTES_PRECISION = 1e-4  # the least precision of a consumer run's bytes kperf reports (relative)
MAX_POLL_RECORDS = 500  # the Java consumer's default max.poll.records: the most one poll returns

# What Throwable.printStackTrace() starts a trace with: the exception's class
# name, then ": message" (Kafka's ApiExceptions print no "\tat" frames at all).
_EXCEPTION_LINE = re.compile(r"(?:[A-Za-z_$][\w$]*\.)*(?P<name>[A-Za-z_$][\w$]*(?:Exception|Error))(?::.*)?")
_STACK_FRAME = re.compile(r"\s*(?:at |\.\.\. \d+ more)")
_USAGE_TABLE = re.compile(r"^Option +Description *$", re.MULTILINE)


def java_produce(
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    throughput: int = -1,
    config: Mapping[str, Any] | None = None,
    payload_file: Path | None = None,
    interval_ms: int = REPORTING_INTERVAL_MS,
) -> Measurement:
    """Run ProducerPerformance (``throughput`` records/s, -1 unthrottled) with ``config``.

    With ``payload_file`` the tool sends that file's lines instead of
    ``record_size``-byte records, so bytes are derived from its MB/sec.
    ``interval_ms``: its reporting interval, the series' window (from 4.2).
    """
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    payload = ["--payload-file", str(payload_file)] if payload_file else ["--record-size", str(record_size)]
    rate = throughput if throughput > 0 else SLOWEST_RECORDS_PER_S
    with tempfile.TemporaryDirectory(prefix="kperf-producer-perf-") as tmp:
        # A properties file, not --producer-props, which splits values at '=' (SASL JAAS configs have them).
        props = client_properties(Path(tmp) / "producer.properties", {**(config or {}), "bootstrap.servers": bootstrap})
        kafka = ensure_kafka()
        interval = interval_ms if release_key(kafka.version) >= SERIES_FROM else FIXED_PRODUCER_INTERVAL_MS
        args = [
            "--topic", topic,
            "--num-records", str(records),
            *payload,
            "--throughput", str(throughput),
            "--producer.config", str(props),
            *(["--reporting-interval", str(interval)] if interval != FIXED_PRODUCER_INTERVAL_MS else []),
        ]
        output = _run(kafka, "producer-perf", args, STARTUP_S + 2 * records / rate, Path(tmp))
    periodic, final = parse_producer(output.stdout, "ProducerPerformance output")
    measurement = output.dated(_producer_measurement(periodic, final, None if payload_file else record_size, interval))
    # The tool counts only acknowledged records and prints each failed send's
    # exception to stderr (its callback calls printStackTrace()): count those.
    return replace(measurement, errors=_exceptions(output.stderr))


def java_consume(
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None = None,
    group: str | None = None,
    timeout_ms: int = CONSUMER_TIMEOUT_MS,
    interval_ms: int = REPORTING_INTERVAL_MS,
) -> Measurement:
    """Run ConsumerPerformance for ``records`` records with ``config`` (a consumer.config file).

    ``interval_ms``: the reporting interval of its detailed rows, the series' window.

    ``timeout_ms`` is the tool's ``--timeout``: the longest wait between two
    returned batches. When it gives up early that is an error of the
    measurement (CONSUMER_TIMEOUT), and ``records`` is what it did read.

    From Kafka 4.2 the tool runs with ``--show-detailed-stats`` (one row a
    second: the time series) and ``--print-metrics``; it then prints no summary
    row, so the whole-run figures come from the rows, the metrics table and
    kperf's clock (:func:`detailed_consumer_measurement`). A run too short
    for that (everything read within its first second, so no row or too few
    records in the rows to size the rest) is measured again without detailed
    stats, in a new group of the tool's as the first was. With a ``group``,
    which would have read the records by then, the tool runs once without
    detailed stats, as before 4.2: no series.
    """
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    kafka = ensure_kafka()
    if release_key(kafka.version) >= SERIES_FROM and not group:
        output = _run_consumer_perf(kafka, bootstrap, topic, records, config, None, timeout_ms, interval_ms)
        tail_s = _tail_seconds(output)
        batch = int((config or {}).get("max.poll.records", MAX_POLL_RECORDS))
        detailed = (None if tail_s is None else detailed_consumer_measurement(
            output.stdout, "ConsumerPerformance output", tail_s, timeout_ms, records, batch, interval_ms))
        if detailed is not None:
            return output.dated(detailed)
    output = _run_consumer_perf(kafka, bootstrap, topic, records, config, group, timeout_ms, interval_ms=None)
    # The tool reads whole batches, so it may read more records than asked.
    return _consumer_output(output.stdout, "ConsumerPerformance output")[-1]


def _run_consumer_perf(
    kafka: KafkaDistribution,
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None,
    group: str | None,
    timeout_ms: int,
    interval_ms: int | None,
) -> _Output:
    """One ConsumerPerformance run; with ``interval_ms``, detailed rows that often and the metrics table."""
    with tempfile.TemporaryDirectory(prefix="kperf-consumer-perf-") as tmp:
        args = [
            "--bootstrap-server", bootstrap,
            "--topic", topic,
            "--messages", str(records),
            "--timeout", str(timeout_ms),
            *(["--group", group] if group else []),
            "--consumer.config", str(client_properties(Path(tmp) / "consumer.properties", config or {})),
            *(["--show-detailed-stats", "--reporting-interval", str(interval_ms), "--print-metrics"]
              if interval_ms is not None else []),
        ]
        limit = STARTUP_S + timeout_ms / 1000 + 2 * records / SLOWEST_RECORDS_PER_S
        return _run(kafka, "consumer-perf", args, limit, Path(tmp))


def _tail_seconds(output: _Output) -> float | None:
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


def java_end_to_end(bootstrap: str, topic: str, records: int, record_size: int, acks: str = "1") -> Measurement:
    """Run EndToEndLatency: ``records`` synchronous sends, each polled back before the next."""
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    with tempfile.TemporaryDirectory(prefix="kperf-e2e-latency-") as tmp:
        connection = client_properties(Path(tmp) / "client.properties", {})
        args = [bootstrap, topic, str(records), acks, str(record_size), str(connection)]
        output = _run(ensure_kafka(), "e2e-latency", args, STARTUP_S + 2 * records / SLOWEST_ROUND_TRIPS_PER_S, Path(tmp))
    summary = parse_end_to_end(output.stdout, "EndToEndLatency output")
    # The tool prints no elapsed time: this is the subprocess's wall time, so it
    # includes JVM start-up and connecting, and its rates understate the tool's
    # (its series, from the first round trip on, does not).
    measured = _end_to_end_measurement(summary, records, records * record_size, output.wall_s)
    return replace(measured, series=end_to_end_series(output, records, record_size))


def end_to_end_series(output: _Output, round_trips: int, record_size: int) -> Series | None:
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


def reporting_interval_ms(window_s: float) -> int:
    """The tools' reporting interval for a series of ``window_s`` windows (whole milliseconds, at least one)."""
    return max(1, round(window_s * 1000))


def client_properties(path: Path, config: Mapping[str, Any]) -> Path:
    """``config`` plus this process's security settings, as the properties file a tool reads.

    It is written in the tool's private temporary folder (mode 0700), which is
    deleted when the tool ends: a password in it is never left behind.
    """
    return properties.write(path, {**config, **security.current().java()}, private=True)


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
        return [_end_to_end_measurement(parsed, 0, 0, 0.0)]
    if isinstance(parsed, list):
        return _consumer_output(text, str(path))
    return [_producer_measurement(*parsed, None, None)]


@dataclass(frozen=True)
class _Output:
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


def _run(kafka: KafkaDistribution, tool: str, args: list[str], timeout_s: float, workdir: Path) -> _Output:
    """Run ``tool`` to completion, or KperfError.

    Its log4j output goes to ``workdir`` so stdout holds only tool output; it
    runs in a session of its own so a hung tool is killed with any children.
    Stdout is read line by line as the tool prints (Java's System.out flushes
    at each line), so each line's arrival time is kperf's clock of that moment.
    """
    argv, env = kafka.command(tool, args, log_dir=workdir)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=die_with_parent,  # a killed study (or kernel) leaves no tool running on
    )
    lines: list[str] = []
    arrivals: list[float] = []
    stderr: list[str] = []

    def read_stdout() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            arrivals.append(time.monotonic())
            lines.append(line)

    def read_stderr() -> None:
        assert proc.stderr is not None
        stderr.append(proc.stderr.read())

    readers = [threading.Thread(target=read_stdout, daemon=True), threading.Thread(target=read_stderr, daemon=True)]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise KperfError(f"{tool} did not finish within {timeout_s:.0f} s and was killed") from None
    finally:
        for reader in readers:
            reader.join()
    wall_s = time.monotonic() - start
    output = _Output(tuple(lines), tuple(arrivals), "".join(stderr), wall_s, time.time() - time.monotonic())
    if proc.returncode != 0:
        raise KperfError(f"{tool} failed (exit code {proc.returncode}): {_last_message(output.stderr or output.stdout)}")
    return output


def _last_message(output: str) -> str:
    """The last line of ``output`` that is not a stack frame, nor the option table a tool prints after
    its error (joptsimple's, from 4.2 on): the cause, as one line."""
    output = _USAGE_TABLE.split(output, maxsplit=1)[0]
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not _STACK_FRAME.match(ln)]
    return lines[-1][:300] if lines else "(no output)"


def _exceptions(stderr: str) -> dict[str, int]:
    """Exceptions printed to stderr, by class name (e.g. TimeoutException)."""
    return dict(Counter(m["name"] for ln in stderr.splitlines() if (m := _EXCEPTION_LINE.fullmatch(ln.strip()))))


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


def _producer_measurement(
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
    """ProducerPerformance's run as a time series: a window per periodic line, then the records after the last.

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
    sent after it began and acknowledged before it was printed). The last
    window holds the records acknowledged after the last periodic line, until
    the producer closed: the rest of the run's elapsed time (the final line's,
    to 0.1 records/s or better), which is where the load ends. A window's
    latency is the printed max only: the tool prints no percentiles per
    window. None when the windows cannot be laid out: output of
    ``--warmup-records`` runs, whose lines come from two overlapping Stats.
    """
    counts = np.array([line.records for line in periodic], dtype=np.int64)
    total_s = _producer_seconds(final)
    if final.steady_state or counts.sum() > final.records or total_s <= 0:
        return None
    rates = np.array([line.records_per_s for line in periodic], dtype=float)
    half_step = JAVA_PRINTED_RATE_STEP / 2
    floor_s = (interval_ms or 0.0) / 1000
    printed = np.divide(counts, rates, out=np.zeros(len(counts)), where=rates > 0)  # Infinity: no time passed
    lowest = np.maximum(counts / (rates + half_step), floor_s)
    if len(periodic):
        lowest[0] = max(lowest[0], periodic[0].max_ms / 1000)
    highest = np.divide(counts, rates - half_step, out=np.full(len(counts), np.inf), where=rates > half_step)
    seconds = np.where(highest - lowest > 0.001, lowest, np.maximum(printed, lowest))
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


def _consumer_measurement(
    row: ConsumerSummary, records: int | None = None, mib: float | None = None, interval: bool = False
) -> Measurement:
    """One Measurement from a ConsumerPerformance row (``records``/``mib``
    override the row's running totals for a detailed-stats interval)."""
    records = row.records if records is None else records
    mib = row.mib if mib is None else mib
    if row.rebalance_ms is not None and row.fetch_ms is not None:
        # The tool's elapsed time, exact to the ms: it prints fetch time as
        # elapsed minus rebalance time. Its own MB.sec and nMsg.sec include the
        # rebalance (group join) time; fetch_* exclude it.
        seconds = (row.rebalance_ms + row.fetch_ms) / 1000
    else:
        seconds = records / row.records_per_s if row.records_per_s > 0 else 0.0
    fields = {
        "rebalance_ms": row.rebalance_ms,
        "fetch_ms": row.fetch_ms,
        "fetch_mib_per_s": row.fetch_mib_per_s,
        "fetch_records_per_s": row.fetch_records_per_s,
        "interval": 1 if interval else None,
    }
    return Measurement(
        role="consumer",
        client=CLIENT,
        records=records,
        bytes=round(mib * MIB),  # the tool prints MB with four decimals: +-53 bytes
        seconds=seconds,
        measures={k: v for k, v in fields.items() if v is not None},
    )


def _consumer_output(text: str, source: str) -> list[Measurement]:
    """ConsumerPerformance output as Measurements: summary rows as they are,
    detailed-stats rows (running totals) as their intervals.

    The tool prints CONSUMER_TIMEOUT_WARNING when its --timeout passed before
    it read the records asked for; the last row, its short total, then
    carries the error CONSUMER_TIMEOUT rather than passing for a result.
    """
    rows = parse_consumer(text, source)
    if rows[0].start is not None:  # only a detailed first row has no start time
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
    """The whole run and its time series from ConsumerPerformance's ``--show-detailed-stats --print-metrics`` output.

    Each row covers the time from the previous row (the first: from the
    tool's start, its group join included) to the poll that returned the
    record that passed the reporting interval: exactly ``rebalance.time.ms +
    fetch.time.ms`` milliseconds (printExtendedProgress: fetch is the row's
    elapsed time less the join time in it), and consecutive rows share their
    boundary, so the windows lie back to back to the millisecond. The tool
    prints no row for the records after the last one (the loop just ends) and,
    with detailed stats, no summary row; so:

    * records: the sum of the partitions' ``records-lead`` in the metrics
      table: how far each partition's position moved from its log start, so
      exact for a new group (the tool's own, reading from the earliest offset)
      of a topic with one offset per record (kperf's: no transactions, no
      compaction). ``records-consumed-total`` falls short of it by the last,
      partly returned batch, so it is no count, only a check: the leads must
      reach it and the last row, and, unless the tool gave up, lie within one
      poll (``max_poll_records``) above ``asked`` (the tool stops after the poll
      that reached it); otherwise None (the offsets have gaps: no figures);
    * bytes: the last row's running total (four decimals of MB: +-53 bytes)
      and, for the records after it, the rows' mean record size; None (the
      run is too short to tell) when that leaves the bytes uncertain by more
      than BYTES_PRECISION;
    * seconds: the rows' milliseconds plus ``tail_s``, kperf's clock from the
      last row to the end of the reading loop (:func:`_tail_seconds`): the span
      of the summary's start.time to end.time, join included as there;
    * rebalance_ms: the rows' join times (the first row's: the tool resets its
      per-row counter by replacing a local AtomicLong its listener no longer
      sees, so later rebalances print 0), fetch_ms the rest.

    The series' load begins at the end of the first row (the join is in it)
    and ends with the last record read: at the end of the loop, or, when the
    tool gave up (CONSUMER_TIMEOUT), ``timeout_ms`` before it.
    """
    rows = parse_consumer(text, source)
    last = rows[-1]
    if rows[0].start is not None or any(row.rebalance_ms is None or row.fetch_ms is None for row in rows):
        raise ToolOutputError(f"{source}: not --show-detailed-stats rows with rebalance and fetch times")
    metrics = parse_consumer_counts(text, source)
    records = sum(metrics.leads)
    timed_out = CONSUMER_TIMEOUT_WARNING in text
    if records < max(metrics.consumed, last.records) or (not timed_out and not asked <= records < asked + max_poll_records):
        return None
    tail = records - last.records
    ends_s = np.cumsum([(row.rebalance_ms or 0) + (row.fetch_ms or 0) for row in rows]) / 1000
    row_bytes = np.round(np.array([row.mib for row in rows]) * MIB).astype(np.int64)
    size = int(row_bytes[-1]) + round(tail * row_bytes[-1] / last.records)
    if (1 + tail / last.records) * MIB * PRINTED_MB_STEP / 2 > BYTES_PRECISION * size:
        return None
    counts = np.diff([0, *(row.records for row in rows)])
    sizes = np.diff([0, *row_bytes.tolist()])
    end_s = round((float(ends_s[-1]) + tail_s) * 1000) / 1000  # in whole milliseconds, as the tool's own times
    load_s = max(float(ends_s[-1]), end_s - timeout_ms / 1000) if timed_out else end_s
    if tail > 0:
        ends_s, counts, sizes = np.append(ends_s, load_s), np.append(counts, tail), np.append(sizes, size - row_bytes[-1])
    starts_s = np.concatenate(([0.0], ends_s[:-1]))
    rebalance_ms = sum(row.rebalance_ms or 0 for row in rows)
    fetch_ms = round(end_s * 1000) - rebalance_ms
    summary = ConsumerSummary(
        start=None, end=last.end, mib=size / MIB, mib_per_s=size / MIB / end_s, records=records,
        records_per_s=records / end_s, rebalance_ms=rebalance_ms, fetch_ms=fetch_ms,
        fetch_mib_per_s=size / MIB / (fetch_ms / 1000) if fetch_ms > 0 else 0.0,
        fetch_records_per_s=records / (fetch_ms / 1000) if fetch_ms > 0 else 0.0,
    )
    series = Series(
        interval_ms / 1000, tuple(starts_s.tolist()), tuple((ends_s - starts_s).tolist()), tuple(counts.tolist()),
        tuple(sizes.tolist()), load_s, float(ends_s[0]),
    )
    return replace(_consumer_measurement(summary), series=series, errors={"CONSUMER_TIMEOUT": 1} if timed_out else {})


def _end_to_end_measurement(summary: EndToEndSummary, records: int, size: int, seconds: float) -> Measurement:
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


# Spec fields the tools have no equivalent for, with the kperf option that sets each: refused, never ignored.
PRODUCER_ONLY_PYTHON = {"duration_s": "--duration", "producers": "--producers", "warmup_records": "--warmup-records",
                        "record_latency": "--no-latency", "track_acks": "a fault", "sizes": "a record size distribution",
                        "keys": "record keys", "key_zipf_s": "skewed keys",
                        "give_up_behind_s": "giving up behind schedule"}
CONSUMER_ONLY_PYTHON = {"duration_s": "--duration", "consumers": "--consumers", "end_to_end": "--end-to-end"}


def _unsupported(spec: ProducerSpec | ConsumerSpec, options: Mapping[str, str]) -> None:
    defaults = {f.name: f.default for f in fields(spec)}
    for name, option in options.items():
        if getattr(spec, name) != defaults[name]:
            raise KperfError(f"{option} is not supported with --client java (Kafka's stock tools have no equivalent)")


class StockTools(Driver):
    """Kafka's ProducerPerformance, ConsumerPerformance and EndToEndLatency, one JVM per call: on this host, or on
    a Dask worker's (``--workers``; each worker fetches the pinned Kafka release into its own cache)."""

    client = CLIENT

    def check_producer(self, spec: ProducerSpec) -> None:
        checks.require_java()
        spec.check(librdkafka=False)  # the Java client checks its own settings
        _unsupported(spec, PRODUCER_ONLY_PYTHON)

    def check_consumer(self, spec: ConsumerSpec) -> None:
        checks.require_java()
        spec.check(librdkafka=False)
        _unsupported(spec, CONSUMER_ONLY_PYTHON)
        if spec.records is None:
            raise KperfError("--records is required with --client java (ConsumerPerformance's --messages)")

    def produce(self, spec: ProducerSpec) -> Measurement:
        assert spec.records is not None  # check_producer refuses a duration: the tool takes a count
        return _on_load_host(_producer_perf, spec)

    def consume(self, spec: ConsumerSpec) -> Measurement:
        assert spec.records is not None  # check_consumer requires it
        return _on_load_host(_consumer_perf, spec)

    def end_to_end(self, producer: ProducerSpec, consumer: ConsumerSpec, round_trips: int) -> list[Measurement]:
        """EndToEndLatency: ``round_trips`` records, each sent and read back before the next (no pacing)."""
        return [_on_load_host(_end_to_end_latency, producer, round_trips)]


def _on_load_host(tool: Callable[..., Measurement], *args: Any) -> Measurement:
    """``tool(*args)`` here, or on a Dask worker when asked (one task, as one Python load process), with where it ran
    (``Measurement.load``) and, from a worker, what it used there (the JVM is its task's child, sampled with it)."""
    ran = dispatch.run(tool, [(args, {})])
    (measured,) = ran.results
    return replace(measured, resources={**measured.resources, **ran.resources}, load={**ran.load, **measured.load})


def _producer_perf(spec: ProducerSpec) -> Measurement:
    """ProducerPerformance for ``spec`` on the host this runs on (its payload file made there)."""
    assert spec.records is not None
    with _payload_file(spec) as payload_file:
        return java_produce(spec.bootstrap, spec.topic, spec.records, spec.record_size, int(spec.rate), spec.config,
                            payload_file, reporting_interval_ms(spec.window_s))


def _consumer_perf(spec: ConsumerSpec) -> Measurement:
    """ConsumerPerformance for ``spec`` on the host this runs on."""
    assert spec.records is not None
    return java_consume(spec.bootstrap, spec.topic, spec.records, spec.config, spec.group or None,
                        interval_ms=reporting_interval_ms(spec.window_s))


def _end_to_end_latency(producer: ProducerSpec, round_trips: int) -> Measurement:
    """EndToEndLatency with ``producer``'s topic, record size and acks, on the host this runs on."""
    acks = str(producer.config.get("acks", "1"))
    return java_end_to_end(producer.bootstrap, producer.topic, round_trips, producer.record_size, acks)


@contextmanager
def _payload_file(spec: ProducerSpec) -> Iterator[Path | None]:
    """The tool's --payload-file: the spec's own file, else for "text" payloads a file of such records (newlines
    made spaces) so both clients send the same kind of data; None (the tool's random letters) otherwise."""
    if spec.payload_file is not None or spec.payload != "text":
        yield spec.payload_file
        return
    source = Payloads("text", spec.record_size)
    with tempfile.TemporaryDirectory(prefix="kperf-payload-") as tmp:
        path = Path(tmp) / "payload.txt"
        path.write_bytes(b"\n".join(source.next().replace(b"\n", b" ") for _ in range(PAYLOAD_FILE_RECORDS)))
        yield path

"""Kafka's stock perf tools driven with kperf's parameters, their output as Measurements.

ProducerPerformance, ConsumerPerformance and EndToEndLatency are what
published Kafka studies report, so kperf runs them beside its own drivers and
turns what they print (read by :mod:`kperf.drivers.stock_tools_output`) into the same
:class:`~kperf.results.Measurement` shape. ``import_file`` does the same for
output saved by someone else. Numbers are the tools' own: where a tool does not
print a figure, it is derived from what it prints and the comment says how.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from kperf.drivers.consumer import ConsumerSpec
from kperf.drivers.driver import Driver
from kperf.drivers.payloads import Payloads
from kperf.drivers.producer import ProducerSpec
from kperf.drivers.stock_tools_output import (
    ConsumerSummary,
    EndToEndSummary,
    ProducerSummary,
    detect_and_parse,
    parse_consumer,
    parse_end_to_end,
    parse_producer,
)
from kperf.errors import KperfError
from kperf.kafka import properties, security
from kperf.kafka.release import ensure_kafka
from kperf.processes import die_with_parent
from kperf.results import MIB, Measurement

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
) -> Measurement:
    """Run ProducerPerformance (``throughput`` records/s, -1 unthrottled) with ``config``.

    With ``payload_file`` the tool sends that file's lines instead of
    ``record_size``-byte records, so bytes are derived from its MB/sec.
    """
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    payload = ["--payload-file", str(payload_file)] if payload_file else ["--record-size", str(record_size)]
    rate = throughput if throughput > 0 else SLOWEST_RECORDS_PER_S
    with tempfile.TemporaryDirectory(prefix="kperf-producer-perf-") as tmp:
        # A properties file, not --producer-props, which splits values at '=' (SASL JAAS configs have them).
        props = client_properties(Path(tmp) / "producer.properties", {**(config or {}), "bootstrap.servers": bootstrap})
        args = [
            "--topic", topic,
            "--num-records", str(records),
            *payload,
            "--throughput", str(throughput),
            "--producer.config", str(props),
        ]
        stdout, stderr, _ = _run("producer-perf", args, STARTUP_S + 2 * records / rate, Path(tmp))
    _, final = parse_producer(stdout, "ProducerPerformance output")
    measurement = _producer_measurement(final, None if payload_file else record_size)
    # The tool counts only acknowledged records and prints each failed send's
    # exception to stderr (its callback calls printStackTrace()): count those.
    return replace(measurement, errors=_exceptions(stderr))


def java_consume(
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None = None,
    group: str | None = None,
    timeout_ms: int = CONSUMER_TIMEOUT_MS,
) -> Measurement:
    """Run ConsumerPerformance for ``records`` records with ``config`` (a consumer.config file).

    ``timeout_ms`` is the tool's ``--timeout``: the longest wait between two
    returned batches. When it gives up early that is an error of the
    measurement (CONSUMER_TIMEOUT), and ``records`` is what it did read.
    """
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    with tempfile.TemporaryDirectory(prefix="kperf-consumer-perf-") as tmp:
        args = [
            "--bootstrap-server", bootstrap,
            "--topic", topic,
            "--messages", str(records),
            "--timeout", str(timeout_ms),
            *(["--group", group] if group else []),
            "--consumer.config", str(client_properties(Path(tmp) / "consumer.properties", config or {})),
        ]
        limit = STARTUP_S + timeout_ms / 1000 + 2 * records / SLOWEST_RECORDS_PER_S
        stdout, _, _ = _run("consumer-perf", args, limit, Path(tmp))
    # The tool reads whole batches, so it may read more records than asked.
    return _consumer_output(stdout, "ConsumerPerformance output")[-1]


def java_end_to_end(bootstrap: str, topic: str, records: int, record_size: int, acks: str = "1") -> Measurement:
    """Run EndToEndLatency: ``records`` synchronous sends, each polled back before the next."""
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    with tempfile.TemporaryDirectory(prefix="kperf-e2e-latency-") as tmp:
        connection = client_properties(Path(tmp) / "client.properties", {})
        args = [bootstrap, topic, str(records), acks, str(record_size), str(connection)]
        stdout, _, wall_s = _run("e2e-latency", args, STARTUP_S + 2 * records / SLOWEST_ROUND_TRIPS_PER_S, Path(tmp))
    summary = parse_end_to_end(stdout, "EndToEndLatency output")
    # The tool prints no elapsed time: this is the subprocess's wall time, so it
    # includes JVM start-up and connecting, and its rates understate the tool's.
    return _end_to_end_measurement(summary, records, records * record_size, wall_s)


def client_properties(path: Path, config: Mapping[str, Any]) -> Path:
    """``config`` plus this process's security settings, as the properties file a tool reads.

    It is written in the tool's private temporary folder (mode 0700), which is
    deleted when the tool ends: a password in it is never left behind.
    """
    return properties.write(path, {**config, **security.current().java()}, private=True)


def import_file(path: Path) -> list[Measurement]:
    """Measurements from saved output of any of the three tools, e.g. from a published study.

    Producer output gives one Measurement (its final line). Consumer output
    gives one per row: a ``--show-detailed-stats`` row becomes the records of
    its interval alone, marked ``measures["interval"] = 1``. EndToEndLatency
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
    return [_producer_measurement(parsed[1], None)]


def _run(tool: str, args: list[str], timeout_s: float, workdir: Path) -> tuple[str, str, float]:
    """Run ``tool`` to completion: (stdout, stderr, wall seconds), or KperfError.

    Its log4j output goes to ``workdir`` so stdout holds only tool output; it
    runs in a session of its own so a hung tool is killed with any children.
    """
    argv, env = ensure_kafka().command(tool, args, log_dir=workdir)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=die_with_parent,  # a killed study (or kernel) leaves no tool running on
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise KperfError(f"{tool} did not finish within {timeout_s:.0f} s and was killed") from None
    wall_s = time.monotonic() - start
    if proc.returncode != 0:
        raise KperfError(f"{tool} failed (exit code {proc.returncode}): {_last_message(stderr or stdout)}")
    return stdout, stderr, wall_s


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


def _producer_measurement(final: ProducerSummary, record_size: int | None) -> Measurement:
    """One Measurement from ProducerPerformance's final line."""
    # The tool's rate spans its start to its last acknowledgement (it prints
    # after closing the producer), so its elapsed time is records / rate.
    seconds = final.records / final.records_per_s if final.records_per_s > 0 else 0.0
    # Without the record size (payload files, imported text) bytes are derived
    # from the printed MB/sec, which has two decimals.
    size = final.records * record_size if record_size is not None else round(final.mib_per_s * MIB * seconds)
    latency = ack_latency(final)
    return Measurement(
        role="producer",
        client=CLIENT,
        records=final.records,
        bytes=size,
        seconds=seconds,
        latency_ms={"ack": latency} if latency else {},
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
                        "record_latency": "--no-latency", "track_acks": "a fault"}
CONSUMER_ONLY_PYTHON = {"duration_s": "--duration", "consumers": "--consumers", "end_to_end": "--end-to-end"}


def _unsupported(spec: ProducerSpec | ConsumerSpec, options: Mapping[str, str]) -> None:
    defaults = {f.name: f.default for f in fields(spec)}
    for name, option in options.items():
        if getattr(spec, name) != defaults[name]:
            raise KperfError(f"{option} is not supported with --client java (Kafka's stock tools have no equivalent)")


class StockTools(Driver):
    """Kafka's ProducerPerformance, ConsumerPerformance and EndToEndLatency, one JVM per call."""

    client = CLIENT

    def check_producer(self, spec: ProducerSpec) -> None:
        spec.check(librdkafka=False)  # the Java client checks its own settings
        _unsupported(spec, PRODUCER_ONLY_PYTHON)

    def check_consumer(self, spec: ConsumerSpec) -> None:
        spec.check(librdkafka=False)
        _unsupported(spec, CONSUMER_ONLY_PYTHON)
        if spec.records is None:
            raise KperfError("--records is required with --client java (ConsumerPerformance's --messages)")

    def produce(self, spec: ProducerSpec) -> Measurement:
        assert spec.records is not None  # check_producer refuses a duration: the tool takes a count
        with _payload_file(spec) as payload_file:
            return java_produce(spec.bootstrap, spec.topic, spec.records, spec.record_size, int(spec.rate), spec.config,
                                payload_file)

    def consume(self, spec: ConsumerSpec) -> Measurement:
        assert spec.records is not None  # check_consumer requires it
        return java_consume(spec.bootstrap, spec.topic, spec.records, spec.config, spec.group or None)

    def end_to_end(self, producer: ProducerSpec, consumer: ConsumerSpec, round_trips: int) -> list[Measurement]:
        """EndToEndLatency: ``round_trips`` records, each sent and read back before the next (no pacing)."""
        acks = str(producer.config.get("acks", "1"))
        return [java_end_to_end(producer.bootstrap, producer.topic, round_trips, producer.record_size, acks)]


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

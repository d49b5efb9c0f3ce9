"""Kafka's stock perf tools as a driver: ProducerPerformance, ConsumerPerformance and EndToEndLatency run with
kperf's parameters, here or on a Dask worker's host.

ProducerPerformance, ConsumerPerformance and EndToEndLatency are what
published Kafka studies report, so kperf runs them beside its own drivers:
each call runs one tool (:mod:`kperf.drivers.stock_tools_runner`) and turns
what it printed into the same :class:`~kperf.results.Measurement` shape, with
a time series (:mod:`kperf.drivers.stock_tools_measurements`).
"""

from __future__ import annotations

import math
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from kperf.drivers import share_consumer_perf
from kperf.drivers.consumer import NO_RECORD
from kperf.drivers.driver import Driver
from kperf.drivers.load_hosts import checks, dispatch
from kperf.drivers.payloads import Payloads
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.drivers.stock_tools_measurements import (
    CLIENT,
    CONSUMER_TIMEOUT_WARNING,
    FIXED_PRODUCER_INTERVAL_MS,
    MAX_POLL_RECORDS,
    REPORTING_INTERVAL_MS,
    ToolOutput,
    consumer_output,
    detailed_consumer_measurement,
    end_to_end_measurement,
    end_to_end_series,
    exceptions,
    producer_measurement,
    tail_seconds,
)
from kperf.drivers.stock_tools_output import claims_result, consumed_total, parse_consumer, parse_end_to_end, parse_producer
from kperf.drivers.stock_tools_runner import (
    SLOWEST_RECORDS_PER_S,
    SLOWEST_ROUND_TRIPS_PER_S,
    client_properties,
    run,
    time_limit_s,
)
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import share_groups
from kperf.kafka.release import KafkaDistribution, current_version, ensure_kafka, release_key
from kperf.load import JOIN_TIMEOUT_S
from kperf.results import Measurement

STOPPED_SHORT = "consumer stopped short"  # a MeasurementFailed cause
PAYLOAD_FILE_RECORDS = 2000  # distinct records in the payload file of a "text" payload
IDLE_TIMEOUT_MS = 10_000  # ConsumerPerformance's own default --timeout: kperf's idle bound for it
# ProducerPerformance's reporting interval is --reporting-interval from 4.2.0 (FIXED_PRODUCER_INTERVAL_MS before).
# ConsumerPerformance has had --reporting-interval and --show-detailed-stats throughout, but only from 4.2.0 does it
# print its --print-metrics table before closing the consumer, which is how kperf learns when reading ended (see
# java_consume). Both checked in each release's kafka-tools jar (3.7.2, 4.1.1, 4.2.0, 4.3.1).
SERIES_FROM = (4, 2, 0)


def java_produce(
    bootstrap: str,
    topic: str,
    records: int,
    record_size: int,
    throughput: int = -1,
    config: Mapping[str, Any] | None = None,
    payload_file: Path | None = None,
    interval_ms: int = REPORTING_INTERVAL_MS,
    transaction_ms: float = 0.0,
) -> Measurement:
    """Run ProducerPerformance (``throughput`` records/s, -1 unthrottled) with ``config``; ``transaction_ms``: its
    transactions' length (--transaction-duration-ms; 0: not transactional).

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
            # Its own transactional.id (3.7's tool would use one fixed id for every run without it).
            *(["--transaction-duration-ms", str(math.ceil(transaction_ms)),
               "--transactional-id", f"kperf-{topic}-{uuid.uuid4().hex[:12]}"] if transaction_ms else []),
        ]
        output = run(kafka, "producer-perf", args, time_limit_s(records, rate), Path(tmp))
    periodic, final = parse_producer(output.stdout, "ProducerPerformance output")
    measurement = output.dated(producer_measurement(periodic, final, None if payload_file else record_size, interval))
    # The tool counts only acknowledged records: its failed sends are the exceptions it printed.
    return replace(measurement, errors=exceptions(output.stderr))


def java_consume(
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None = None,
    group: str | None = None,
    join_timeout_s: float = JOIN_TIMEOUT_S,
    interval_ms: int = REPORTING_INTERVAL_MS,
) -> Measurement:
    """Run ConsumerPerformance for ``records`` records with ``config`` (a consumer.config file).

    ``interval_ms``: the reporting interval of its detailed rows, the series' window.

    The tool's ``--timeout`` is the longest wait between two returned batches,
    its start included, when its group forms: so it is the join bound plus the
    idle bound (IDLE_TIMEOUT_MS). When it gives up before reading ``records``
    the unit fails (:func:`_require_all_read`). Its rate runs from the group's
    first assignment (``seconds`` is the tool's fetch time, the join its
    ``rebalance_ms``).

    From Kafka 4.2 the tool runs with detailed stats, for a time series
    (:func:`_detailed_consume`). A run too short for them, or one with a
    ``group`` (which would have read the records by then), runs without
    them, as before 4.2: no series.
    """
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    kafka = ensure_kafka()
    timeout_ms = round(join_timeout_s * 1000) + IDLE_TIMEOUT_MS
    if release_key(kafka.version) >= SERIES_FROM and not group:
        detailed = _detailed_consume(kafka, bootstrap, topic, records, config, timeout_ms, interval_ms)
        if detailed is not None:
            return detailed
    output = _run_consumer_perf(kafka, bootstrap, topic, records, config, group, timeout_ms, interval_ms=None)
    _require_all_read(output, bootstrap, topic, records, timeout_ms)
    # The tool reads whole batches, so it may read more records than asked.
    return consumer_output(output.stdout, "ConsumerPerformance output")[-1]


def _require_all_read(output: ToolOutput, bootstrap: str, topic: str, records: int, timeout_ms: int) -> None:
    """Fail the unit, in one line naming the cluster and the time waited, when the tool gave up before reading
    ``records``: its group did not form within the join bound, or nothing more arrived within the idle bound."""
    if CONSUMER_TIMEOUT_WARNING not in output.stdout:
        return
    waited = (f"within {timeout_ms / 1000:g} s on {bootstrap} (a join bound of {(timeout_ms - IDLE_TIMEOUT_MS) / 1000:g} s "
              f"plus an idle bound of {IDLE_TIMEOUT_MS / 1000:g} s)")
    printed = any(claims_result(line.strip()) for line in output.lines)
    read = parse_consumer(output.stdout, "ConsumerPerformance output")[-1].records if printed else consumed_total(output.stdout)
    if not read:
        raise MeasurementFailed(f"ConsumerPerformance read no record of {topic} {waited}: its group did not form or "
                                f"the topic is empty", NO_RECORD, timed_out=True)
    raise MeasurementFailed(f"ConsumerPerformance stopped after {read} of the {records} records asked of {topic}: "
                            f"nothing more arrived {waited}", STOPPED_SHORT, timed_out=True)


def _detailed_consume(
    kafka: KafkaDistribution,
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None,
    timeout_ms: int,
    interval_ms: int,
) -> Measurement | None:
    """ConsumerPerformance with ``--show-detailed-stats`` (one row a second: the time series) and
    ``--print-metrics``, in a new group of the tool's; None when the run was too short for them.

    The tool then prints no summary row, so the whole-run figures come from the
    rows, the metrics table and kperf's clock (:func:`detailed_consumer_measurement`).
    Too short: everything read within its first second, so no row, or too few
    records in the rows to size the rest.
    """
    output = _run_consumer_perf(kafka, bootstrap, topic, records, config, None, timeout_ms, interval_ms)
    _require_all_read(output, bootstrap, topic, records, timeout_ms)
    tail_s = tail_seconds(output)
    if tail_s is None:
        return None
    batch = int((config or {}).get("max.poll.records", MAX_POLL_RECORDS))
    detailed = detailed_consumer_measurement(
        output.stdout, "ConsumerPerformance output", tail_s, timeout_ms, records, batch, interval_ms)
    return None if detailed is None else output.dated(detailed)


def _run_consumer_perf(
    kafka: KafkaDistribution,
    bootstrap: str,
    topic: str,
    records: int,
    config: Mapping[str, Any] | None,
    group: str | None,
    timeout_ms: int,
    interval_ms: int | None,
) -> ToolOutput:
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
        limit = time_limit_s(records, SLOWEST_RECORDS_PER_S, waits_s=timeout_ms / 1000)
        return run(kafka, "consumer-perf", args, limit, Path(tmp))


def java_end_to_end(bootstrap: str, topic: str, records: int, record_size: int, acks: str = "1") -> Measurement:
    """Run EndToEndLatency: ``records`` synchronous sends, each polled back before the next."""
    if records < 1:
        raise KperfError(f"records must be at least 1, got {records}")
    with tempfile.TemporaryDirectory(prefix="kperf-e2e-latency-") as tmp:
        connection = client_properties(Path(tmp) / "client.properties", {})
        args = [bootstrap, topic, str(records), acks, str(record_size), str(connection)]
        output = run(ensure_kafka(), "e2e-latency", args, time_limit_s(records, SLOWEST_ROUND_TRIPS_PER_S), Path(tmp))
    summary = parse_end_to_end(output.stdout, "EndToEndLatency output")
    # The tool prints no elapsed time: this is the subprocess's wall time, so it
    # includes JVM start-up and connecting, and its rates understate the tool's
    # (its series, from the first round trip on, does not).
    measured = end_to_end_measurement(summary, records, records * record_size, output.wall_s)
    return replace(measured, series=end_to_end_series(output, records, record_size))


def reporting_interval_ms(window_s: float) -> int:
    """The tools' reporting interval for a series of ``window_s`` windows (whole milliseconds, at least one)."""
    return max(1, round(window_s * 1000))


# Spec fields the tools have no equivalent for, with the kperf option that sets each: refused, never ignored.
PRODUCER_ONLY_PYTHON = {"duration_s": "--duration", "producers": "--producers", "warmup_records": "--warmup-records",
                        "record_latency": "--no-latency", "track_acks": "a fault", "sizes": "a record size distribution",
                        "keys": "record keys", "key_zipf_s": "skewed keys",
                        "give_up_behind_s": "giving up behind schedule", "loop": "--loop"}
CONSUMER_ONLY_PYTHON = {"duration_s": "--duration", "consumers": "--consumers", "end_to_end": "--end-to-end",
                        "loop": "--loop", "share": "--share"}
# ShareConsumerPerformance runs --consumers members (its --threads) of the share group --share asks for.
SHARE_ONLY_PYTHON = {k: v for k, v in CONSUMER_ONLY_PYTHON.items() if k not in ("consumers", "share")}


def _unsupported(spec: ProducerSpec | ConsumerSpec, options: Mapping[str, str]) -> None:
    defaults = {f.name: f.default for f in fields(spec)}
    for name, option in options.items():
        if getattr(spec, name) != defaults[name]:
            raise KperfError(f"{option} is not supported with --client java (Kafka's stock tools have no equivalent)")


class StockTools(Driver):
    """Kafka's ProducerPerformance, ConsumerPerformance and EndToEndLatency, one JVM per call: on this host, or on
    a Dask worker's (``--workers``; each worker fetches the pinned Kafka release into its own cache)."""

    client = CLIENT
    end_to_end_roles = ("end-to-end",)  # EndToEndLatency: one measurement of its round trips

    def check_hosts(self) -> None:
        checks.require_java()

    def check_producer(self, spec: ProducerSpec) -> None:
        spec.check(librdkafka=False)  # the Java client checks its own settings
        _unsupported(spec, PRODUCER_ONLY_PYTHON)
        if spec.transactions is not None and (spec.transactions.records or spec.transactions.abort):
            raise KperfError("with --client java a transaction ends by time only and none is aborted "
                             "(ProducerPerformance's --transaction-duration-ms): give milliseconds per transaction")

    def check_consumer(self, spec: ConsumerSpec) -> None:
        spec.check(librdkafka=False)
        if spec.share is not None:
            _unsupported(spec, SHARE_ONLY_PYTHON)
            share_consumer_perf.check(spec.records, spec.share.mode, current_version())
            return
        _unsupported(spec, CONSUMER_ONLY_PYTHON)
        if spec.records is None:
            raise KperfError("--records is required with --client java (ConsumerPerformance's --messages)")

    def produce(self, spec: ProducerSpec) -> Measurement:
        assert spec.records is not None  # check_producer refuses a duration: the tool takes a count
        return _on_load_host(_producer_perf, spec)

    def consume(self, spec: ConsumerSpec) -> Measurement:
        assert spec.records is not None  # check_consumer requires it
        if spec.share is None:
            return _on_load_host(_consumer_perf, spec)
        share_consumer_perf.require_held(spec.bootstrap, spec.topic, spec.records)
        with share_groups.fresh(spec.bootstrap, spec.share.settings) as group:
            return _on_load_host(_share_consumer_perf, replace(spec, group=group))

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
                            payload_file, reporting_interval_ms(spec.window_s),
                            spec.transactions.ms if spec.transactions is not None else 0.0)


def _consumer_perf(spec: ConsumerSpec) -> Measurement:
    """ConsumerPerformance for ``spec`` on the host this runs on."""
    assert spec.records is not None
    return java_consume(spec.bootstrap, spec.topic, spec.records, spec.config, spec.group or None,
                        spec.join_timeout_s, reporting_interval_ms(spec.window_s))


def _share_consumer_perf(spec: ConsumerSpec) -> Measurement:
    """ShareConsumerPerformance for ``spec`` (its group set up by the caller) on the host this runs on."""
    assert spec.records is not None
    return share_consumer_perf.java_share_consume(spec.bootstrap, spec.topic, spec.records, spec.consumers, spec.group,
                                                  spec.config, spec.join_timeout_s)


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

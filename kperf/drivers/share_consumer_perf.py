"""Kafka's ShareConsumerPerformance (``kafka-share-consumer-perf-test.sh``, Kafka 4.2 on) as a kperf measurement:
``--threads`` members of one share group in one JVM, each record accepted implicitly (the tool has no other mode).

The tool has one time bound, ``--timeout``, for two waits (Kafka 4.3.1's source): each member's wait between
returned records, and the tool's wait for its members to end, counted from their start
(``awaitTermination(timeout + 100 ms)``), past which it interrupts them and exits 1 with no result. So the bound
given here is the whole run's (the join bound plus twice the time at the slowest rate kperf expects), and a topic
holding fewer records than asked, which would have the members idle until that bound, is refused before the run.

Its clock runs from before its members subscribe to the end of reading, so the rates it prints include the join.
kperf's rate runs from the group's first delivery, as its own share consumer's does: the tool runs with
``--show-detailed-stats`` at a ``PROGRESS_MS`` interval, whose first row per member comes with its first record
(:func:`kperf.drivers.stock_tools_output.parse_share_consumer`); the join is recorded apart (``rebalance_ms``), as
ConsumerPerformance's. The tool counts deliveries: a record delivered twice (its lock ran out) counts twice. It
verifies nothing and times no record: the Python share consumer measures those.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kperf.drivers.stock_tools_measurements import CLIENT, CONSUMER_TIMEOUT_WARNING
from kperf.drivers.stock_tools_output import parse_share_consumer
from kperf.drivers.stock_tools_runner import SLOWEST_RECORDS_PER_S, client_properties, run, time_limit_s
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import topics
from kperf.kafka.release import ensure_kafka, release_key
from kperf.results import MIB, Measurement

SHARE_FROM = (4, 2, 0)  # the tool's --num-records and --command-config; share groups production-ready
TOOL = "share-consumer-perf"
SHORT = "share consumer stopped short"  # a MeasurementFailed cause
# Its progress interval: the first delivery is known to it. A row per member per interval at most (30 members: 300
# lines a second), and a join takes longer (about 1 s on kperf's local cluster, 5 s at Kafka's defaults); a run
# whose first row counts more than one record is refused by the parser.
PROGRESS_MS = 100


def check(records: int | None, mode: str, release: str) -> None:
    """Refuse what the tool cannot do, in one line, before any load: explicit acknowledgement (it accepts every
    record as it polls), a run without a record count (its ``--num-records`` is required), a release before 4.2."""
    if mode != "implicit":
        raise KperfError(f"--ack {mode} is not supported with --client java (ShareConsumerPerformance accepts every "
                         "record implicitly): use the python client")
    if records is None:
        raise KperfError("--records is required with --client java --share (ShareConsumerPerformance's --num-records)")
    if release_key(release) < SHARE_FROM:
        raise KperfError(f"share consumers with --client java need Kafka {'.'.join(map(str, SHARE_FROM))} or later "
                         f"(ShareConsumerPerformance with --num-records), not {release}")


def require_held(bootstrap: str, topic: str, records: int) -> None:
    """Refuse a run asking for more records than ``topic`` holds: the tool would wait out its whole bound."""
    held = topics.held(bootstrap, topic)
    if held < records:
        raise KperfError(f"topic {topic} holds {held:,} records, fewer than the {records:,} asked: "
                         "ShareConsumerPerformance reads records already there (produce them first, or ask fewer)")


def timeout_s(records: int, join_timeout_s: float) -> float:
    """The tool's ``--timeout``: the whole run's bound (see the module docstring)."""
    return join_timeout_s + 2 * records / SLOWEST_RECORDS_PER_S


def java_share_consume(bootstrap: str, topic: str, records: int, members: int, group: str,
                       config: Mapping[str, Any] | None, join_timeout_s: float) -> Measurement:
    """ShareConsumerPerformance: ``members`` share consumers of ``group`` (whose settings the caller set) read
    ``records`` deliveries of ``topic``; a failed unit when it stopped short."""
    kafka = ensure_kafka()
    bound_s = timeout_s(records, join_timeout_s)
    with tempfile.TemporaryDirectory(prefix="kperf-share-consumer-perf-") as tmp:
        args = [
            "--bootstrap-server", bootstrap,
            "--topic", topic,
            "--num-records", str(records),
            "--threads", str(members),
            "--group", group,
            "--timeout", str(round(bound_s * 1000)),
            "--command-config", str(client_properties(Path(tmp) / "consumer.properties", config or {})),
            "--show-detailed-stats", "--reporting-interval", str(PROGRESS_MS),
        ]
        output = run(kafka, TOOL, args, time_limit_s(records, SLOWEST_RECORDS_PER_S, waits_s=join_timeout_s), Path(tmp))
    summary = parse_share_consumer(output.stdout, "ShareConsumerPerformance output")
    if CONSUMER_TIMEOUT_WARNING in output.stdout or summary.records < records:
        raise MeasurementFailed(f"ShareConsumerPerformance stopped after {summary.records:,} of the {records:,} "
                                f"deliveries asked of {topic} on {bootstrap} within {bound_s:g} s", SHORT,
                                timed_out=True)
    return Measurement(
        role="consumer",
        client=CLIENT,
        records=summary.records,
        bytes=round(summary.mib * MIB),  # four decimals of MiB: +-53 bytes
        seconds=summary.reading_ms / 1000,
        measures={"rebalance_ms": summary.elapsed_ms - summary.reading_ms, "fetch_ms": summary.reading_ms,
                  "share_deliveries": float(summary.records)},
    )

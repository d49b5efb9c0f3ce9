"""What one point sends and reads, and the clients that can send it: pure descriptions, no client, no cluster.

Grids, plans and ``kperf study --plan`` are built from these alone, and the
analysis reads them, so neither imports the drivers (confluent-kafka, numpy,
psutil); :mod:`kperf.drivers` turns a client name into its driver.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kperf.errors import KperfError

CLIENTS = ("python", "java")  # confluent-kafka, and Kafka's stock perf tools
ISR_TIMEOUT_S = 120.0  # a restarted broker not back in every ISR by then is reported as not recovered
WINDOW_S = 1.0  # a time series' default window: one second, OpenMessaging Benchmark's reporting interval
# The longest a consumer group may take to form (subscribe to first assignment) before its unit fails. Generous:
# Apache Kafka's classic groups wait group.initial.rebalance.delay.ms (3 s by default) and a session time-out is
# 45 s; Kafka-API systems and busy coordinators take longer (one took 23 s).
JOIN_TIMEOUT_S = 60.0


def check_join_timeout(seconds: float) -> None:
    """Refuse a join bound no group could meet (a consumer's, the CLI's --join-timeout, a workload file's)."""
    if not (seconds > 0 and math.isfinite(seconds)):
        raise KperfError(f"join timeout must be positive and finite (seconds a consumer group may take to form), got {seconds:g}")


# What a fault does to the broker leading partition 0 from ``at_s`` to ``end_s``: killed (SIGKILL) and restarted,
# paused (SIGSTOP) and resumed (SIGCONT), its link slowed (each answer it sends delayed, or what it is sent capped:
# a local cluster with links, kperf.kafka.links), or the user's own pair of commands run then (any cluster).
FAULT_KINDS = ("kill", "pause", "latency", "bandwidth", "loss", "command")
COMMAND_TIMEOUT_S = 60.0  # a user's fault command must end within this


@dataclass(frozen=True)
class Fault:
    """A fault during a producer's load, ``at_s`` to ``end_s`` seconds from its measured records' start: ``kind``
    is one of FAULT_KINDS; a ``latency`` fault delays each answer of the broker by ``latency_ms``, a ``bandwidth``
    fault caps what it is sent at ``bandwidth_kib_s``, a ``loss`` fault drops ``loss_pct`` % of the packets to and
    from its port (to 0.1 %); a ``command`` fault runs ``start`` at ``at_s`` and ``stop``
    at ``end_s`` (argv lists, each to end within COMMAND_TIMEOUT_S)."""

    at_s: float
    end_s: float
    kind: str = "kill"
    start: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()
    latency_ms: float = 0.0
    bandwidth_kib_s: float = 0.0
    loss_pct: float = 0.0

    def check(self, duration_s: float | None = None) -> None:
        """One line for a fault that cannot run: a kind kperf lacks, times out of order or outside the load, a
        setting its kind does not take or lacks (whether commands exist is the driver's check, on their host)."""
        if self.kind not in FAULT_KINDS:
            raise KperfError(f"fault kind {self.kind!r} is not one of {', '.join(FAULT_KINDS)}")
        if not 0 <= self.at_s < self.end_s:
            raise KperfError(f"a fault must start at or after 0 s and end after it starts, got {self.at_s:g} s to {self.end_s:g} s")
        if duration_s is not None and not self.end_s < duration_s:
            raise KperfError(f"a fault ending at {self.end_s:g} s does not end inside the {duration_s:g} s of load")
        if self.kind == "command" and not (self.start and self.stop):
            raise KperfError("a command fault needs both its start and its stop command")
        if self.kind != "command" and (self.start or self.stop):
            raise KperfError(f"a {self.kind} fault takes no commands: only a command fault runs the user's")
        for kind, name, value in (("latency", "latency_ms", self.latency_ms),
                                  ("bandwidth", "bandwidth_kib_s", self.bandwidth_kib_s),
                                  ("loss", "loss_pct", self.loss_pct)):
            if self.kind == kind and not (value > 0 and math.isfinite(value)):
                raise KperfError(f"a {kind} fault needs a positive, finite {name}, got {value:g}")
            if self.kind != kind and value:
                raise KperfError(f"a {self.kind} fault takes no {name}: only a {kind} fault does")
        if self.kind == "loss" and not 0.1 <= self.loss_pct <= 99.9:
            raise KperfError(f"a loss fault drops 0.1 to 99.9 % of the packets, got {self.loss_pct:g}")

    @property
    def label(self) -> str:
        """The fault in a few words: ``kill 11s``, ``pause 2s``, ``latency 500ms 5s``, ``bandwidth 256KiB/s 5s``,
        ``loss 5% 5s``."""
        what = {"latency": f" {self.latency_ms:g}ms", "bandwidth": f" {self.bandwidth_kib_s:g}KiB/s",
                "loss": f" {self.loss_pct:g}%"}.get(self.kind, "")
        return f"{self.kind}{what} {self.end_s - self.at_s:g}s"


ACK_MODES = ("implicit", "explicit")  # a share consumer's: every record accepted, or each answered
DELIVERY_LIMIT = 5  # Kafka's share.delivery.count.limit by default


@dataclass(frozen=True)
class Sharing:
    """Consumers that are a share group's members (KIP-932): how they acknowledge, which shares of the records they
    release (delivered again) and reject (archived), and the group's settings kperf sets before load
    (:mod:`kperf.kafka.share_groups`, which also checks their names and values; ``share.auto.offset.reset``
    defaults to earliest, so a topic's records are read from its beginning, as a consumer group's are)."""

    mode: str = "implicit"  # or "explicit": each record answered (kperf.drivers.share_answers)
    release: float = 0.0
    reject: float = 0.0
    group_settings: Mapping[str, object] = field(default_factory=dict)  # over share.auto.offset.reset=earliest

    @property
    def settings(self) -> dict[str, object]:
        """The group's settings kperf sets: the topic read from its beginning, unless ``group_settings`` say."""
        return {"share.auto.offset.reset": "earliest", **self.group_settings}

    @property
    def delivery_limit(self) -> int:
        return int(str(self.settings.get("share.delivery.count.limit", DELIVERY_LIMIT)))

    def params(self) -> dict[str, Any]:
        """As a record's parameters: the acknowledgement, the shares and the group's settings (Kafka's names)."""
        return {"share_ack": self.mode, "share_release": self.release, "share_reject": self.reject, **self.settings}

    def check(self) -> None:
        """Refuse, in one line, an unknown mode, shares outside [0, 1) or together reaching 1 (no record would be
        accepted), or shares with implicit acknowledgement."""
        if self.mode not in ACK_MODES:
            raise KperfError(f"share acknowledgement mode must be implicit or explicit, got {self.mode!r}")
        for name, share in (("release", self.release), ("reject", self.reject)):
            if not 0 <= share < 1:
                raise KperfError(f"the {name} share must be at least 0 and below 1 (a fraction of the records), got {share:g}")
        if self.release + self.reject >= 1:
            raise KperfError(f"the release and reject shares together must be below 1, got {self.release:g} + {self.reject:g}")
        if self.mode == "implicit" and (self.release or self.reject):
            raise KperfError("releasing or rejecting records needs explicit acknowledgement (implicit accepts every record)")


ISOLATION = "isolation.level"  # a consumer's setting (both clients' name) ...
ISOLATION_LEVELS = ("read_uncommitted", "read_committed")  # ... and its values
GROUP_PROTOCOLS = ("classic", "consumer")  # a consumer's group.protocol: the classic one, or KIP-848's


@dataclass(frozen=True)
class Transactions:
    """A transactional producer's transactions (exactly-once): each ends after ``records`` of its records or once
    ``ms`` milliseconds passed since it began (one of the two, checked after each send, as ProducerPerformance's
    --transaction-duration-ms is), and is committed, or aborted for an evenly spread ``abort`` share of them.

    Aborts need ``records``: which records were aborted then follows from a record's sequence number alone
    (:meth:`aborted_ranges`), so a consumer verifies read_committed against records that exist without being told.
    """

    records: int = 0
    ms: float = 0.0
    abort: float = 0.0

    def check(self) -> None:
        """Refuse, in one line, no size or both, 0 records per transaction, or an abort share outside [0, 1)."""
        if (self.records > 0) == (self.ms > 0):
            raise KperfError(f"a transaction ends after a number of records or of milliseconds, one of them above 0 "
                             f"(got {self.records} records and {self.ms:g} ms per transaction)")
        if self.records < 0 or self.ms < 0:
            raise KperfError(f"records and milliseconds per transaction cannot be negative, got {self.records} and {self.ms:g}")
        if not 0 <= self.abort < 1:
            raise KperfError(f"the share of transactions aborted must be at least 0 and below 1, got {self.abort:g}")
        if self.abort and not self.records:
            raise KperfError("aborted transactions need a number of records per transaction (a consumer then knows "
                             "which records were aborted from their sequence numbers)")

    def aborted(self, index: int) -> bool:
        """Whether transaction ``index`` (0: the first measured one) is aborted: one in 1 / ``abort``, evenly spread
        (the native loop computes the same floats)."""
        return math.floor((index + 1) * self.abort) > math.floor(index * self.abort)

    def aborted_ranges(self, first: int, records: int) -> list[tuple[int, int]]:
        """The sequence numbers (start, end) of the aborted transactions among ``records`` measured records, the
        first of them sequence ``first`` (the warm-up's come before, in a committed transaction of their own)."""
        if not self.abort:
            return []
        count = -(-records // self.records)
        return [(first + k * self.records, first + min(records, (k + 1) * self.records))
                for k in range(count) if self.aborted(k)]

    def params(self) -> dict[str, Any]:
        """As a record's parameters."""
        return {"txn_records": int(self.records), "txn_ms": float(self.ms), "txn_abort": float(self.abort)}


GROUP_EVENTS = ("join", "leave", "kill")  # a member joins, closes (leaving its group), or is killed (SIGKILL)


@dataclass(frozen=True)
class GroupChange:
    """One change to a consumer group of ``members`` reading a paced producer (kperf.drivers.group_changes):
    ``at_s`` seconds into the load, a member joins, leaves cleanly or is killed, and the group's reading and lag are
    followed until it is back at the producer's rate with its lag drained, within ``recover_s`` after the event (a
    killed member's partitions wait for the session time-out first)."""

    event: str
    members: int
    at_s: float
    recover_s: float

    def check(self) -> None:
        """Refuse, in one line, an unknown event, a group that a leave or a kill would empty, or times not positive."""
        if self.event not in GROUP_EVENTS:
            raise KperfError(f"a group change is one of {', '.join(GROUP_EVENTS)}, got {self.event!r}")
        if self.members < (2 if self.event != "join" else 1):
            raise KperfError(f"a {self.event} needs a group of {2 if self.event != 'join' else 1} or more members "
                             f"(someone must read on), got {self.members}")
        if not (self.at_s > 0 and self.recover_s > 0):
            raise KperfError(f"a group change's time into the load and its time to recover must be positive seconds, "
                             f"got {self.at_s:g} and {self.recover_s:g}")


@dataclass(frozen=True)
class Workload:
    """What one point sends and reads, to what topic, with which client settings."""

    record_size: int
    records: int  # sent by the producers (paced ones: rate x duration)
    rate: float = -1  # records/s over all producers; -1: unthrottled
    payload: str = "random"  # "text": compressible (the stock producer then sends the same kind from a file)
    partitions: int = 1
    replication_factor: int = 1
    topic_config: Mapping[str, str] = field(default_factory=dict)
    producer_config: Mapping[str, Any] = field(default_factory=dict)
    consumer_config: Mapping[str, Any] = field(default_factory=dict)  # the measured consumers' (max.poll.records, ...)
    producers: int = 1
    consumers: int = 0  # 0: produce only
    measure_producer: bool = True  # False: the producer only fills the topic for the consumers
    concurrent: bool = False  # the consumer reads while the producer sends: end-to-end latency
    round_trips: int = 0  # the stock EndToEndLatency's record count (sent one at a time)
    fault: Fault | None = None  # a fault while the producer sends (kperf.drivers.faults)
    window_s: float = WINDOW_S  # the width of the windows of its time series
    join_timeout_s: float = JOIN_TIMEOUT_S  # its consumers' group must form within this
    share: Sharing | None = None  # its consumers are a share group's members, not a consumer group's
    transactions: Transactions | None = None  # its producers are transactional
    processed: Transactions | None = None  # read-process-write: a processor between its producer and its consumer,
    # in transactions of this rule (kperf.drivers.read_process_write)
    group_change: GroupChange | None = None  # a consumer group of its members changes while they read its producer
    features: Mapping[str, int] = field(default_factory=dict)  # the cluster's feature levels for it (transaction.version:
    # kperf.kafka.feature_levels sets them before its load and back after)

    @property
    def aborts(self) -> bool:
        """Its producers abort transactions: its topic is then read back at both isolation levels (a check, not a
        measured consumer: kperf.drivers.aborted_reads)."""
        return self.transactions is not None and self.transactions.abort > 0

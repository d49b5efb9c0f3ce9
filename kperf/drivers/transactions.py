"""A transactional producer's side of a run: its client settings, the Python loop's transactions, and what both
loops report of them (the native loop does the same in C, producer.c).

Both loops keep one rule: the warm-up records are one committed transaction before the measured ones; then after
each measured record is queued, a transaction that is due (:class:`kperf.load.Transactions`) ends: an aborted one
is flushed first, so its records exist on the brokers (read_uncommitted reads them, read_committed must not), then
aborted; a committed one is committed (librdkafka's commit flushes). The last one ends when the loop stops sending.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer

from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.specs import ConsumerSpec
from kperf.errors import MeasurementFailed
from kperf.load import ISOLATION, ISOLATION_LEVELS, Transactions
from kperf.results import Verification

TIMEOUT_S = 60.0  # the longest a transaction's init, commit or abort may take (librdkafka's default transaction.timeout.ms)
WARM_UP_NONE, WARM_UP_OPEN, WARM_UP_DONE = 0, 1, 2  # the warm-up transaction: not begun, open, committed
COMMITTED = ISOLATION_LEVELS[1]  # the isolation level that reads committed records only
# What a transactional producer's measurement adds (Measurement.measures).
COMMITS, ABORTS, ABORTED_RECORDS, COMMIT_MS = "txn_commits", "txn_aborts", "aborted_records", "txn_commit_ms_mean"
READ_ABORTED = "aborted_read"  # ... and a consumer's of their records: those of aborted transactions it read


@dataclass(frozen=True)
class Tally:
    """What one producer's transactions came to: measured ones committed and aborted, the acknowledged records of
    the aborted ones, and the seconds its commits took."""

    commits: int = 0
    aborts: int = 0
    aborted_records: int = 0
    commit_s: float = 0.0


def settings(config: Mapping[str, Any], topic: str, producer_id: int) -> dict[str, Any]:
    """A transactional producer's client settings: ``config`` with its own transactional.id (one per producer and
    run: a second producer with the same id would fence the first)."""
    return {**config, "transactional.id": f"kperf-{topic}-{producer_id}"}


def measures(tallies: list[Tally]) -> dict[str, float]:
    """A run's transaction measures, its producers' tallies summed."""
    commits = sum(t.commits for t in tallies)
    return {COMMITS: commits, ABORTS: sum(t.aborts for t in tallies),
            ABORTED_RECORDS: sum(t.aborted_records for t in tallies),
            COMMIT_MS: 1000 * sum(t.commit_s for t in tallies) / commits if commits else float("nan")}


def verified(ledger: SequenceLedger, spec: ConsumerSpec) -> tuple[Verification, dict[str, float]]:
    """What a consumer's ``ledger`` shows of records ``spec.written_by`` transactional producers wrote: the
    verification (read_committed: the aborted records are neither expected nor missing) and how many records of
    aborted transactions it read (:data:`READ_ABORTED`: read_committed must read none)."""
    rule = spec.written_by
    counts = spec.expected if spec.expected is not None else ledger.highest()
    aborted = ({p: rule.aborted_ranges(spec.warmup_records, max(0, n - spec.warmup_records)) for p, n in counts.items()}
               if rule is not None else {})
    committed = str(spec.config.get(ISOLATION, "")).lower() == COMMITTED
    verification = ledger.verification(spec.expected, aborted if committed else None)
    if rule is None or not rule.abort:  # nothing aborted: nothing to count
        return verification, {}
    return verification, {READ_ABORTED: sum(ledger.seen_in(p, ranges) for p, ranges in aborted.items())}


def readable(written: int, measured: Mapping[str, float], consumer_config: Mapping[str, Any]) -> int:
    """How many of ``written`` records a consumer with ``consumer_config`` reads: read_committed skips those of
    aborted transactions."""
    committed = str(consumer_config.get(ISOLATION, "")).lower() == COMMITTED
    return written - int(measured.get(ABORTED_RECORDS, 0)) if committed else written


class PythonTransactions:
    """The Python loop's transactions on its confluent-kafka producer (the rule above); with ``consumer`` (a
    read-process-write processor's), each commit also commits the offsets that consumer has reached."""

    def __init__(self, producer: Producer, transactions: Transactions, consumer: Consumer | None = None) -> None:
        self._producer, self._rule, self._consumer = producer, transactions, consumer
        self._call(producer.init_transactions, "initialise", TIMEOUT_S)
        self._index = self._first = 0  # the next measured transaction's index; its first record (of those sent)
        self._began, self._acked = time.time(), 0  # when it began; acknowledged records before it
        self.tally = Tally()
        self._open = False  # a measured transaction began
        self._warming = WARM_UP_NONE

    def _call(self, call: Any, what: str, *args: Any) -> None:
        try:
            call(*args)
        except KafkaException as exc:
            raise MeasurementFailed(f"cannot {what} a transaction: {exc.args[0].str()}", f"transaction {what} failed") from None

    def warming(self) -> None:
        """The warm-up records are about to be sent: their transaction begins (once)."""
        if self._warming == WARM_UP_NONE:
            self._call(self._producer.begin_transaction, "begin")
            self._warming = WARM_UP_OPEN

    def warmed(self) -> None:
        """Every warm-up record was sent: their transaction commits (once; the commit flushes them), before the
        clock starts and before any wait for consumer groups (which could outlast the transaction's time-out)."""
        if self._warming == WARM_UP_OPEN:
            self._call(self._producer.commit_transaction, "commit", TIMEOUT_S)
            self._warming = WARM_UP_DONE

    def start(self) -> None:
        """Begin the first measured transaction (a local call: the clock has started)."""
        self._call(self._producer.begin_transaction, "begin")
        self._began, self._open = time.time(), True

    def due(self, sent: int, now: float) -> bool:
        """Whether the open transaction is to end now, ``sent`` measured records queued."""
        rule = self._rule
        return sent - self._first >= rule.records if rule.records else (now - self._began) * 1000 >= rule.ms

    def end(self, sent: int, acked: Callable[[], int], last: bool = False) -> None:
        """End the open transaction after ``sent`` measured records (``acked``: the measured records acknowledged so
        far), then begin the next unless ``last``."""
        if not self._open or sent == self._first:  # none open, or it holds no record
            return
        producer, tally = self._producer, self.tally
        if self._rule.aborted(self._index):
            remaining = producer.flush(TIMEOUT_S)
            if remaining:  # (the native loop's failure says the same)
                raise MeasurementFailed(f"{remaining} records of a transaction to abort were not acknowledged within "
                                        f"{TIMEOUT_S:.0f} s", "transaction abort failed")
            self._call(producer.abort_transaction, "abort", TIMEOUT_S)
            self.tally = Tally(tally.commits, tally.aborts + 1, tally.aborted_records + acked() - self._acked,
                               tally.commit_s)
        else:
            began = time.time()
            if self._consumer is not None and (assigned := self._consumer.assignment()):
                self._call(producer.send_offsets_to_transaction, "add the consumed offsets to",
                           self._consumer.position(assigned), self._consumer.consumer_group_metadata(), TIMEOUT_S)
            self._call(producer.commit_transaction, "commit", TIMEOUT_S)
            self.tally = Tally(tally.commits + 1, tally.aborts, tally.aborted_records,
                               tally.commit_s + time.time() - began)
        self._acked, self._index, self._first, self._open = acked(), self._index + 1, sent, not last
        if not last:
            self._call(producer.begin_transaction, "begin")
            self._began = time.time()

"""The hot loops of the Python driver behind one interface: what a producer or consumer process does per record.

:func:`kperf.drivers.producer.produce_one` and :func:`kperf.drivers.consumer.consume_one` hold everything around
the loop (warm-up, start barrier, deadlines, the time series' windows, the report); a loop sends or reads records
until the next window boundary and keeps the counts, latencies and sequence ledger that the report is made from.
Two loops implement it: ``python`` (confluent-kafka, the portable reference) and ``native`` (compiled C over
librdkafka's own API, :mod:`kperf.drivers.native`), so the two differ only in the language of their loop.
:mod:`kperf.drivers.loops` is the one place a loop name becomes code.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from kperf.drivers.ledger import SequenceLedger
from kperf.latency_bins import Bins

if TYPE_CHECKING:
    from kperf.drivers.share_tally import ShareTally
    from kperf.drivers.transactions import Tally

# Why a producer loop's :meth:`ProducerLoop.run` returned.
BOUNDARY = "boundary"  # the wall clock passed ``until`` (a window boundary): take a snapshot, call again
DONE = "done"  # every record asked for was sent, or the deadline came
BEHIND = "behind"  # a paced record was later than ``give_up_behind_s``: the rest is not sent
FULL = "full"  # the wall clock passed ``until`` while the client's queue was full: the record (its sequence,
# payload and key) is sent by a later call

BATCH = 10_000  # records a consumer loop takes at most per batch: the first as soon as it arrives, then those fetched
POLL_S = 0.5  # a consumer loop's longest wait for a first record (it returns then, so its caller can judge idling)
TurnAcks = tuple[tuple[int, int, float, float], ...]  # (sequence, partition, ack time, intended time) per ack


class ProducerLoop(ABC):
    """One producer's client and its send / pace / acknowledge loop (a ProducerSpec's ``share``, one process)."""

    name: str  # "python" or "native": recorded with every measurement it makes
    sent: int = 0  # measured records sent so far
    warmed: int = 0  # warm-up records sent so far

    @abstractmethod
    def warm_up(self, records: int, until: float) -> bool:
        """Send unmeasured records (sequences 0 to records - 1, stamped with their send time) until ``records`` of
        them were sent: their acknowledgements are not counted. The caller then :meth:`flush` es them. False when the
        client's queue was still full at ``until``: a later call sends the rest. A transactional producer sends them
        in one transaction, committed once the last is sent."""

    @abstractmethod
    def flush(self, timeout_s: float) -> int:
        """Serve acknowledgements until none is outstanding or ``timeout_s`` passed; how many are outstanding."""

    @abstractmethod
    def start(self, started: float) -> None:
        """Count acknowledgements from now on; a paced record ``i`` (of those measured) is meant to be sent at
        ``started + i / rate``, and its sequence follows the warm-up's. A transactional producer begins its first
        measured transaction (a local call)."""

    @abstractmethod
    def run(self, until: float, deadline: float, total: float) -> str:
        """Send measured records until ``total`` were sent or the ``deadline`` (a paced record meant for it or
        later is not sent; unthrottled, the wall clock passing it) (:data:`DONE`), the wall clock passes ``until``
        (:data:`BOUNDARY`; :data:`FULL` when it passed while the client's queue was full, the record waiting for
        room), or a paced record is more than ``give_up_behind_s`` late (:data:`BEHIND`). Between
        records, acknowledgements are served; a paced loop waits for each record's intended time serving them (a
        record meant for the deadline or later is not waited for; one meant after ``until`` is waited for until
        then). A transactional producer ends a transaction after the record that makes it due, and its last one
        before returning DONE or BEHIND (:mod:`kperf.drivers.transactions`)."""

    @abstractmethod
    def counts(self) -> tuple[int, int, int]:
        """Records acknowledged, their payload bytes, and sends that failed, so far (measured records only)."""

    @abstractmethod
    def window_bins(self) -> Bins:
        """The series' latencies since the last call (intended when paced, else send-to-ack), binned as
        :func:`kperf.latency_bins.to_bins` bins them, and forgotten; () without a series or latency."""

    @abstractmethod
    def errors(self) -> dict[str, int]:
        """Failed sends by Kafka error name (librdkafka's ``rd_kafka_err2name``, as confluent-kafka names them)."""

    @abstractmethod
    def histograms(self) -> tuple[bytes, bytes]:
        """The send-to-ack and intended-time latencies of every measured record, as encoded HdrHistograms of
        :func:`kperf.drivers.latency.new_histogram` with :class:`kperf.drivers.latency.Recorder`'s rounding."""

    @abstractmethod
    def acks(self) -> TurnAcks:
        """With ``track_acks``: every acknowledged measured record, in acknowledgement order; else ()."""

    @abstractmethod
    def transactions(self) -> Tally | None:
        """A transactional producer's transactions so far (kperf.drivers.transactions); None for any other."""

    @abstractmethod
    def close(self) -> None:
        """Free the client (outstanding records are purged: the caller flushed what it waits for)."""


class ConsumerLoop(ABC):
    """One consumer of a group and its read / verify loop (a ConsumerSpec, one process)."""

    name: str
    records: int = 0  # read so far (records, not errors)
    bytes: int = 0  # their payload bytes
    fetches: int = 0  # polls that returned records
    joined: float | None = None  # wall clock of its first assignment (the group formed)
    assigned: float | None = None  # ... of its first assignment with partitions
    first: float | None = None  # when the first batch with records was read
    last: float | None = None  # ... the last
    live: float | None = None  # end_to_end: the last batch holding a record meant to be sent after ``assigned``

    @abstractmethod
    def subscribe(self) -> None:
        """Join the group on the spec's topic (earliest offsets, no auto-commit; on losing partitions, what was
        read of them is committed first)."""

    @abstractmethod
    def read(self, until: float, stop_at: float) -> bool:
        """Read batches (a poll of at most :data:`POLL_S` (and ``until``) for the first record, then what else is
        fetched, up to :data:`BATCH` in all) until the wall clock passes ``until`` or this consumer has read
        ``stop_at`` records; False when a poll returned nothing (the caller judges idleness). Each batch's records
        are counted, verified by identity (the ledger) and, end_to_end, their latency from the intended send time
        taken at the batch's read time, for records meant to be sent after ``assigned``."""

    @abstractmethod
    def window_bins(self) -> Bins:
        """End-to-end latencies since the last call, binned, and forgotten."""

    @abstractmethod
    def errors(self) -> dict[str, int]:
        """Errors read by Kafka error name (partition EOF is not one)."""

    @abstractmethod
    def ledger(self) -> SequenceLedger:
        """The identities read: one bit per (producer, sequence), duplicates counted."""

    def finish(self) -> None:
        """Settle what the loop still owes before its report is made (a share consumer's last answers)."""

    def tally(self) -> ShareTally | None:
        """A share group's member: its deliveries and answers (kperf.drivers.share_tally); None for a consumer
        group's."""
        return None

    @abstractmethod
    def histogram(self) -> builtins.bytes:  # builtins: the attribute ``bytes`` shadows the type
        """The end-to-end latencies, an encoded HdrHistogram as :meth:`ProducerLoop.histograms`."""

    @abstractmethod
    def close(self) -> None:
        """Leave the group and free the client."""

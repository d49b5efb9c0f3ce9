"""The share consumer loop (confluent-kafka's ShareConsumer, KIP-932): one member of a share group, answering and
verifying what it is delivered. Python only: librdkafka's share consumer is a preview, and its per-record answers
are one call each.

Behind :class:`~kperf.drivers.loop.ConsumerLoop`, so :func:`kperf.drivers.consumer.consume_one` keeps its windows,
bounds and the group's shared count for it. What differs from a consumer group's member:
- ``records`` counts records that *ended* here (accepted, or archived: rejected, or released at their last allowed
  delivery), so the group stops once every record sent ended, whatever number of deliveries that took; deliveries,
  redeliveries, releases and rejects are counted apart (:class:`~kperf.drivers.share_tally.ShareTally`);
- ``ledger`` holds the ended records: merged over the group, it verifies by sequence that every record sent ended
  once (missing: ended nowhere; duplicated: ended twice, e.g. an acceptance the brokers refused);
- a share consumer sees no assignment: ``joined`` is its subscribing (for the bounds) and ``assigned`` its first
  delivery, so ``rebalance_ms`` is the time from subscribing to the first record;
- implicit acknowledgement accepts a batch at the next poll; explicit answers each record as
  :mod:`kperf.drivers.share_answers` draws it; :meth:`finish` commits the last answers before the report (closing
  would release them), and every acknowledgement the brokers refuse is counted as an error (``ACK_<error>``).
"""

from __future__ import annotations

import builtins
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from confluent_kafka import AcknowledgeType, KafkaError, KafkaException, Message, ShareConsumer, TopicPartition

from kperf.drivers import latency, share_answers
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.loop import POLL_S, ConsumerLoop
from kperf.drivers.payloads import identities
from kperf.drivers.share_tally import ShareTally
from kperf.drivers.specs import ConsumerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import clients
from kperf.latency_bins import Bins

COMMIT_TIMEOUT_S = 30.0
ANSWERS = {share_answers.ACCEPT: AcknowledgeType.ACCEPT, share_answers.RELEASE: AcknowledgeType.RELEASE,
           share_answers.REJECT: AcknowledgeType.REJECT}


class PythonShareLoop(ConsumerLoop):
    name = "python"

    def __init__(self, spec: ConsumerSpec, config: Mapping[str, Any]) -> None:
        sharing = spec.share
        assert sharing is not None
        self._spec, self._sharing, self._limit = spec, sharing, sharing.delivery_limit
        self._consumer = clients.made(ShareConsumer, {**config, "share.acknowledgement.mode": sharing.mode})
        self._consumer.set_acknowledgement_commit_callback(self._acknowledged)
        self._tally, self._ended = ShareTally(), SequenceLedger()
        self._e2e = latency.WindowedRecorder()
        self._errors: Counter[str] = Counter()

    def _acknowledged(self, _: Mapping[TopicPartition, set[int]], error: KafkaException | None) -> None:
        if error is not None:
            self._errors[f"ACK_{error.args[0].name()}"] += 1

    def subscribe(self) -> None:
        self._consumer.subscribe([self._spec.topic])
        self.joined = time.time()

    def read(self, until: float, stop_at: float) -> bool:
        while (now := time.time()) < until and self.records < stop_at:
            try:
                batch = list(self._consumer.poll(min(POLL_S, until - now)))
            except KafkaException as exc:  # the group's errors come as exceptions, not as messages
                error = exc.args[0]
                if error.fatal():
                    raise MeasurementFailed(f"share consumer of {self._spec.topic} failed: {error.str()}",
                                            "share consumer failed") from None
                self._errors[error.name()] += 1
                return False
            now = time.time()
            failed = list(map(Message.error, batch))
            if failed.count(None) != len(failed):  # records the client already released or rejected
                self._errors.update(e.name() for e in failed if e is not None and e.code() != KafkaError._PARTITION_EOF)
                batch = [message for message, error in zip(batch, failed) if error is None]
                if not batch:
                    continue
            if not batch:
                return False
            self._take(batch, now)
        return True

    def _take(self, batch: list[Message], now: float) -> None:
        read = identities(map(Message.headers, batch))  # type: ignore[arg-type]
        if len(read) != len(batch):
            raise MeasurementFailed(f"topic {self._spec.topic} holds records without kperf's identity header: a share "
                                    "group's deliveries are verified by it (use a topic kperf filled)",
                                    "records without identity")
        deliveries = np.fromiter(map(Message.delivery_count, batch), dtype=np.int64, count=len(batch))
        answers = share_answers.answers(read["producer"], read["sequence"], deliveries, self._sharing.release,
                                        self._sharing.reject)
        if self._sharing.mode == "explicit":
            for message, answer in zip(batch, answers.tolist()):
                self._consumer.acknowledge(message, ANSWERS[answer])
        ended = self._tally.add(deliveries, answers, self._limit)
        self._ended.add_many(read["producer"][ended], read["sequence"][ended])
        self.records += int(ended.sum())
        self.fetches += 1
        self.bytes += sum(len(message) for message, done in zip(batch, ended.tolist()) if done)
        self.assigned = self.assigned if self.assigned is not None else now
        if self._spec.end_to_end:  # first deliveries of records meant to be sent after this member's first record
            first = read["intended_ns"][(deliveries == 1) & (read["intended_ns"] >= self.assigned * 1e9)]
            self._e2e.add_many(now - first / 1e9)
            self.live = now if len(first) else self.live
        self.first = self.first if self.first is not None else now
        self.last = now

    def finish(self) -> None:
        """Commit the answers not yet sent (the last batch's), counting those the brokers refuse."""
        refused = [e for e in self._consumer.commit_sync(COMMIT_TIMEOUT_S).values() if e is not None]
        self._errors.update(f"ACK_{error.args[0].name()}" for error in refused)

    def window_bins(self) -> Bins:
        return self._e2e.window_bins()

    def errors(self) -> dict[str, int]:
        return dict(self._errors)

    def ledger(self) -> SequenceLedger:
        return self._ended

    def tally(self) -> ShareTally | None:
        return self._tally

    def histogram(self) -> builtins.bytes:
        return self._e2e.encode()

    def close(self) -> None:
        self._consumer.close()

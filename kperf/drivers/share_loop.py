"""The share consumer loop (confluent-kafka's ShareConsumer, KIP-932): one member of a share group, answering and
verifying what it is delivered. UNTESTED WORK IN PROGRESS (issue 26): not wired into kperf.drivers.loops yet.

Behind :class:`~kperf.drivers.loop.ConsumerLoop`, so :func:`kperf.drivers.consumer.consume_one` keeps its windows,
bounds and the group's shared count for it. What differs from a consumer group's member:
- ``records`` counts records that *ended* here (accepted, or archived: rejected, or released at their last allowed
  delivery): the group stops once every record sent ended, whatever number of deliveries that took; deliveries,
  redeliveries, releases and rejects are counted apart (:class:`~kperf.drivers.share_tally.ShareTally`);
- ``ledger`` holds the ended records, so the group's merged ledger verifies by sequence that every record ended
  once (a missing one ended nowhere; a duplicate ended twice);
- a share consumer sees no assignment: ``joined`` and ``assigned`` are its subscribing (the group's forming is not
  observable from the client), so no rebalance time is claimed;
- implicit acknowledgement accepts the previous batch at the next poll, and the last one at ``commit_sync`` before
  closing (librdkafka's close releases an unacknowledged last batch); explicit acknowledgement answers each record
  as :mod:`kperf.drivers.share_answers` draws it.
"""

from __future__ import annotations

import builtins
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from confluent_kafka import AcknowledgeType, KafkaError, Message, ShareConsumer

from kperf.drivers import latency, share_answers
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.loop import POLL_S, ConsumerLoop
from kperf.drivers.payloads import identities
from kperf.drivers.share_tally import ShareTally
from kperf.drivers.specs import ConsumerSpec
from kperf.latency_bins import Bins

COMMIT_TIMEOUT_S = 30.0


class PythonShareLoop(ConsumerLoop):
    name = "python"

    def __init__(self, spec: ConsumerSpec, config: Mapping[str, Any]) -> None:
        sharing = spec.share
        assert sharing is not None
        self._spec, self._sharing = spec, sharing
        self._consumer = ShareConsumer({**config, "share.acknowledgement.mode": sharing.mode})
        self._tally = ShareTally(limit=sharing.delivery_limit)
        self._ended = SequenceLedger()
        self._e2e = latency.WindowedRecorder()
        self._errors: Counter[str] = Counter()

    def subscribe(self) -> None:
        self._consumer.subscribe([self._spec.topic])
        self.joined = self.assigned = time.time()

    def read(self, until: float, stop_at: float) -> bool:
        consumer, sharing = self._consumer, self._sharing
        while (now := time.time()) < until and self.records < stop_at:
            batch = list(consumer.poll(min(POLL_S, until - now)))
            now = time.time()
            failed = list(map(Message.error, batch))
            if failed.count(None) != len(failed):
                self._errors.update(e.name() for e in failed if e is not None and e.code() != KafkaError._PARTITION_EOF)
                batch = [message for message, error in zip(batch, failed) if error is None]
            if not batch:
                return False
            read = identities(map(Message.headers, batch))  # type: ignore[arg-type]
            if len(read) != len(batch):  # records from elsewhere: accepted, not tallied (no identity to verify)
                raise NotImplementedError("records without kperf's identity in a share group's topic")
            deliveries = np.fromiter(map(Message.delivery_count, batch), dtype=np.int64, count=len(batch))
            answers = share_answers.answers(read["producer"], read["sequence"], deliveries, sharing.release,
                                            sharing.reject)
            if sharing.mode == "explicit":
                for message, answer in zip(batch, answers.tolist()):
                    consumer.acknowledge(message, AcknowledgeType(answer))
            self._tally.add(read["producer"], read["sequence"], deliveries, answers)
            ended = (answers == share_answers.ACCEPT) | (answers == share_answers.REJECT) | (
                (answers == share_answers.RELEASE) & (deliveries >= sharing.delivery_limit))
            self._ended.add_many(read["producer"][ended], read["sequence"][ended])
            self.records += int(ended.sum())
            self.fetches += 1
            self.bytes += sum(len(message) for message, done in zip(batch, ended.tolist()) if done)
            if self._spec.end_to_end:
                self._e2e.add_many(now - read["intended_ns"][deliveries == 1] / 1e9)
            self.first = self.first if self.first is not None else now
            self.last = now
        return True

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
        try:
            if self._sharing.mode == "implicit":
                self._consumer.commit_sync(COMMIT_TIMEOUT_S)  # the last batch accepted, not released at close
        finally:
            self._consumer.close()

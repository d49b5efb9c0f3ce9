"""The Python consumer loop (confluent-kafka): the portable reference the native loop is held to.

It reads a batch at a time and verifies it in numpy, so that the Python work per record is little more than the
client's own calls (a message object and its ``headers()``): see kperf bench for what that leaves.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from kperf.drivers import latency
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.loop import BATCH, POLL_S, ConsumerLoop
from kperf.drivers.payloads import identities
from kperf.drivers.specs import ConsumerSpec
from kperf.kafka import clients
from kperf.latency_bins import Bins


class PythonConsumerLoop(ConsumerLoop):
    name = "python"

    def __init__(self, spec: ConsumerSpec, config: Mapping[str, Any]) -> None:
        self._spec = spec
        self._consumer = clients.made(Consumer, config)
        self._ledger, self._e2e = SequenceLedger(), latency.WindowedRecorder()
        self._errors: Counter[str] = Counter()
        self._collecting = False

    def subscribe(self) -> None:
        # Python's cycle collector runs every few hundred new containers, here the messages and headers of every
        # batch: it took a third of the read loop's CPU. The loop makes no cycles (all it makes is freed by reference
        # counting), so the collector is paused while reading and runs once a window instead (window_bins).
        self._collecting = gc.isenabled()
        gc.disable()
        self._consumer.subscribe([self._spec.topic], on_assign=self._on_assign, on_revoke=_commit_read,
                                 on_lost=_give_up)

    def _on_assign(self, _: Consumer, partitions: list[TopicPartition]) -> None:
        """Note when the group first formed, and first gave this consumer partitions."""
        now = time.time()
        self.joined = self.joined if self.joined is not None else now
        if partitions and self.assigned is None:
            self.assigned = now

    def read(self, until: float, stop_at: float) -> bool:
        consumer, ledger, end_to_end = self._consumer, self._ledger, self._spec.end_to_end
        while (now := time.time()) < until and self.records < stop_at:
            # poll returns on the first record (consume would wait for a full batch or its timeout,
            # which at low rates is end-to-end latency kperf would add), then what else is there.
            head = consumer.poll(min(POLL_S, until - now))
            batch = [head, *consumer.consume(BATCH - 1, timeout=0)] if head is not None else []
            now = time.time()
            # The batch's records are counted, measured and verified in bulk: per record, only the C calls
            # that fetch its error, length and headers (identities: one numpy parse of all the headers).
            failed = list(map(Message.error, batch))
            if failed.count(None) != len(failed):
                self._errors.update(e.name() for e in failed if e is not None and e.code() != KafkaError._PARTITION_EOF)
                batch = [msg for msg, err in zip(batch, failed) if err is None]
            if head is None:
                return False  # nothing arrived: the caller judges idling
            if not batch:
                continue  # errors alone are no fetch
            self.records += len(batch)
            self.fetches += 1
            self.bytes += sum(map(len, batch))
            read = identities(map(Message.headers, batch))  # type: ignore[arg-type]  # (a list when consumed)
            if len(read):
                ledger.add_many(read["producer"], read["sequence"])
                # Records meant to be sent before this consumer joined waited for the join, not for Kafka.
                if end_to_end and self.assigned is not None:
                    intended = read["intended_ns"][read["intended_ns"] >= self.assigned * 1e9]
                    self._e2e.add_many(now - intended / 1e9)
                    self.live = now if len(intended) else self.live
            self.first = self.first if self.first is not None else now
            self.last = now
        return True

    def window_bins(self) -> Bins:
        gc.collect(1)  # the young generations, once a window: any cycle made meanwhile is freed within one
        return self._e2e.window_bins()

    def errors(self) -> dict[str, int]:
        return dict(self._errors)

    def ledger(self) -> SequenceLedger:
        return self._ledger

    def histogram(self) -> bytes:
        return self._e2e.encode()

    def close(self) -> None:
        try:
            self._consumer.close()
        finally:
            if self._collecting:
                gc.enable()


# Why a hand-over commit may not be made, and the loop goes on: nothing read yet (nothing to hand over), or no
# coordinator to take it (a broker fault moved the group's, or broke the connection to it: both seen when the killed
# broker was the coordinator). The next owner then reads from the group's last commit, and what it reads again
# counts as duplicated, never lost.
NOT_HANDED_OVER = frozenset({KafkaError._NO_OFFSET, KafkaError._WAIT_COORD, KafkaError.NOT_COORDINATOR,
                             KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                             KafkaError._TRANSPORT})


def _commit_read(consumer: Consumer, partitions: list[TopicPartition]) -> None:
    """On losing partitions in a rebalance, commit what was read from them, so their next owner
    goes on from there instead of reading them again (consumers of a group join one by one)."""
    if not partitions:
        return
    try:
        consumer.commit(asynchronous=False)
    except KafkaException as exc:
        if exc.args[0].code() not in NOT_HANDED_OVER:
            raise


def _give_up(_: Consumer, __: list[TopicPartition]) -> None:
    """Partitions lost (the group went on without this member) may be another's already: nothing is committed for
    them (librdkafka's rule), so their next owner reads from the group's last commit."""

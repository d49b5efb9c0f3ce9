"""Transactional producers against real Kafka: both loops commit and abort as the rule says, read_committed reads
every committed record and none of an aborted transaction while read_uncommitted reads them all (verified by
sequence number), paced transactions by time, the Java tool's --transaction-duration-ms, and read-process-write
(every record processed once, downstream, and the offsets committed those of what was written)."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition

from kperf import drivers
from kperf.drivers import read_process_write
from kperf.drivers.aborted_reads import produced_and_read_back
from kperf.drivers.consumer import consume
from kperf.drivers.specs import ConsumerSpec, ProcessorSpec, ProducerSpec
from kperf.kafka import clients, groups, topics
from kperf.load import Transactions
from kperf.results import Verification

pytestmark = pytest.mark.cluster
RECORDS = 20_000


def test_aborted_transactions_are_read_uncommitted_only_and_every_committed_record_read_committed(
        bootstrap: str, loop: str) -> None:
    rule = Transactions(records=1_000, abort=0.25)  # transactions 3, 7, 11, 15 and 19 of 20 aborted
    with topics.temporary(bootstrap, "txn", 3, 3) as topic:
        spec = ProducerSpec(bootstrap, topic, 100, records=RECORDS, warmup_records=50, loop=loop, transactions=rule,
                            config={"acks": "all"})
        m = produced_and_read_back(drivers.get("python"), spec)
    assert m.loop == loop and m.records == RECORDS and m.errors == {}
    assert (m.measures["txn_commits"], m.measures["txn_aborts"], m.measures["aborted_records"]) == (15, 5, 5_000)
    assert (m.measures["aborted_read_committed"], m.measures["missing_committed"]) == (0, 0)
    assert (m.measures["aborted_read_uncommitted"], m.measures["missing_uncommitted"]) == (5_000, 0)


def test_a_paced_producer_commits_by_time_and_a_read_committed_consumer_reads_all_as_it_sends(
        bootstrap: str, loop: str) -> None:
    rate, seconds = 2_000, 3
    with topics.temporary(bootstrap, "txn", 3, 3) as topic:
        producer = ProducerSpec(bootstrap, topic, 100, records=rate * seconds, rate=rate, loop=loop,
                                transactions=Transactions(ms=200))
        consumer = ConsumerSpec(bootstrap, topic, records=rate * seconds, end_to_end=True,
                                config={"isolation.level": "read_committed"}, written_by=producer.transactions)
        sent, read = drivers.get("python").end_to_end(producer, consumer, 0)
    assert sent.records == read.records == rate * seconds
    assert read.verification == Verification(expected=rate * seconds, missing=0, duplicated=0)
    # Each transaction lasts at least its 200 ms (then the last one, when the producer stops), and none is aborted.
    assert 2 <= sent.measures["txn_commits"] <= sent.seconds / 0.2 + 1
    assert sent.measures["txn_aborts"] == 0 and "aborted_read" not in read.measures  # none aborted: none counted
    # read_committed sees a record only once its transaction committed: its latency is at least the wait for that.
    assert read.latency_ms["e2e"]["max"] >= 100


def test_the_java_tool_sends_in_transactions_of_its_duration_read_committed(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "txn", 3, 3) as topic:
        java = drivers.get("java")
        spec = ProducerSpec(bootstrap, topic, 100, records=RECORDS, transactions=Transactions(ms=50))
        java.check_producer(spec)
        sent = java.produce(spec)
        read = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, config={"isolation.level": "read_committed"}))
    assert sent.records == RECORDS and read.records == RECORDS


def test_read_process_write_processes_every_record_once_and_commits_the_offsets_it_wrote(bootstrap: str) -> None:
    rate, seconds = 2_000, 3
    records = rate * seconds
    group = groups.fresh_name("processor-test")
    with topics.temporary(bootstrap, "rpw", 3, 3) as source, topics.temporary(bootstrap, "rpw", 3, 3) as sink:
        producer = ProducerSpec(bootstrap, source, 100, records=records, rate=rate, config={"enable.idempotence": True})
        processor = ProcessorSpec(bootstrap, source, sink, records, Transactions(ms=200), group=group)
        processor.check()
        consumer = ConsumerSpec(bootstrap, sink, records=records, end_to_end=True,
                                config={"isolation.level": "read_committed"})
        produced, processed, consumed = read_process_write.run(producer, processor, consumer)
        # The offsets its transactions committed are those of every record it wrote: the source's end, per partition.
        reader = clients.consumer(bootstrap, {"group.id": group})
        try:
            metadata = clients.metadata_with(bootstrap, source).topics[source].partitions
            parts = [TopicPartition(source, p) for p in metadata]
            committed = {tp.partition: tp.offset for tp in reader.committed(parts, timeout=30)}
            ends = {p: reader.get_watermark_offsets(TopicPartition(source, p), timeout=30)[1] for p in metadata}
        finally:
            reader.close()
    assert produced.records == processed.records == consumed.records == records and processed.role == "processor"
    # Downstream, by the source's producer id and sequence numbers: no gap and no duplicate.
    assert consumed.verification == Verification(expected=records, missing=0, duplicated=0)
    assert {p: committed[p] for p in ends if ends[p]} == {p: end for p, end in ends.items() if end}
    assert sum(ends.values()) == records
    assert 2 <= processed.measures["txn_commits"] and processed.measures["txn_aborts"] == 0
    # End to end from the source's intended send: at least the wait for a commit, for some record.
    assert consumed.latency_ms["e2e"]["max"] >= 100

"""One point's load: a fresh topic, then producers, consumers or both, with the chosen driver.

Every experiment is a grid of :class:`Workload` values; :func:`measure_point` runs
one of them with a :class:`~kperf.drivers.driver.Driver` and returns what was
measured, with the CPU and memory used meanwhile and the topic's bytes on
disk (:mod:`kperf.drivers.observed`). The topic is deleted afterwards, so disk
use stays bounded whatever the number of points. :func:`check_point` refuses, before
any load, a point the driver cannot run.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from kperf import drivers
from kperf.drivers import fault_kinds, group_changes, read_process_write
from kperf.drivers.aborted_reads import produced_and_read_back
from kperf.drivers.driver import Driver
from kperf.drivers.faults import under_fault
from kperf.drivers.observed import measured_with_resources
from kperf.drivers.specs import ConsumerSpec, ProcessorSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import feature_levels, groups, topics
from kperf.kafka.target import Target
from kperf.load import Workload
from kperf.results import Measurement


def _producer_spec(bootstrap: str, topic: str, workload: Workload) -> ProducerSpec:
    return ProducerSpec(
        bootstrap, topic, workload.record_size, records=workload.records, rate=workload.rate,
        payload=workload.payload, config=workload.producer_config, producers=workload.producers,
        window_s=workload.window_s, transactions=workload.transactions,
    )


def _consumer_spec(bootstrap: str, topic: str, workload: Workload, records: int) -> ConsumerSpec:
    consumers = max(1, workload.consumers)  # an end-to-end point reads with one consumer unless it says more
    return ConsumerSpec(bootstrap, topic, records=records, consumers=consumers, end_to_end=workload.concurrent,
                        config=workload.consumer_config, window_s=workload.window_s,
                        join_timeout_s=workload.join_timeout_s, share=workload.share,
                        written_by=workload.transactions)


def _processor_spec(bootstrap: str, source: str, sink: str, workload: Workload) -> ProcessorSpec:
    assert workload.processed is not None
    return ProcessorSpec(bootstrap, source, sink, workload.records, workload.processed,
                         producer_config=workload.producer_config, join_timeout_s=workload.join_timeout_s)


def check_point(workload: Workload, driver: Driver, bootstrap: str) -> None:
    """Refuse, before any load, a workload the driver cannot run: its own checks on every spec it will get, the
    unmeasured producer's that fills a consumer's topic included. :func:`measure_point` then runs them unchecked, on
    topics it makes, so each spec is checked once."""
    producer = _producer_spec(bootstrap, "check", workload)
    (driver if workload.measure_producer else drivers.get(drivers.UNMEASURED)).check_producer(producer)
    if workload.group_change is not None:  # the Python client's members, each a process of its own
        if driver.client != "python":
            raise KperfError("a changing consumer group runs with the python client only (its members report as they go)")
        group_changes.check(producer, workload.group_change)  # its session time-out is the cluster's: validation
        _consumer_spec(bootstrap, "check", workload, workload.records).check()
    elif workload.fault is not None:  # the fault in the load, a command fault's commands programs of this host
        workload.fault.check(workload.records / workload.rate if workload.rate > 0 else None)  # a paced load's length
        fault_kinds.require_runnable(workload.fault)
    elif workload.processed is not None:  # read-process-write: the Python client's processor and consumer
        if driver.client != "python":
            raise KperfError("read-process-write runs with the python client only (the stock tools have no processor)")
        _processor_spec(bootstrap, "check", "sink", workload).check()
        _consumer_spec(bootstrap, "check", workload, workload.records).check()
    elif workload.concurrent:  # the Python client's end-to-end consumer; it has no client settings of its own
        _consumer_spec(bootstrap, "check", workload, workload.records).check(librdkafka=False)
    elif workload.consumers:
        driver.check_consumer(_consumer_spec(bootstrap, "check", workload, workload.records))


def roles(workload: Workload, driver: Driver) -> list[str]:
    """The roles of what :func:`measure_point` returns for ``workload`` with ``driver``: a failed unit's records."""
    if workload.group_change is not None:
        return ["consumer"]
    if workload.processed is not None:
        return ["producer", read_process_write.PROCESSOR, "consumer"]
    if workload.concurrent:
        return list(driver.end_to_end_roles)
    if workload.fault is not None or workload.aborts:
        return ["producer"]
    return [*(["producer"] if workload.measure_producer else []), *(["consumer"] if workload.consumers else [])]


def measure_point(target: Target, workload: Workload, driver: Driver, topic_prefix: str) -> list[Measurement]:
    """Run ``workload`` with ``driver`` on a fresh topic, the cluster's feature levels as it says (set back after):
    producer and/or consumer measurements."""
    with feature_levels.finalized(target.bootstrap, workload.features):
        return _measured(target, workload, driver, topic_prefix)


def _measured(target: Target, workload: Workload, driver: Driver, topic_prefix: str) -> list[Measurement]:
    layout = topics.Layout(topic_prefix, workload.partitions, workload.replication_factor, workload.topic_config)
    # Primed: a point measures the load, not the topic's first writes. Read-process-write's sink too, at once.
    layouts = [layout] * (2 if workload.processed is not None else 1)
    with topics.temporaries(target.bootstrap, layouts, primed=True) as made:
        topic = made[0]
        producer = _producer_spec(target.bootstrap, topic, workload)
        sampled = partial(measured_with_resources, target, [topic], workload.window_s)
        if (change := workload.group_change) is not None:  # its members change under the producer's load
            consumer = _consumer_spec(target.bootstrap, topic, workload, workload.records)
            return sampled(lambda: [group_changes.run(producer, consumer, change, workload.partitions)])
        if workload.processed is not None:  # the producer's topic processed into a second one, which is read
            sink = made[1]
            processor = replace(_processor_spec(target.bootstrap, topic, sink, workload), group=groups.fresh_name())
            consumer = replace(_consumer_spec(target.bootstrap, sink, workload, workload.records),
                               group=groups.fresh_name())
            # The producer's clock starts once both groups formed: their joins are no end-to-end latency.
            paced = replace(producer, after_groups=((processor.group, 1), (consumer.group, consumer.consumers)),
                            join_timeout_s=workload.join_timeout_s)
            return measured_with_resources(target, [topic, sink], workload.window_s,
                                           lambda: read_process_write.run(paced, processor, consumer))
        if workload.concurrent:
            consumer = _consumer_spec(target.bootstrap, topic, workload, workload.records)
            return sampled(lambda: driver.end_to_end(producer, consumer, workload.round_trips))
        if (fault := workload.fault) is not None:  # the Python producer: it tracks every acknowledged sequence
            return sampled(lambda: [under_fault(producer, fault, workload.replication_factor, target.metrics)])
        if workload.aborts:  # read back at both isolation levels
            return sampled(lambda: [produced_and_read_back(driver, producer)])
        filler = driver if workload.measure_producer else drivers.get(drivers.UNMEASURED)
        (produced,) = sampled(lambda: [filler.produce(producer)])
        measured = [produced] if workload.measure_producer else []
        if workload.consumers:
            consumer = _consumer_spec(target.bootstrap, topic, workload, produced.records)
            measured += sampled(lambda: [driver.consume(consumer)])
        return measured

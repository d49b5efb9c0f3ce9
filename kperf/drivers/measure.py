"""One measured point's load: a fresh topic, then producers, consumers or both, with the chosen driver.

Every experiment is a grid of :class:`Workload` values; :func:`measure` runs
one of them with a :class:`~kperf.drivers.driver.Driver` and returns what was
measured, with the CPU and memory used meanwhile and the topic's bytes on
disk. The topic is deleted afterwards, so disk use stays bounded whatever the
number of points.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

from kperf import drivers
from kperf.drivers import resources
from kperf.drivers.consumer import ConsumerSpec
from kperf.drivers.driver import Driver
from kperf.drivers.faults import broker_failure
from kperf.drivers.producer import ProducerSpec
from kperf.kafka import broker_metrics, topics
from kperf.kafka.target import Target
from kperf.load import Workload
from kperf.results import Measurement
from kperf.series_building import with_resources


def scraped(metrics: broker_metrics.BrokerMetrics | None) -> tuple[broker_metrics.Scrape, float] | None:
    """The brokers' metrics now, dated at the middle of the scrape (the brokers read their counters while it
    ran: a unit of a second or two would otherwise gain the scrapes' own tenth of a second); None without them."""
    if metrics is None:
        return None
    started = time.monotonic()
    scrape = metrics.scrape()
    return scrape, (started + time.monotonic()) / 2


def measured_with_resources(
    target: Target, topics: Sequence[str], window_s: float, run: Callable[[], list[Measurement]],
) -> list[Measurement]:
    """``run()``'s measurements with the CPU and memory used meanwhile (over the whole run, and window by window in
    their series), the brokers' own view of the same time where it is readable (``target.metrics``) and, on the
    local cluster, the bytes on disk of the ``topics`` it wrote."""
    before = scraped(target.metrics)
    with resources.local_sampler(target.local, [os.getpid()], resources.interval_for(window_s)) as sampler:
        measured = run()
    after = scraped(target.metrics)
    view = broker_metrics.between(before[0], after[0], after[1] - before[1]) if before and after else {}
    usage, samples = sampler.summary(), sampler.samples()
    if target.local is not None:
        usage["topic_disk_bytes"] = sum(resources.topic_disk_bytes(target.local, topic) for topic in topics)
    # Load processes on Dask workers sampled themselves there (kperf.drivers.workers): their figures replace this
    # host's, whose windows (this process alone, idle) would then say nothing of them.
    return [replace(m, resources={**usage, **m.resources}, broker=view,
                    series=m.series and with_resources(m.series, [replace(s, values={k: v for k, v in s.values.items()
                                                                                     if k not in m.resources})
                                                                  for s in samples]))
            for m in measured]


def producer_spec(bootstrap: str, topic: str, workload: Workload) -> ProducerSpec:
    return ProducerSpec(
        bootstrap, topic, workload.record_size, records=workload.records, rate=workload.rate,
        payload=workload.payload, config=workload.producer_config, producers=workload.producers,
        window_s=workload.window_s,
    )


def consumer_spec(bootstrap: str, topic: str, workload: Workload, records: int) -> ConsumerSpec:
    consumers = max(1, workload.consumers)  # an end-to-end point reads with one consumer unless it says more
    return ConsumerSpec(bootstrap, topic, records=records, consumers=consumers, end_to_end=workload.concurrent,
                        window_s=workload.window_s)


def check(workload: Workload, driver: Driver, bootstrap: str) -> None:
    """Refuse, before any load, a workload the driver cannot run (its own checks on the specs it would get)."""
    if workload.measure_producer:
        driver.check_producer(producer_spec(bootstrap, "check", workload))
    if workload.consumers and not workload.concurrent:
        driver.check_consumer(consumer_spec(bootstrap, "check", workload, workload.records))


def measure(target: Target, workload: Workload, driver: Driver, topic_prefix: str) -> list[Measurement]:
    """Run ``workload`` with ``driver`` on a fresh topic: producer and/or consumer measurements."""
    with topics.temporary(
        target.bootstrap, topic_prefix, workload.partitions, workload.replication_factor, workload.topic_config
    ) as topic:
        producer = producer_spec(target.bootstrap, topic, workload)
        sampled = partial(measured_with_resources, target, [topic], workload.window_s)
        if workload.concurrent:
            consumer = consumer_spec(target.bootstrap, topic, workload, workload.records)
            return sampled(lambda: driver.end_to_end(producer, consumer, workload.round_trips))
        if (fault := workload.fault) is not None:  # the Python producer: it tracks every acknowledged sequence
            return sampled(lambda: [broker_failure(producer, fault, workload.replication_factor)])
        filler = driver if workload.measure_producer else drivers.get(drivers.UNMEASURED)
        (produced,) = sampled(lambda: [filler.produce(producer)])
        measured = [produced] if workload.measure_producer else []
        if workload.consumers:
            consumer = consumer_spec(target.bootstrap, topic, workload, produced.records)
            measured += sampled(lambda: [driver.consume(consumer)])
        return measured

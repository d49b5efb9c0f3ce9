"""One measured point's load: a fresh topic, then producers, consumers or both, with either client.

Every experiment is a grid of :class:`Workload` values; :func:`measure` runs
one of them with the Python drivers or Kafka's stock tools and returns what
was measured, with the CPU and memory used meanwhile and the topic's bytes on
disk. The topic is deleted afterwards, so disk use stays bounded whatever the
number of points.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from kperf import resources, tools, topics
from kperf.consumer import ConsumerSpec, consume
from kperf.faults import broker_failure
from kperf.load import Workload
from kperf.payloads import Payloads
from kperf.producer import ProducerSpec, produce
from kperf.results import Measurement
from kperf.target import Target

PAYLOAD_FILE_RECORDS = 2000  # distinct records in a payload file for the stock producer


def measured_with_resources(target: Target, topic: str, run: Callable[[], list[Measurement]]) -> list[Measurement]:
    """``run()``'s measurements with the CPU and memory used meanwhile and, on the local cluster, the topic's bytes on disk."""
    with resources.local_sampler(target.local, [os.getpid()]) as sampler:
        measured = run()
    usage = sampler.summary()
    if target.local is not None:
        usage["topic_disk_bytes"] = resources.topic_disk_bytes(target.local, topic)
    return [replace(m, resources=usage) for m in measured]


def measure(target: Target, workload: Workload, client: str, topic_prefix: str) -> list[Measurement]:
    """Run ``workload`` with ``client`` ("python" or "java") on a fresh topic: producer and/or consumer measurements."""
    with topics.temporary(
        target.bootstrap, topic_prefix, workload.partitions, workload.replication_factor, workload.topic_config
    ) as topic:
        if workload.concurrent:
            return measured_with_resources(target, topic, lambda: _end_to_end(target.bootstrap, topic, workload, client))
        if (fault := workload.fault) is not None:
            spec = _producer_spec(target.bootstrap, topic, workload)
            return measured_with_resources(
                target, topic, lambda: [broker_failure(spec, fault, workload.replication_factor)]
            )
        producer_client = client if workload.measure_producer else "python"  # filling is not measured
        (produced,) = measured_with_resources(
            target, topic, lambda: [_produce(target.bootstrap, topic, workload, producer_client)]
        )
        measured = [produced] if workload.measure_producer else []
        if workload.consumers:
            measured += measured_with_resources(
                target, topic, lambda: [_consume(target.bootstrap, topic, workload, client, produced.records)]
            )
        return measured


def _produce(bootstrap: str, topic: str, workload: Workload, client: str) -> Measurement:
    if client == "java":
        with _payload_file(workload) as payload_file:
            return tools.java_produce(
                bootstrap, topic, workload.records, workload.record_size, int(workload.rate),
                workload.producer_config, payload_file,
            )
    return produce(_producer_spec(bootstrap, topic, workload))


def _consume(bootstrap: str, topic: str, workload: Workload, client: str, records: int) -> Measurement:
    if client == "java":
        return tools.java_consume(bootstrap, topic, records)
    return consume(ConsumerSpec(bootstrap, topic, records=records, consumers=workload.consumers))


def _producer_spec(bootstrap: str, topic: str, workload: Workload) -> ProducerSpec:
    return ProducerSpec(
        bootstrap, topic, workload.record_size, records=workload.records, rate=workload.rate,
        payload=workload.payload, config=workload.producer_config, producers=workload.producers,
    )


def _end_to_end(bootstrap: str, topic: str, workload: Workload, client: str) -> list[Measurement]:
    """A producer and a consumer at once (two processes), or the stock EndToEndLatency's round trips.

    The consumer records end-to-end latency only for records meant to be sent
    after it joined its group, so the join does not count as latency.
    """
    if client == "java":
        acks = str(workload.producer_config.get("acks", "1"))
        return [tools.java_end_to_end(bootstrap, topic, workload.round_trips, workload.record_size, acks)]
    consumer_spec = ConsumerSpec(bootstrap, topic, records=workload.records, end_to_end=True)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        consumed = pool.submit(consume, consumer_spec)
        produced = pool.submit(produce, _producer_spec(bootstrap, topic, workload))
        return [produced.result(), consumed.result()]


@contextmanager
def _payload_file(workload: Workload) -> Iterator[Path | None]:
    """For "text" payloads, a file of such records (newlines made spaces) for the stock producer's
    --payload-file, so both clients send the same kind of data; None (the tool's own random letters) otherwise."""
    if workload.payload != "text":
        yield None
        return
    source = Payloads("text", workload.record_size)
    with tempfile.TemporaryDirectory(prefix="kperf-payload-") as tmp:
        path = Path(tmp) / "payload.txt"
        path.write_bytes(b"\n".join(source.next().replace(b"\n", b" ") for _ in range(PAYLOAD_FILE_RECORDS)))
        yield path

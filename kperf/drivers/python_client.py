"""The Python driver: confluent-kafka (librdkafka) producers and consumers, each in its own load process."""

from __future__ import annotations

from functools import partial

from kperf.drivers.consumer import consume
from kperf.drivers.driver import Driver
from kperf.drivers.load_hosts import dispatch
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.results import Measurement


class PythonClient(Driver):
    client = "python"

    def check_producer(self, spec: ProducerSpec) -> None:
        spec.check(librdkafka=True)

    def check_consumer(self, spec: ConsumerSpec) -> None:
        spec.check(librdkafka=True)

    def produce(self, spec: ProducerSpec) -> Measurement:
        return produce(spec, checked=True)  # by check_producer, and the topic by the caller, before any load

    def consume(self, spec: ConsumerSpec) -> Measurement:
        return consume(spec, checked=True)

    def end_to_end(self, producer: ProducerSpec, consumer: ConsumerSpec, round_trips: int) -> list[Measurement]:
        """A paced producer and an ``end_to_end`` consumer, each in its own process (``round_trips`` is not used).

        The consumer records latency only for records meant to be sent after it
        joined its group, so the join does not count as latency.
        """
        consumed, produced = dispatch.together([partial(consume, consumer, checked=True), partial(produce, producer, checked=True)])
        return [produced, consumed]

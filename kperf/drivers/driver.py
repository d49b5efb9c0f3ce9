"""What every load generator does, whichever client it runs: OpenMessaging Benchmark's driver idea.

A driver is stateless and every argument and result is a picklable value
(specs in, :class:`~kperf.results.Measurement` out), so a call can run in this
process, a worker process, or later on another host, unchanged. Its checks
refuse what the client cannot do before any load starts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.results import Measurement


class Driver(ABC):
    """Produce, consume, or both at once, measured."""

    client: str  # the name it is chosen by and recorded under (``param.client``)
    end_to_end_roles: tuple[str, ...] = ("producer", "consumer")  # the roles of what :meth:`end_to_end` returns

    @abstractmethod
    def check_producer(self, spec: ProducerSpec) -> None:
        """Refuse ``spec`` (naming the option) if this client cannot send what it asks."""

    @abstractmethod
    def check_consumer(self, spec: ConsumerSpec) -> None:
        """Refuse ``spec`` (naming the option) if this client cannot read as it asks."""

    def check_hosts(self) -> None:
        """Refuse the load hosts (``--workers``) if this client cannot run there. It may ask the Dask scheduler, so
        it is called once the scheduler is reached, before any load; the spec checks above need nothing and come
        first (``--plan`` too)."""

    @abstractmethod
    def produce(self, spec: ProducerSpec) -> Measurement:
        """Send what ``spec`` describes to its existing topic (``spec`` already passed :meth:`check_producer`)."""

    @abstractmethod
    def consume(self, spec: ConsumerSpec) -> Measurement:
        """Read what ``spec`` describes from its topic (``spec`` already passed :meth:`check_consumer`)."""

    @abstractmethod
    def end_to_end(self, producer: ProducerSpec, consumer: ConsumerSpec, round_trips: int) -> list[Measurement]:
        """Produce and consume at once, measuring produce-to-consume latency. A client that can only do
        synchronous round trips (one record sent, then read back) sends ``round_trips`` records instead."""

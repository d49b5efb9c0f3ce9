"""The brokers' replica gauges read in rounds while a fault runs (:mod:`kperf.replica_view` says what they cost).

A paused broker's JMX exporter runs inside its stopped JVM and a killed one's is gone: a round waits
:data:`READ_TIMEOUT_S` for them at most and goes on with the brokers that answered.
"""

from __future__ import annotations

import threading
import time

from kperf.kafka import broker_metrics
from kperf.kafka.broker_metrics import BrokerMetrics
from kperf.replica_view import Round

ROUND_S = 0.5  # between two rounds
READ_TIMEOUT_S = 0.8  # a broker that has not answered by then is missing from the round


class ReplicaWatch(threading.Thread):
    """Rounds of every broker's under-replicated partitions and leaderships, every :data:`ROUND_S` until stopped."""

    def __init__(self, metrics: BrokerMetrics) -> None:
        super().__init__(name="kperf-replica-watch", daemon=True)
        self.metrics = metrics
        self.rounds: list[Round] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(ROUND_S):
            began = time.time()
            scrape, missing = self.metrics.answering(READ_TIMEOUT_S)
            under, leaders = broker_metrics.replicas(scrape)
            self.rounds.append(Round((began + time.time()) / 2, missing == 0, under, leaders))

    def stop(self) -> list[Round]:
        """Stop after the round under way (it ends within READ_TIMEOUT_S): the rounds read."""
        self.stopping.set()
        if self.is_alive():
            self.join(timeout=READ_TIMEOUT_S + 5)
        return list(self.rounds)

"""A consumer group's lag sampled from outside it: the topic's end offsets minus the group's committed offsets,
summed over partitions (what ``kafka-consumer-groups.sh`` shows), every :data:`LAG_SAMPLE_S`. The rebalance
experiment (:mod:`kperf.drivers.group_changes`) and a fault (:mod:`kperf.drivers.faults`) judge recovery by it."""

from __future__ import annotations

import threading
import time

from confluent_kafka import KafkaException, TopicPartition

from kperf.errors import MeasurementFailed
from kperf.kafka import clients

LAG_SAMPLE_S = 0.2
ANSWER_TIMEOUT_S = 2.0  # a leader or coordinator that does not answer by then (killed, paused) skips the sample
COMMIT_INTERVAL_MS = 1000  # a sampled group's auto-commit: the lag a calm group shows is about a second of records


class LagSampler(threading.Thread):
    """The group's lag (end offsets minus committed offsets over ``partitions``) and the records the topic holds,
    sampled every :data:`LAG_SAMPLE_S` until stopped, as ``(time, lag, records held)``."""

    def __init__(self, bootstrap: str, topic: str, group: str, partitions: int) -> None:
        super().__init__(name="kperf-lag-sampler", daemon=True)
        self.bootstrap, self.group = bootstrap, group
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]
        self.samples: list[tuple[float, int, int]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        # It asks the group's committed offsets without joining it (no subscribe): it is no member. Being no member,
        # nothing tells its client that a partition's leader moved: its metadata is refreshed every second, or it
        # would ask a killed leader until the default five minutes are up.
        reader = clients.consumer(self.bootstrap, {"group.id": self.group, "enable.auto.commit": False,
                                                   "topic.metadata.refresh.interval.ms": 1000})
        try:
            while not self.stopping.wait(LAG_SAMPLE_S):
                at = time.time()
                try:  # committed first: read after the end offsets, a commit made meanwhile could pass them
                    asked = reader.committed(self.partitions, timeout=ANSWER_TIMEOUT_S)
                    marks = {p.partition: reader.get_watermark_offsets(p, timeout=ANSWER_TIMEOUT_S)
                             for p in self.partitions}
                except KafkaException:
                    continue  # no answer this time: the next sample asks again
                if any(c.error is not None for c in asked):
                    continue  # a partition's offset unknown (its coordinator moving): no lag to tell
                # None committed yet (OFFSET_INVALID): the group starts at the log's start (a primed topic's is 1).
                committed = sum(c.offset if c.offset >= 0 else marks[c.partition][0] for c in asked)
                ends = sum(high for _, high in marks.values())
                held = sum(high - low for low, high in marks.values())
                self.samples.append((at, ends - committed, held))
        finally:
            reader.close()

    def stop(self) -> list[tuple[float, int, int]]:
        """Stop after the sample under way (its requests end within ANSWER_TIMEOUT_S each): the samples taken."""
        self.stopping.set()
        if self.is_alive():
            self.join(timeout=(len(self.partitions) + 1) * ANSWER_TIMEOUT_S + 5)
        return list(self.samples)

    def started_at(self, within_s: float, alive: threading.Thread) -> float:
        """When the topic first held a record (the producer's load began), waiting ``within_s`` at most while the
        producer's thread ``alive`` runs."""
        deadline = time.time() + within_s
        while time.time() < deadline and alive.is_alive():
            if found := next((t for t, _, held in self.samples if held > 0), None):
                return found
            time.sleep(LAG_SAMPLE_S)
        raise MeasurementFailed(f"the producer's records did not reach the topic within {within_s:g} s",
                                "producer did not start", timed_out=True)

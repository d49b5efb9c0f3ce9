"""Experiments: sweeps of measured points, each point on a fresh topic, each result recorded at once."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from kperf import environment, resources, topics
from kperf.producer import ProducerSpec, produce
from kperf.results import Measurement, Result, ResultStore
from kperf.target import Target

WARM_UP_TOLERANCE = 0.10  # warm when two consecutive runs differ by at most 10%
WARM_UP_MAX_RUNS = 30  # a bound, should the rate never settle


@dataclass(frozen=True)
class ProducerPoint:
    """One producer workload: what is sent, to what topic shape, with which client settings."""

    records: int
    record_size: int
    partitions: int
    replication_factor: int
    producer_config: Mapping[str, Any]

    def params(self) -> dict[str, Any]:
        """Workload settings under their own names, client settings under Kafka's."""
        return {
            "records": self.records,
            "record_size": self.record_size,
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            **self.producer_config,
        }


def measure_producer(target: Target, experiment: str, point: ProducerPoint) -> Measurement:
    """One producer run of ``point`` on a topic of its own, deleted afterwards."""
    with topics.temporary(target.bootstrap, experiment, point.partitions, point.replication_factor) as topic:
        spec = ProducerSpec(target.bootstrap, topic, point.record_size, records=point.records, config=point.producer_config)
        return measured_with_resources(target, topic, lambda: produce(spec))


def measured_with_resources(target: Target, topic: str, run: Callable[[], Measurement]) -> Measurement:
    """``run()``'s measurement with the CPU and memory used meanwhile and, on the local cluster, the topic's bytes on disk."""
    with resources.local_sampler(target.local, [os.getpid()]) as sampler:
        measured = run()
    usage = sampler.summary()
    if target.local is not None:
        usage["topic_disk_bytes"] = resources.topic_disk_bytes(target.local, topic)
    return replace(measured, resources=usage)


def warm_up(target: Target, experiment: str, point: ProducerPoint, seconds: float) -> None:
    """Run ``point`` unrecorded for at least ``seconds``, then until two runs in a row agree on records/s.

    Freshly started brokers get faster for the first 20-30 s of load (their
    JIT compiling the hot paths, most likely): measured on this project's CI machine, a
    fresh 3-broker cluster went from 48k to 160k records/s over 8 runs, while
    a new client against the warmed cluster started at 150k. Two cold runs can
    agree with each other, so agreement alone does not prove warmth; the
    minimum load comes first.
    """
    deadline = time.monotonic() + seconds
    previous = 0.0
    for _ in range(WARM_UP_MAX_RUNS):
        measured = measure_producer(target, experiment, point)
        rate = measured.records / measured.seconds
        if time.monotonic() >= deadline and previous and abs(rate - previous) <= WARM_UP_TOLERANCE * previous:
            return
        previous = rate


def run_producer_sweep(
    target: Target,
    run_dir: Path,
    experiment: str,
    points: Sequence[tuple[str, ProducerPoint]],
    repeats: int,
    warm_up_s: float,
) -> pd.DataFrame:
    """Measure every named point ``repeats`` times and return this experiment's records.

    Repeats are interleaved (all points once, then again) so a slow drift of the
    machine spreads over all points instead of biasing the last ones.
    """
    store = ResultStore.of_run(run_dir)
    env = environment.collect(target)
    warm_up(target, experiment, points[-1][1], warm_up_s)
    plan = [(repeat, name, point) for repeat in range(repeats) for name, point in points]
    for repeat, name, point in tqdm(plan, desc=experiment, unit="point"):
        measured = measure_producer(target, experiment, point)
        store.append(
            Result(
                run_id=Path(run_dir).name,
                experiment=experiment,
                point=name,
                repeat=repeat,
                params=point.params(),
                measurement=measured,
                environment=env,
            )
        )
    return store.load(experiment)


def batch_sweep(
    target: Target,
    run_dir: Path,
    *,
    batch_sizes: Sequence[int],
    records: int,
    record_size: int,
    linger_ms: int,
    acks: str,
    partitions: int,
    replication_factor: int,
    repeats: int,
    warm_up_s: float,
) -> pd.DataFrame:
    """Producer throughput and latency against ``batch.size``, unthrottled (S1.1 without its cap)."""
    points = [
        (
            f"batch.size={size}",
            ProducerPoint(
                records=records,
                record_size=record_size,
                partitions=partitions,
                replication_factor=replication_factor,
                producer_config={"batch.size": size, "linger.ms": linger_ms, "acks": acks},
            ),
        )
        for size in batch_sizes
    ]
    return run_producer_sweep(target, run_dir, "batch", points, repeats, warm_up_s)

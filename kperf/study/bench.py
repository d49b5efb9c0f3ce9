"""``kperf bench``: are kperf's own instruments good enough to trust?

Measured in one run, side by side, on the same topics and record sizes:
the Python producer (P processes) against Kafka's ProducerPerformance, the
Python consumer against ConsumerPerformance, both Python drivers against
librdkafka's own ``rdkafka_performance`` (the ceiling of a librdkafka client;
left out, with a note, where ``make rdkafka-perf`` has not built it), the
producer with and without latency recording and with and without its time
series, the producer and consumer through Dask workers (``--workers``) against
direct processes on the same host (what the scheduler in between costs), and
the producer's peak memory at a small and a large record count. Every kperf measurement is a real ``kperf produce|consume`` run
(so each also lands in ``data/adhoc``); the figures are ratios taken in one run,
never absolute speeds, because the machine is shared: each is the ratio of
the medians of interleaved repeats.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from kperf.drivers import rdkafka_performance
from kperf.errors import KperfError, MeasurementFailed
from kperf.exits import Exit
from kperf.kafka import topics
from kperf.kafka.target import Target
from kperf.paths import data_dir
from kperf.study.local_dask import LocalDask

RECORD_SIZES = (100, 1024)
PARTITIONS = 6


def kperf_json(*args: str) -> dict[str, Any]:
    """One ``kperf ... --json`` run in its own process (so its memory is its own)."""
    argv = [sys.executable, "-m", "kperf.cli", *args, "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode == Exit.FAILED:  # its measurement failed: so does bench's (exit FAILED, not ERROR)
        raise MeasurementFailed(f"bench run 'kperf {' '.join(args)}' failed: {result.stderr.strip()[-300:]}",
                                "bench run failed")
    if result.returncode != 0:
        raise KperfError(f"bench run 'kperf {' '.join(args)}' failed: {result.stderr.strip()[-300:]}")
    return json.loads(result.stdout)


Run = Callable[[], float]  # one measurement of one side of a comparison


def cli(key: str, *args: str) -> Run:
    """A run of ``kperf ARGS --json``, giving its ``key``; a failed measurement when the run has none (a fetch
    rate is given only from a span a rate may come from)."""
    def run() -> float:
        value = kperf_json(*args).get(key)
        if value is None:
            raise MeasurementFailed(f"bench run 'kperf {' '.join(args)}' gave no {key} (too short for a rate: more "
                                    "--records)", "bench run gave no rate")
        return float(value)
    return run


def ceiling_run(role: str, bootstrap: str, topic: str, records: int, size: int) -> Run:
    """A run of rdkafka_performance as ``role``, giving its records/s."""
    return lambda: rdkafka_performance.run(role, bootstrap, topic, records, size).records_per_s


def paired(repeats: int, ours: Run, theirs: Run) -> tuple[float, float]:
    """Medians over ``repeats`` runs of each side, interleaved so drift hits both alike."""
    values: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for side, measure in zip(values, (ours, theirs)):
            side.append(measure())
    return statistics.median(values[0]), statistics.median(values[1])


def row(comparison: str, setting: str, measure: str, medians: tuple[float, float]) -> dict[str, Any]:
    ours, theirs = medians
    return {
        "comparison": comparison,
        "setting": setting,
        "measure": measure,
        "first": ours,
        "second": theirs,
        "ratio": ours / theirs if theirs else float("nan"),
    }


@contextmanager
def dask_workers(address: str | None, threads: int) -> Iterator[str]:
    """The scheduler at ``address``, else one started here with one worker of ``threads`` threads (stopped after)."""
    if address is not None:
        yield address
        return
    local = LocalDask(data_dir() / "bench" / "dask")
    try:
        started = local.start_scheduler()
        local.start_worker("bench", threads=threads)
        yield started
    finally:
        local.stop()


def run(target: Target, records: int, rss_records: tuple[int, int], producers: int, repeats: int,
        workers: str | None = None) -> pd.DataFrame:
    """Every comparison of the module docstring as a table: medians of the repeats, ratio = first / second."""
    with dask_workers(workers, producers) as scheduler:
        return pd.DataFrame(_rows(target, records, rss_records, producers, repeats, scheduler))


def _rows(target: Target, records: int, rss_records: tuple[int, int], producers: int, repeats: int,
          scheduler: str) -> list[dict[str, Any]]:
    ceiling = rdkafka_performance.binary() is not None
    if not ceiling:
        print(f"kperf: bench leaves out rdkafka_performance: '{rdkafka_performance.MAKE_TARGET}' has not built it "
              "(it needs a C compiler and npm)", file=sys.stderr)
    rows = []
    for size in RECORD_SIZES:
        with topics.temporary(target.bootstrap, "bench", PARTITIONS, 1) as topic:
            rows += _size_rows(Sizing(target.bootstrap, topic, size, records, producers, repeats), scheduler, ceiling)
    with topics.temporary(target.bootstrap, "bench", PARTITIONS, 1) as topic:
        large, small = (["produce", "--bootstrap", target.bootstrap, "--topic", topic, "--records", str(n), "--record-size", "100"]
                        for n in (rss_records[1], rss_records[0]))
        rows.append(row("producer peak RSS: large vs small run", f"{rss_records[1]:,} vs {rss_records[0]:,} records of 100 B",
                        "MiB", paired(1, cli("res.client_rss_mib_max", *large), cli("res.client_rss_mib_max", *small))))
    return rows


@dataclass(frozen=True)
class Sizing:
    """What the comparisons of one record size run on: the topic, the records, the producer processes, the repeats."""

    bootstrap: str
    topic: str
    size: int
    records: int
    producers: int
    repeats: int


def _size_rows(s: Sizing, scheduler: str, ceiling: bool) -> list[dict[str, Any]]:
    """The comparisons at one record size: the clients, the ceiling (when built), the instruments, Dask."""
    produce = ["produce", "--bootstrap", s.bootstrap, "--topic", s.topic, "--records", str(s.records), "--record-size", str(s.size)]
    consume = ["consume", "--bootstrap", s.bootstrap, "--topic", s.topic, "--records", str(s.records)]
    many, java = [*produce, "--producers", str(s.producers)], ["--client", "java"]
    rows = [row("producer: python vs java", f"{s.size} B, {s.producers} python processes", "records/s",
                paired(s.repeats, cli("records_per_s", *many), cli("records_per_s", *produce, *java))),
            row("consumer: python vs java", f"{s.size} B, 1 consumer each", "records/s",
                paired(s.repeats, cli("records_per_s", *consume), cli("records_per_s", *consume, *java)))]
    if ceiling:
        tool = partial(ceiling_run, bootstrap=s.bootstrap, topic=s.topic, records=s.records, size=s.size)
        rows.append(row("producer: python vs rdkafka_performance", f"{s.size} B, {s.producers} python processes vs 1",
                        "records/s", paired(s.repeats, cli("records_per_s", *many), tool("producer"))))
        # The tool's clock runs from the first record read to the last: kperf's fetch rate is the same.
        rows.append(row("consumer: python vs rdkafka_performance", f"{s.size} B, 1 consumer each",
                        "records/s, first record to last",
                        paired(s.repeats, cli("fetch_records_per_s", *consume), tool("consumer"))))
    rows.append(row("producer: latency recording on vs off", f"{s.size} B, 1 process", "records/s",
                    paired(s.repeats, cli("records_per_s", *produce), cli("records_per_s", *produce, "--no-latency"))))
    rows.append(row("producer: time series on vs off", f"{s.size} B, 1 process", "records/s",
                    paired(s.repeats, cli("records_per_s", *produce), cli("records_per_s", *produce, "--no-series"))))
    rows.append(row("producer: dask workers vs direct processes", f"{s.size} B, {s.producers} processes", "records/s",
                    paired(s.repeats, cli("records_per_s", *many, "--workers", scheduler), cli("records_per_s", *many))))
    rows.append(row("consumer: dask workers vs direct processes", f"{s.size} B, 1 consumer each", "records/s",
                    paired(s.repeats, cli("records_per_s", *consume, "--workers", scheduler), cli("records_per_s", *consume))))
    return rows


def save(table: pd.DataFrame) -> Path:
    """Write the table under data/bench/ (atomically) and return its path."""
    folder = data_dir() / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench-{datetime.now():%Y%m%d-%H%M%S}.csv"
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path

"""``kperf bench``: are kperf's own instruments good enough to trust?

Measured in one run, side by side, on the same topics and record sizes: the native loops (one process) against
librdkafka's own ``rdkafka_performance`` (one process: the ceiling of a librdkafka client; left out, with a note,
where ``make rdkafka-perf`` has not built it) and against the Python loops, in records/s and in the client's CPU
seconds per million records (what a load host pays); the Python client (P processes) against Kafka's
ProducerPerformance and ConsumerPerformance; the producer with and without latency recording and with and without
its time series; the producer and consumer through Dask workers (``--workers``) against direct processes on the same
host (what the scheduler in between costs); a transactional producer committing once a second against an idempotent
one; one share-group member of kperf's against Kafka's
ShareConsumerPerformance with one (left out, with a note, on a cluster without share groups); the producer's
peak memory at a small and a large record count; and a producer on a local cluster with links against one without
(:mod:`kperf.study.bench_links`). Every kperf measurement is a real ``kperf produce|consume`` run
(so each also lands in ``data/adhoc``); the figures are ratios taken in one run, never absolute speeds, because the
machine is shared: each is the ratio of the medians of interleaved repeats, taken after one unrecorded run, each run
starting with the host's dirty pages written (the instruments' costs: both sides at once, see :func:`at_once`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from kperf.drivers import loops, rdkafka_performance, share_consumer_perf
from kperf.errors import KperfError, MeasurementFailed
from kperf.kafka import features, links, topics
from kperf.kafka.release import current_version
from kperf.kafka.target import Target
from kperf.paths import data_dir
from kperf.results import CLIENT_RSS_PEAK
from kperf.study import bench_links
from kperf.study.bench_runs import (
    PER_MILLION,
    Figures,
    Run,
    at_once,
    ceiling_run,
    cli,
    paired,
    row,
    settled,
)
from kperf.study.local_dask import LocalDask
from kperf.study.validation import GIB

RECORD_SIZES = (100, 1024)
# How long each side of an at-once comparison sends (:func:`at_once`): about as long as a comparison run of the
# default records takes here (5,000,000 records of 100 B at 600,000 a second, two producers sharing the brokers).
AT_ONCE_S = 10.0
# ... and repeats so many times the bench's: two producers at once on these brokers split them unevenly, a pair at a
# time (1 KB records, the bench of 2026-11-26 13:29: the pairs' rate ratios 0.91 to 1.09, their CPU a record within 4%).
AT_ONCE_REPEATS = 3
# The consumer against rdkafka_performance, in turns, repeats so many times the bench's, its ratio the median of
# back-to-back pairs': a native run reads 5,000,000 records of 100 B in under 3 s, so one slow spell of the host took two
# of three runs in the bench of 2026-11-26 13:35 (1,975,065 records/s, then 1,362,880 and 1,421,049 back to back).
CEILING_CONSUMER_REPEATS = 3
# The memory comparison's client queue bound besides librdkafka's default (100,000 records: the whole small run, filled
# only as far as its timing allows): one both runs fill, so the ratio is what kperf's own loop adds with the records.
QUEUE_BOUND = 20_000
# Its runs' series windows: a rate needs 1 s or two windows (kperf.validity), and one native consumer reads five
# million records of 100 B in under two seconds here, so half-second windows (a 1 s floor).
WINDOW = "0.5"
PARTITIONS = 6
# The share comparison reads this fraction of the records: a Python share member pays a Python call per record
# (there is no native share loop), so the whole count would add minutes to each size.
SHARE_FRACTION = 5
TRANSACTION_MS = 1000  # the transactional producer's transactions: one a second
TRANSACTION_WARMUP = 1000  # records each side of the transaction comparison sends before its clock


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


def check_disk(records: int, repeats: int, free: int) -> None:
    """Refuse, before any load, a bench whose topics would not fit ``free`` bytes of the brokers' disk: a producing
    comparison's topic takes 2 x ``repeats`` runs and a warm-up of the largest records (replication 1), and a deleted
    topic's files stay a minute (``log.segment.delete.delay.ms``) while the next comparison writes, so twice that is asked
    for. (Five repeats of five million records of 1 KB filled this machine's disk, and the brokers died.) An at-once
    comparison's topic holds what two producers send in ``repeats`` x ``AT_ONCE_S``: less here (1 KB at 250,000 records
    a second each), not checked."""
    topic = (2 * repeats + 1) * records * max(RECORD_SIZES)
    if 2 * topic > free:
        raise KperfError(f"bench: {repeats} repeats of {records:,} records need about {2 * topic / GIB:,.1f} GiB free "
                         f"on the brokers' disk (a comparison's topic holds {topic / GIB:,.1f} GiB, and a deleted one "
                         f"lingers a minute), {free / GIB:,.1f} GiB are free: fewer --repeats or --records")


def run(target: Target, records: int, rss_records: tuple[int, int], producers: int, repeats: int,
        workers: str | None = None) -> pd.DataFrame:
    """Every comparison of the module docstring as a table: medians of the repeats, ratio = first / second. On the
    local cluster, a bench its disk cannot hold is refused first (a user's brokers' disks are not seen from here),
    and the links' cost is measured last (on clusters of its own: left out, with a note, without toxiproxy)."""
    if target.local is not None:
        check_disk(records, repeats, shutil.disk_usage(target.local.directory).free)
    with dask_workers(workers, producers) as scheduler:
        rows = _rows(target, records, rss_records, producers, repeats, scheduler)
    if target.local is None:
        return pd.DataFrame(rows)
    try:
        links.server_path()
    except KperfError as exc:
        print(f"kperf: bench leaves out the links' cost: {exc}", file=sys.stderr)
        return pd.DataFrame(rows)
    return pd.DataFrame(rows + bench_links.rows(records, repeats))


def _rows(target: Target, records: int, rss_records: tuple[int, int], producers: int, repeats: int,
          scheduler: str) -> list[dict[str, Any]]:
    ceiling = rdkafka_performance.binary() is not None
    if not ceiling:
        print(f"kperf: bench leaves out rdkafka_performance: '{rdkafka_performance.MAKE_TARGET}' has not built it "
              "(it needs a C compiler and npm)", file=sys.stderr)
    sharing = _share_left_out(target.bootstrap)
    if sharing is not None:
        print(f"kperf: bench leaves out the share consumers: {sharing}", file=sys.stderr)
    loops.check_loop("native")  # both loops are compared: without the native build, say so before any load
    rows = []
    for size in RECORD_SIZES:
        sizing = Sizing(target.bootstrap, size, records, producers, repeats)
        rows += _size_rows(sizing, scheduler, ceiling)
        if sharing is None:
            rows += _share_rows(replace(sizing, records=max(1, records // SHARE_FRACTION)))
    for loop in loops.LOOPS:
        for settings, queue in (((), "default client queue"),
                                (("-X", f"queue.buffering.max.messages={QUEUE_BOUND}"), f"queue of {QUEUE_BOUND:,}")):
            with _topic(target.bootstrap) as topic:
                # Peak memory needs no rate: a small run too short for one still has its peak (allow_failed). The
                # load process's own high-water mark, not a sample: a run of a fraction of a second has few samples.
                # Repeated as the rates are: one large native run peaked at 85 MiB, the next at 100 here.
                large, small = (cli("produce", "--bootstrap", target.bootstrap, "--topic", topic, "--records", str(n),
                                    "--record-size", "100", "--loop", loop, *settings, allow_failed=True)
                                for n in (rss_records[1], rss_records[0]))
                rows.append(row("producer peak RSS: large vs small run",
                                f"{rss_records[1]:,} vs {rss_records[0]:,} records of 100 B, {loop} loop, {queue}",
                                "MiB", paired(repeats, large, small, warm_up=False), CLIENT_RSS_PEAK))
    return rows


def _share_left_out(bootstrap: str) -> str | None:
    """Why the share comparison cannot run (None: it can): a cluster without share groups, or a Kafka release
    whose ShareConsumerPerformance kperf cannot drive."""
    # An unreachable cluster or a Kafka release kperf cannot name is an error of its own, not a note.
    features.of(bootstrap)
    release = current_version()
    try:
        features.require(bootstrap, features.SHARE_GROUPS)
        share_consumer_perf.check(1, "implicit", release)
    except KperfError as exc:
        return str(exc)
    return None


def _share_rows(s: Sizing) -> list[dict[str, Any]]:
    """One share-group member each, accepting implicitly, on a topic filled once: each run in a new share group
    that reads it from the beginning. Both rates run from the group's first delivery."""
    share = s.consuming(lambda t: s.consume(t, "--share"), lambda t: s.consume(t, "--share", "--client", "java"))
    setting = f"{s.size} B, {s.records:,} records, 1 member each, implicit acknowledgement"
    return [row("share consumer: python vs java", setting, "records/s, first delivery to last", share, "records_per_s")]


def _topic(bootstrap: str) -> AbstractContextManager[str]:
    """A fresh topic for one comparison, deleted after it: disk holds one comparison's records at a time (five
    million records of 1 KB, six runs of them, are 30 GB)."""
    return topics.temporary(bootstrap, "bench", PARTITIONS, 1)


@dataclass(frozen=True)
class Sizing:
    """What the comparisons of one record size run: the records, the producer processes, the repeats."""

    bootstrap: str
    size: int
    records: int
    producers: int
    repeats: int

    def produce(self, topic: str, *more: str, seconds: float | None = None, allow_failed: bool = False) -> Run:
        """A producer run of this size's records, or of ``seconds`` (for :func:`at_once`)."""
        bound = ("--records", str(self.records)) if seconds is None else ("--duration", str(seconds))
        return cli("produce", "--bootstrap", self.bootstrap, "--topic", topic, *bound,
                   "--record-size", str(self.size), "--window", WINDOW, *more, allow_failed=allow_failed)

    def fill(self, topic: str) -> None:
        """This size's records written to ``topic`` for consumers to read: a run too short for a rate (a million
        records of 100 B in under a second) still wrote them, and only the count is checked."""
        written = self.produce(topic, allow_failed=True)()
        if written.get("records", 0) < self.records:
            raise MeasurementFailed(f"bench: filling {topic} wrote {written.get('records', 0):,.0f} of "
                                    f"{self.records:,} records", "bench run failed")

    def consume(self, topic: str, *more: str) -> Run:
        return cli("consume", "--bootstrap", self.bootstrap, "--topic", topic, "--records", str(self.records),
                   "--window", WINDOW, *more)

    def producing(self, ours: Callable[[str], Run], theirs: Callable[[str], Run]) -> tuple[list[Figures], list[Figures]]:
        """Producers compared on a fresh topic."""
        with _topic(self.bootstrap) as topic:
            return paired(self.repeats, settled(ours(topic)), settled(theirs(topic)))

    def together(self, ours: Callable[[str], Run], theirs: Callable[[str], Run]) -> tuple[list[Figures], list[Figures]]:
        """Producers run at once on one fresh topic (:func:`at_once`, ``AT_ONCE_REPEATS`` times the repeats), each
        repeat after the host's dirty pages are written (:func:`settled`)."""
        with _topic(self.bootstrap) as topic:
            return at_once(AT_ONCE_REPEATS * self.repeats, ours(topic), theirs(topic), os.sync)

    def consuming(self, ours: Callable[[str], Run], theirs: Callable[[str], Run],
                  times: int = 1) -> tuple[list[Figures], list[Figures]]:
        """Consumers compared on a fresh topic, filled once with the records each run reads from its beginning;
        ``times`` the repeats."""
        with _topic(self.bootstrap) as topic:
            self.fill(topic)
            return paired(times * self.repeats, settled(ours(topic)), settled(theirs(topic)))


def _size_rows(s: Sizing, scheduler: str, ceiling: bool) -> list[dict[str, Any]]:
    """The comparisons at one record size: the loops, the ceiling (when built), the stock tools, the instruments,
    Dask. Every run names its loop: a host without the native build is refused before any load (:func:`_rows`)."""
    native, python, java = ["--loop", "native"], ["--loop", "python"], ["--client", "java"]
    many = ["--producers", str(s.producers)]
    one, cpu = f"{s.size} B, 1 process each", "client CPU-s per million records"
    rows = []
    if ceiling:
        tool = partial(ceiling_run, bootstrap=s.bootstrap, records=s.records, size=s.size)
        produced = s.producing(lambda t: s.produce(t, *native), lambda t: tool("producer", topic=t))
        rows += [row("producer: native vs rdkafka_performance", one, "records/s", produced, "records_per_s"),
                 row("producer: native vs rdkafka_performance", one, cpu, produced, PER_MILLION)]
        # The tool's clock runs from the first record read to the last: kperf's fetch rate is the same.
        consumed = s.consuming(lambda t: s.consume(t, *native), lambda t: tool("consumer", topic=t),
                               CEILING_CONSUMER_REPEATS)
        paired_one = f"{one}, in turns, ratio: median of pairs'"
        rows += [row("consumer: native vs rdkafka_performance", paired_one, "records/s, first record to last", consumed,
                     "fetch_records_per_s", pairs=True),
                 row("consumer: native vs rdkafka_performance", paired_one, cpu, consumed, PER_MILLION, pairs=True)]
    produced = s.producing(lambda t: s.produce(t, *native), lambda t: s.produce(t, *python))
    consumed = s.consuming(lambda t: s.consume(t, *native), lambda t: s.consume(t, *python))
    rows += [row("producer: native vs python loop", one, "records/s", produced, "records_per_s"),
             row("producer: native vs python loop", one, cpu, produced, PER_MILLION),
             row("consumer: native vs python loop", one, "records/s, first record to last", consumed, "fetch_records_per_s"),
             row("consumer: native vs python loop", one, cpu, consumed, PER_MILLION)]
    # The rest with the native loop (asked for, so the rows say what ran): the client against Kafka's tools, what
    # its instruments cost, and Dask in between.
    n = f"native loop, {s.producers} processes"
    rows += [row("producer: python vs java", f"{s.size} B, {n} vs 1", "records/s",
                 s.producing(lambda t: s.produce(t, *native, *many), lambda t: s.produce(t, *java)), "records_per_s"),
             row("consumer: python vs java", f"{s.size} B, native loop, 1 consumer each", "records/s",
                 s.consuming(lambda t: s.consume(t, *native), lambda t: s.consume(t, *java)), "records_per_s")]
    for what, option in (("latency recording", "--no-latency"), ("time series", "--no-series")):
        # Its rate and its CPU a record, both sides at once: the rate moves with the brokers on the same cores.
        onoff = s.together(lambda t: s.produce(t, *native, seconds=AT_ONCE_S),
                           lambda t: s.produce(t, *native, option, seconds=AT_ONCE_S))
        setting = f"{s.size} B, native loop, 1 process each, at once for {AT_ONCE_S:g} s, ratio: median of pairs'"
        rows += [row(f"producer: {what} on vs off", setting, measure, onoff, key, pairs=True)
                 for measure, key in (("records/s", "records_per_s"), (cpu, PER_MILLION))]
    rows += _transaction_rows(s)
    dask = ["--workers", scheduler]
    rows.append(row("producer: dask workers vs direct processes", f"{s.size} B, {n}", "records/s",
                    s.producing(lambda t: s.produce(t, *native, *many, *dask), lambda t: s.produce(t, *native, *many)),
                    "records_per_s"))
    rows.append(row("consumer: dask workers vs direct processes", f"{s.size} B, native loop, 1 consumer each", "records/s",
                    s.consuming(lambda t: s.consume(t, *native, *dask), lambda t: s.consume(t, *native)), "records_per_s"))
    return rows


def _transaction_rows(s: Sizing) -> list[dict[str, Any]]:
    """A transactional producer committing once a second against an idempotent one (what exactly-once costs a
    producer that commits rarely), in turns, each sending for ``AT_ONCE_S`` (about ten transactions), each after
    warm-up records: an idempotent producer's first records wait for its producer id inside its clock otherwise
    (a transactional one gets it before, initialising its transactions)."""
    native = ["--loop", "native", "-X", "acks=all", "-X", "enable.idempotence=true", "--warmup-records",
              str(TRANSACTION_WARMUP)]
    runs = s.producing(lambda t: s.produce(t, *native, "--transaction-ms", str(TRANSACTION_MS), seconds=AT_ONCE_S),
                       lambda t: s.produce(t, *native, seconds=AT_ONCE_S))
    # The ratio of each back-to-back pair: records of 1 KB come faster than this disk writes, so the brokers' pace
    # drifts from pair to pair (kperf.study.bench.row).
    setting = f"{s.size} B, native loop, 1 process each, {AT_ONCE_S:g} s each, in turns, ratio: median of pairs'"
    return [row("producer: transactional (1 s transactions) vs idempotent", setting, "records/s", runs, "records_per_s",
                pairs=True)]


def save(table: pd.DataFrame) -> Path:
    """Write the table under data/bench/ (atomically) and return its path."""
    folder = data_dir() / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bench-{datetime.now():%Y%m%d-%H%M%S}.csv"
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False)
    os.replace(tmp, path)
    return path

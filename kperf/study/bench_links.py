"""``kperf bench``'s links comparison: what the proxies of ``kperf cluster up --links`` (the link faults' way in,
:mod:`kperf.kafka.links`) cost while no fault is active. Two local clusters alike but for the proxies, each started
for the comparison in a folder of its own under ``data/bench`` and stopped after; the same producer on each, in turns
(:func:`kperf.study.bench_runs.paired`): unthrottled (its records/s) and paced (its acknowledgement p99)."""

from __future__ import annotations

import shutil
from contextlib import ExitStack
from typing import Any

from kperf.errors import KperfError
from kperf.kafka import links, topics
from kperf.kafka.cluster import LocalCluster
from kperf.paths import data_dir
from kperf.study.bench_runs import Run, cli, paired, row
from kperf.study.validation import GIB

PARTITIONS = 6
SIZE = 100
PACED_RATE = 20_000  # records/s: well under what either cluster takes here, so the latency is not a queue's
PACED_S = 10.0


def rows(records: int, repeats: int) -> list[dict[str, Any]]:
    """The linked cluster against the plain one: a producer's rate unthrottled, and its ack p99 paced. Refused
    before any cluster starts without toxiproxy, or where the two clusters' topics would not fit the disk twice."""
    links.server_path()
    writes = (repeats + 1) * (records + PACED_RATE * PACED_S) * SIZE  # a side's topic: its runs and warm-up
    free = shutil.disk_usage(data_dir()).free
    if 2 * 2 * writes > free:
        raise KperfError(f"bench: the links' comparison needs about {4 * writes / GIB:,.1f} GiB free under "
                         f"{data_dir()}, {free / GIB:,.1f} GiB are: fewer --repeats or --records")
    with ExitStack() as stack:
        plain, linked = LocalCluster(3, directory=data_dir() / "bench" / "plain"), \
            LocalCluster(3, directory=data_dir() / "bench" / "linked", links=True)
        for cluster in (plain, linked):
            stack.callback(cluster.stop, purge=True)  # its data goes with it: a bench's disk holds one comparison
            cluster.start()
        bootstraps = (linked.bootstrap, plain.bootstrap)
        names = [stack.enter_context(topics.temporary(b, "bench-links", PARTITIONS, 1)) for b in bootstraps]

        def producer(i: int, *bound: str) -> Run:
            return cli("produce", "--bootstrap", bootstraps[i], "--topic", names[i], "--record-size", str(SIZE),
                       "--loop", "native", *bound)

        producer(1, "--records", str(records))()  # the plain cluster's fresh topic warmed up too (paired warms the first)
        unthrottled = paired(repeats, producer(0, "--records", str(records)), producer(1, "--records", str(records)))
        paced = ("--throughput", str(PACED_RATE), "--duration", str(PACED_S))
        latency = paired(repeats, producer(0, *paced), producer(1, *paced), warm_up=False)
    setting = f"{SIZE} B, 3 brokers, rf 1, {PARTITIONS} partitions, native loop"
    return [row("cluster: with links vs without", f"{setting}, {records:,} records unthrottled", "records/s",
                unthrottled, "records_per_s", pairs=True),
            row("cluster: with links vs without", f"{setting}, {PACED_RATE:,} records/s for {PACED_S:g} s",
                "ack p99 ms", latency, "latency_ack_p99_ms", pairs=True)]

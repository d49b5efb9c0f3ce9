"""Bytes on disk and the brokers' resources against a real broker.

(The sampler against real processes needs no cluster: tests/unit/test_resource_sampler.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from kperf.drivers.load_hosts.local import together_here
from kperf.drivers.resources import MIB, is_kafka_server, local_sampler, topic_disk_bytes
from kperf.kafka import clients, topics
from tests.helpers import local_cluster


def _rss(proc: psutil.Process) -> int | None:
    try:
        return int(proc.memory_info().rss)
    except psutil.NoSuchProcess:
        return None


@pytest.mark.cluster
def test_topic_bytes_on_disk_and_broker_resources(tmp_path: Path) -> None:
    with local_cluster(1, tmp_path / "cluster") as cluster:
        state = cluster.state
        assert state is not None
        bootstrap = cluster.bootstrap
        topics.create(bootstrap, "t", 2, 1)
        topics.create(bootstrap, "t-x", 1, 1)  # "t-x-0" must not count as a partition of "t"
        producer = clients.producer(bootstrap, {"acks": "all"})
        here = psutil.Process()
        workers = set(together_here([os.getpid, os.getpid]))  # kept after: helpers of this process while it samples
        assert workers <= {p.pid for p in here.children(recursive=True)}
        with local_sampler(state, [os.getpid()]) as sampler:
            for i in range(1000):
                producer.produce("t", os.urandom(1000), partition=i % 2)
            for _ in range(300):
                producer.produce("t-x", os.urandom(1000))
            assert producer.flush(30) == 0
        # Random payloads do not compress; record and batch headers add little.
        assert 1000 * 1000 <= topic_disk_bytes(state, "t") < 1.2e6
        assert 300 * 1000 <= topic_disk_bytes(state, "t-x") < 0.36e6
        assert topic_disk_bytes(state, "x") == 0
        summary = sampler.summary()
        assert summary["broker_cpu_pct"] > 0, summary
        assert summary["broker_rss_mib_max"] > 100, summary
        # The broker JVM is a child of this process, yet no client: counting it would add the broker's RSS to
        # that of this process and its other children (kperf's helpers: the fork server, the kept workers of a
        # group of runs), which late in a test session can exceed a fresh broker's.
        tree_mib = sum(rss for p in [here, *here.children(recursive=True)] if not is_kafka_server(p)
                       if (rss := _rss(p)) is not None) / MIB
        assert 10 < summary["client_rss_mib_max"] < tree_mib + summary["broker_rss_mib_max"] / 2, (summary, tree_mib)

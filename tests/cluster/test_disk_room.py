"""A long run's disk guard on a real local cluster: a run its brokers' disk cannot hold is refused before load, and
what a topic's retention bounds is read from the topic."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kperf.drivers.specs import ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import topics
from kperf.kafka.cluster import ClusterState
from kperf.kafka.target import Target
from kperf.paths import data_dir
from kperf.study import adhoc
from tests.helpers import SESSION_CLUSTER_ENV

pytestmark = pytest.mark.cluster
MIB = 1024 * 1024


def local_target(bootstrap: str) -> Target:
    """``bootstrap`` as kperf's local cluster (its folder, so its disk, known): the session's cluster, which kperf
    otherwise takes for a user's (conftest.py), or the default local one."""
    session = os.environ.get(SESSION_CLUSTER_ENV)
    for folder in [*([Path(session)] if session else []), data_dir() / "cluster"]:
        state = ClusterState.load(folder)
        if state is not None and state.running() and state.bootstrap == bootstrap:
            return Target(bootstrap, len(state.brokers), local=state)
    pytest.skip("the brokers' disk is seen on a local cluster only")


def test_a_run_its_brokers_disk_cannot_hold_is_refused_before_load_and_retention_bounds_it(bootstrap: str) -> None:
    target = local_target(bootstrap)
    assert target.local is not None
    free = shutil.disk_usage(target.local.directory).free
    retention = {"retention.bytes": str(MIB), "segment.bytes": str(MIB)}
    with topics.temporary(bootstrap, "disk", 3, 1) as unbounded, \
            topics.temporary(bootstrap, "disk", 3, 1, retention) as bounded:
        # 1 MB/s for long enough to write twice what is free, with nothing to bound it.
        spec = ProducerSpec(bootstrap, unbounded, 1_000, duration_s=2 * free / 1e6, rate=1_000)
        with pytest.raises(KperfError, match=rf"^this run may write .* set retention.bytes on {unbounded}, or run "):
            adhoc.run_produce(target, spec, "python")
        assert topics.held(bootstrap, unbounded) == 0  # refused before any record was sent
        assert topics.disk_bound(bootstrap, unbounded, 1e6) == 1e6  # one replica of each record
        # At most what retention keeps, and one open segment, per partition.
        assert topics.disk_bound(bootstrap, bounded, 2 * free) == 3 * (MIB + MIB)

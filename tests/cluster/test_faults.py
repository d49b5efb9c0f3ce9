"""The fault experiment: a broker really killed (SIGKILL) and restarted under a steady producer, and its sums."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kperf.drivers import faults, latency
from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.producer import ProducerReport
from kperf.drivers.specs import ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import topics
from kperf.kafka.cluster import ClusterState, LocalCluster
from kperf.study import profiles


def report(acks: list[tuple[int, int, float, float]], finished: float) -> ProducerReport:
    empty = latency.Recorder().encode()
    return ProducerReport(acked=len(acks), bytes=100 * len(acks), started=0.0, finished=finished, errors={},
                          ack_histogram=empty, intended_histogram=empty, acks=tuple(acks))


def test_an_acknowledged_record_not_read_back_is_lost_and_waits_are_per_partition() -> None:
    # Partition 0 acks every 0.1 s except 2.0-5.0 s (the kill is at 2.0); partition 1 never stops.
    acks = [(i, 0, t, t - 0.01) for i, t in enumerate(np.r_[np.arange(0.1, 2.0, 0.1), np.arange(5.0, 8.0, 0.1)])]
    acks += [(len(acks) + i, 1, t, t - 0.01) for i, t in enumerate(np.arange(0.1, 8.0, 0.1))]
    ledger = SequenceLedger()
    for sequence, *_ in acks:
        if sequence != 3:  # acknowledged, yet not in the topic
            ledger.add(7, sequence)
    ledger.add(7, 3_000)  # in the topic, never acknowledged (a failed send that was written): not a loss
    ledger.add(7, 5)  # read twice
    m = faults.outage(report(acks, finished=8.0), 7, ledger, faults.Timeline(2.0, 3.5, 4.0, 6.5))
    assert m.measures["acked_lost"] == 1 and m.measures["duplicated"] == 1
    assert m.verification is not None and not m.verification.ok
    assert m.measures["no_ack_s"] == pytest.approx(3.0, abs=0.11)  # partition 0's gap, not the merged stream's
    assert (m.measures["isr_shrink_s"], m.measures["isr_recovery_s"]) == (1.5, 2.5)
    assert m.measures["rate_before"] == 20 and m.measures["rate_min_after_kill"] == 10


def test_a_broker_not_on_this_host_cannot_be_killed() -> None:
    with pytest.raises(KperfError, match=r"broker 4 \(port 1\) is not a Kafka process on this host"):
        faults.find_broker(4, 1)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"clients": ["java"]}, "runs the python client only"),
        ({"replication_factor": 1}, "must be at least 2"),
        ({"kill_at_s": 12.0, "restart_at_s": 10.0}, "'faults.kill_at_s' < 'faults.restart_at_s' < 'faults.duration_s'"),
    ],
)
def test_impossible_fault_settings_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(KperfError, match=message):
        profiles.parameters("faults", "smoke", **overrides)


@pytest.mark.cluster
def test_acks_all_loses_nothing_when_a_leader_is_killed_and_acks_1_is_measured(tmp_path: Path) -> None:
    with LocalCluster(3, directory=tmp_path / "cluster") as cluster:
        bootstrap = cluster.bootstrap
        measured = {}
        for acks, config in (("all", {"acks": "all", "enable.idempotence": True}), ("1", {"acks": "1"})):
            topic = f"fault-{acks}"
            topics.create(bootstrap, topic, 3, 3, {"min.insync.replicas": "2"})
            spec = ProducerSpec(bootstrap, topic, 200, records=1_000 * 18, rate=1_000, config=config)
            measured[acks] = faults.broker_failure(spec, faults.Fault(kill_at_s=4.0, restart_at_s=15.0), replicas=3)
            print(acks, measured[acks].measures)  # the README quotes runs of this test
        state = ClusterState.load(tmp_path / "cluster")
        assert state is not None and len(state.running()) == 3  # the restarted brokers are recorded
        restarted = state.running()
    assert not any(p.is_running() for p in restarted)  # and stopped with the cluster

    safe = measured["all"]
    assert safe.measures["acked_lost"] == 0 and safe.verification is not None and safe.verification.ok
    assert safe.records == 18_000 and safe.errors == {}  # nothing failed: the producer waited and retried
    # When Kafka notices the dead broker is its own business: broker.session.timeout.ms (9 s), longer when the
    # killed node was the active controller, and longer still on a busy machine (CI once saw no shrink in 11 s).
    # So the ISR shrank between kill and restart or not at all (nan, as the report says); it is full again after.
    shrink = safe.measures["isr_shrink_s"]
    assert np.isnan(shrink) or 0 < shrink < 15.0 - 4.0  # before the restart (a check that began before it)
    assert safe.measures["isr_recovery_s"] > 0
    assert safe.measures["no_ack_s"] > 1  # acks=all waits for the dead replica until it is fenced
    risky = measured["1"]
    assert risky.records + risky.measures["failed_sends"] == 18_000
    assert risky.measures["acked_lost"] >= 0 and not np.isnan(risky.measures["isr_recovery_s"])

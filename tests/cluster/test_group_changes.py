"""A consumer group changed under load on a real cluster (kperf.drivers.group_changes): KIP-848's consumer protocol
rebalancing on a join, a leave and a kill, measured; a change that could not recover refused before load."""

from __future__ import annotations

import math

import pytest

from kperf.drivers import group_changes
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.kafka import groups, topics
from kperf.load import GroupChange

RATE, PARTITIONS = 2_000, 4
# Load past the change's own time to recover: a joining member's clock starts once its process subscribed, seconds
# after the change's time on a loaded machine, and recovery counts only while the producer still sends.
STARTUP_SLACK_S = 5.0


@pytest.mark.parametrize(("event", "recover_s"), [("join", 12.0), ("leave", 12.0), ("kill", 20.0)])
def test_the_consumer_protocols_rebalance_is_measured_and_the_group_reads_everything(
        bootstrap: str, event: str, recover_s: float) -> None:
    change = GroupChange(event, 2, 3.0, recover_s)
    floor = groups.session_timeout_floor(bootstrap)
    with topics.temporary(bootstrap, "rebalance", PARTITIONS, 3) as topic:
        producer = ProducerSpec(bootstrap, topic, 100, records=int(RATE * (change.at_s + recover_s + STARTUP_SLACK_S)), rate=RATE,
                                config={"acks": "all"})
        measured = group_changes.run(producer, ConsumerSpec(bootstrap, topic, config={"group.protocol": "consumer"}),
                                     change, PARTITIONS)
    m = measured.measures
    assert measured.failure is None and measured.records >= producer.records  # every record read (some again)
    assert m["session_timeout_ms"] == floor and m["members"] == 2
    assert m["form_s"] > 0 and 0 < m["rebalance_s"] <= recover_s and 0 <= m["recovered_s"] <= recover_s
    assert 0 < m["pause_s"] <= max(m["rebalance_s"], m["recovered_s"])
    assert m["lag_peak_records"] >= 0 and m["lag_calm_records"] > 0  # a calm group commits a second behind
    if event == "kill":  # its partitions waited for the session time-out: at least from the member's last heartbeat
        assert m["lag_peak_records"] > m["lag_calm_records"]
    assert (event == "join") == ("join_s" in m) and (event != "join" or not math.isnan(m["join_s"]))
    series = measured.series
    assert series is not None and sum(series.records) == measured.records
    assert "group_lag_records" in series.resources


def test_a_kill_given_less_time_than_the_session_timeout_is_refused_before_load(bootstrap: str) -> None:
    floor = groups.session_timeout_floor(bootstrap)
    change = GroupChange("kill", 2, 3.0, floor / 1000)
    producer = ProducerSpec(bootstrap, "never-made", 100, records=RATE * 60, rate=RATE)
    with pytest.raises(KperfError, match=rf"session time-out \({floor} ms on this cluster\)"):
        group_changes.run(producer, ConsumerSpec(bootstrap, "never-made"), change, PARTITIONS)

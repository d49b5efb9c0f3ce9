"""kperf capacity against a real local cluster: a load far below capacity, one far above, a backlog that drains
(every record read back by sequence number) and one that cannot drain before its time-out."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kperf.capacity import run, workload
from kperf.kafka.target import connect
from kperf.results import ResultStore
from tests.helpers import ROOT, kperf

pytestmark = pytest.mark.cluster

BELOW = """\
name: below
topic: {partitions: 3, replication_factor: 3, min_insync_replicas: 2}
producer: {acks: all, linger_ms: 5}
record: {size: 200}
keys: {count: 100}
rate: {records_per_s: 300}
consumers: [{group: readers}]
duration_s: 3
window_s: 0.5
warm_up_s: 2
slo:
  produce_latency: {percentile: 99, max_ms: 5000}
  end_to_end_latency: {percentile: 99, max_ms: 8000}
  consumer_lag: {max_records: 3000}
headroom: {trial_s: 2, max_trials: 2, max_factor: 2}
catch_up: {backlog_records: 20000, timeout_s: 20}
"""
ABOVE = """\
name: above
topic: {partitions: 1, replication_factor: 1}
producer: {acks: all}
record: {size: 1000}
rate: {records_per_s: 200000}
consumers: [{group: readers}]
duration_s: 1
window_s: 0.25
warm_up_s: 0
slo:
  produce_latency: {percentile: 99, max_ms: 1}
headroom: {enabled: false}
catch_up: {backlog_records: 300000, timeout_s: 1}
"""


def measured(bootstrap: str, text: str) -> tuple[Path, dict]:
    with connect(bootstrap) as target:
        return run.measure(target, workload.parse(text, live_brokers=target.brokers))


def test_a_load_far_below_capacity_meets_every_slo_with_headroom_and_drains_its_backlog(bootstrap: str) -> None:
    folder, found = measured(bootstrap, BELOW)
    assert [s["name"] for s in found["sustain"] if not s["met"]] == []
    assert {s["name"] for s in found["sustain"]} == {"produce latency p99", "end-to-end latency p99",
                                                     "consumer lag", "acknowledged records lost"}
    assert found["headroom"]["low"] is not None and found["headroom"]["low"] / found["headroom"]["target"] > 1
    assert found["sentence"].startswith("Yes: this cluster carried below at its target of 300 records/s")
    catch_up = found["catch_up"]
    assert catch_up["caught_up"] and catch_up["seconds"] <= 20 and catch_up["every_record_read"]
    records = ResultStore.of_run(folder).load()
    read = records[(records["param.phase"] == "catch-up") & (records["role"] == "consumer")].iloc[0]
    written = catch_up["backlog_records"] + records[(records["param.phase"] == "catch-up")
                                                    & (records["role"] == "producer")].iloc[0]["records"]
    # Every backlog record (and every one written meanwhile) read once, by producer id and sequence number.
    assert (read["missing"], read["duplicated"], read["records"]) == (0, 0, written)
    assert set(records["param.phase"]) == {"sustain", "headroom", "catch-up"}
    assert (folder / run.VERDICT_FILE).is_file()


def test_a_load_far_above_capacity_fails_naming_the_slo_and_a_backlog_that_cannot_drain_times_out(bootstrap: str) -> None:
    _, found = measured(bootstrap, ABOVE)
    failed = [s["name"] for s in found["sustain"] if not s["met"]]
    assert "produce latency p99" in failed
    assert found["sentence"].startswith("No: at its target of 200,000 records/s this cluster missed")
    assert "produce latency p99" in found["sentence"] and "headroom" not in found
    catch_up = found["catch_up"]
    assert not catch_up["caught_up"] and math.isnan(catch_up["seconds"]) and catch_up["lag_at_timeout"] > 0
    assert "did not catch up with a backlog of" in found["sentence"] and "within the 1 s time-out" in found["sentence"]


def test_a_bad_workload_file_is_one_line_before_any_load_and_nothing_is_recorded(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BELOW.replace("{records_per_s: 300}", "{records_per_s: -3}"))
    result = kperf(tmp_path / "data", "capacity", str(bad))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"kperf: error: {bad}:6: rate.records_per_s: -3 must be above 0"]
    assert not (tmp_path / "data").exists()
    example = kperf(tmp_path / "data", "capacity", str(ROOT / "examples" / "nope.yaml"))
    assert example.returncode == 1 and "cannot read workload file" in example.stderr


def test_a_paced_producer_far_behind_schedule_gives_up_and_counts_what_it_did_not_send(bootstrap: str) -> None:
    from kperf.drivers.producer import GAVE_UP, ProducerSpec, produce
    from kperf.kafka import topics

    with topics.temporary(bootstrap, "giveup", 1, 1) as topic:
        sent = produce(ProducerSpec(bootstrap, topic, 100, duration_s=3, rate=5_000_000, give_up_behind_s=0.5))
    assert sent.errors.get(GAVE_UP, 0) > 0
    assert sent.records + sent.errors[GAVE_UP] == 15_000_000  # every record due in the 3 s: sent or counted unsent
    assert sent.records < 1_500_000  # it stopped: one process sending all 15 million would take minutes


SATURATION = """\
name: saturation
topic: {partitions: 1, replication_factor: 1}
producer: {acks: "1", linger_ms: 5}
record: {size: 100}
rate: {records_per_s: 10000}
duration_s: 2
window_s: 0.25
warm_up_s: 2
headroom: {trial_s: 2, max_trials: 12, max_factor: 32, resolution: 2}
"""


def test_the_searched_limit_agrees_with_the_throughput_experiments_saturation(bootstrap: str) -> None:
    """The same settings, measured both ways in one test: the throughput experiment's sweep of offered load (its
    Python point: a paced producer, its saturation by fit.load_curve) and the capacity search with no SLO but
    keeping up (the same 95% rule) on the same x2 grid: the two intervals overlap or touch."""
    from kperf.analysis import fit
    from kperf.drivers.producer import ProducerSpec, produce
    from kperf.kafka import topics

    rates = [2500.0 * 2**k for k in range(8)]  # 2,500 to 320,000 records/s; the search steps x2 from 10,000
    achieved, latency = [], []
    for rate in rates:
        with topics.temporary(bootstrap, "saturation", 1, 1) as topic:
            m = produce(ProducerSpec(bootstrap, topic, 100, duration_s=2, rate=rate, config={"acks": "1", "linger.ms": "5"}))
        achieved.append(m.records_per_s)
        latency.append(m.latency_ms["intended"]["p99"])
    curve = fit.load_curve(rates, achieved, latency)
    assert curve.saturated and curve.saturation_rate is not None, curve.reason
    above = min(r for r in rates if r > curve.saturation_rate)
    _, found = measured(bootstrap, SATURATION)
    low, high = found["headroom"]["low"], found["headroom"]["high"]
    assert low is not None and high is not None, found["headroom"]["note"]
    # Closed at the shared grid rate: a rate within the noise of the limit is decided either way by two separate
    # measurements (CI: the sweep fell short at 80,000/s, plateau 86,000, while the search kept up there), and the
    # intervals then touch at it; a full grid step apart fails.
    assert max(low, curve.saturation_rate) <= min(high, above), (low, high, curve.saturation_rate, above, achieved)


FAILURE = """\
name: failure
topic: {partitions: 3, replication_factor: 3, min_insync_replicas: 2}
producer: {acks: all, idempotence: true}
record: {size: 200}
rate: {records_per_s: 500}
duration_s: 2
window_s: 0.5
warm_up_s: 0
slo:
  produce_latency: {percentile: 99, max_ms: 60000}
headroom: {enabled: false}
broker_failure: {kill_at_s: 3, restart_at_s: 13, duration_s: 18}
"""


def test_a_broker_killed_during_the_workload_loses_no_acknowledged_record_with_acks_all(tmp_path: Path) -> None:
    from kperf.kafka.cluster import LocalCluster

    with LocalCluster(3, directory=tmp_path / "cluster") as cluster:  # its own: a killed broker must not disturb others
        folder, found = measured(cluster.bootstrap, FAILURE)
    failure = found["broker_failure"]
    assert failure["lost"] == 0 and failure["acked"] > 0 and failure["no_ack_s"] > 0
    assert [s["name"] for s in failure["slos"]] == ["acknowledged records lost", "produce latency p99 after the kill"]
    assert "with a broker killed it lost none of the" in found["sentence"]
    records = ResultStore.of_run(folder).load()
    assert set(records["param.phase"]) == {"sustain", "broker failure"}

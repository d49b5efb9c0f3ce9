"""The share-groups experiment's grid (kperf.experiments.share_groups), planned without a cluster: which points each
client measures, what each records, and the parameters refused before load."""

from __future__ import annotations

import pytest

from kperf.errors import KperfError
from kperf.study import experiment, plan, profiles

SMOKE = profiles.parameters("share_groups", "smoke")


def test_share_consumers_go_past_the_partitions_and_a_consumer_group_stops_at_them() -> None:
    points = experiment.get("share_groups").points(SMOKE)
    scaling = [p for p in points if p.params["part"] == "scaling"]
    shared = sorted(p.params["consumers"] for p in scaling if p.params["group_type"] == "share")
    grouped = sorted(p.params["consumers"] for p in scaling if p.params["group_type"] == "consumer")
    assert shared == SMOKE["consumer_counts"] and max(shared) > SMOKE["partitions"]
    assert grouped == [c for c in SMOKE["consumer_counts"] if c <= SMOKE["partitions"]]
    assert all(p.workload.share is None for p in scaling if p.params["group_type"] == "consumer")


def test_the_pricing_points_are_compared_with_implicit_acceptance_at_their_count_measured_once() -> None:
    for priced in (3, 2):  # a count the scaling part measures, and one it does not
        points = experiment.get("share_groups").points(profiles.parameters(
            "share_groups", "smoke", priced_consumers=priced, reject_shares=[0.05], max_poll_records=[100]))
        compared = [p for p in points if p.params["priced"]]
        assert {p.params["consumers"] for p in compared} == {priced}
        assert sorted(p.params["answer"] for p in compared) == [
            "explicit", "explicit, reject 0.05", "explicit, release 0.1", "implicit", "implicit, max.poll.records=100"]
        assert len({p.name for p in points}) == len(points)


def test_every_share_point_records_its_answers_and_its_groups_settings() -> None:
    for p in experiment.get("share_groups").points(SMOKE):
        if p.params["group_type"] == "share":
            share = p.workload.share
            assert share is not None and p.params["share.auto.offset.reset"] == "earliest"
            assert (p.params["share_ack"], p.params["share_release"], p.params["share_reject"]) == (
                share.mode, share.release, share.reject)
            assert all(p.params[k] == v for k, v in share.group_settings.items())


def test_the_java_tools_measure_only_what_they_can_implicit_acceptance_and_one_group_consumer() -> None:
    units = plan.units("share_groups", profiles.parameters("share_groups", "smoke", consumer_counts=[1, 2, 3]))
    java = [u.point for u in units if u.client == "java"]
    python = [u.point for u in units if u.client == "python"]
    assert {p.params["group_type"] for p in java} == {"share", "consumer"}
    assert all(p.workload.share.mode == "implicit" if p.workload.share else p.workload.consumers == 1 for p in java)
    assert {p.params["consumers"] for p in python if p.params["group_type"] == "consumer"} == {1, 2}
    assert {p.params["answer"] for p in python if p.params["priced"]} == {"implicit", "explicit", "explicit, release 0.1"}


def test_the_latency_points_read_a_paced_producer_as_it_sends_with_the_python_client() -> None:
    settings = profiles.parameters("share_groups", "smoke", latency_rates=[1_000, 5_000], priced_consumers=3)
    latency = [p for p in experiment.get("share_groups").points(settings) if p.params["part"] == "latency"]
    assert sorted((p.params["rate"], p.params["group_type"], p.params["consumers"]) for p in latency) == [
        (1_000, "consumer", 2), (1_000, "share", 3), (5_000, "consumer", 2), (5_000, "share", 3)]  # a group: up to P
    for p in latency:
        assert p.clients == ("python",) and p.workload.concurrent and not p.params["priced"]
        assert p.workload.records == p.params["rate"] * settings["duration_s"]
    units = plan.units("share_groups", profiles.parameters("share_groups", "smoke", latency_rates=[]))
    assert not any(u.point.params["part"] == "latency" for u in units)


def test_optional_grids_may_be_empty_and_the_consumer_counts_may_not() -> None:
    points = experiment.get("share_groups").points(profiles.parameters(
        "share_groups", "smoke", release_shares=[], reject_shares=[], lock_durations_ms=[]))
    assert {p.params["answer"] for p in points if p.params["priced"]} == {"implicit", "explicit"}
    with pytest.raises(KperfError, match="'share_groups.consumer_counts' needs at least one value"):
        profiles.parameters("share_groups", "smoke", consumer_counts=[])


@pytest.mark.parametrize("given, named", [
    ({"release_shares": [1.0]}, "the release share must be at least 0 and below 1"),
    ({"reject_shares": [0.5, 1.5]}, "the reject share must be at least 0 and below 1"),
    ({"consumer_counts": [3, 4], "partitions": 2}, "at least one count up to 'partitions'"),
    ({"lock_durations_ms": [0]}, "'share_groups.lock_durations_ms' must be at least 1000"),
])
def test_bad_parameters_are_refused_in_one_line(given: dict[str, object], named: str) -> None:
    with pytest.raises(KperfError, match=named) as refused:
        profiles.parameters("share_groups", "smoke", **given)
    assert "\n" not in str(refused.value)

"""What a change to a consumer group cost, from simulated observations (kperf.group_disruption), and the rebalance
experiment's refusals."""

from __future__ import annotations

import math

import pytest

from kperf import group_disruption as gd
from kperf.errors import KperfError
from kperf.experiments import rebalance
from kperf.load import GroupChange
from kperf.study import profiles

A, B, C = "a", "b", "c"


def held(t: float, member: str, *partitions: int) -> gd.Assignment:
    return (t, member, frozenset(partitions))


@pytest.mark.parametrize(("changes", "members", "after", "gone", "expected"), [
    # a forms alone, then b joins: balanced once each holds two of four
    ([held(1, A, 0, 1, 2, 3), held(3, A, 0, 1), held(4, B, 2, 3)], {A, B}, 0, None, 4),
    # balanced already at ``after`` (a change that moved nothing): at once
    ([held(1, A, 0, 1), held(1, B, 2, 3), held(5, A, 0, 1)], {A, B}, 2, None, 2),
    # times before ``after`` do not count; the first balanced time after it does
    ([held(1, A, 0, 1, 2, 3), held(3, A, 0, 1), held(5, B, 2, 3)], {A, B}, 2, None, 5),
    # a partition held twice (b has not yet given 1 up) is not balanced
    ([held(1, A, 0, 1), held(2, B, 1, 2, 3), held(3, B, 2, 3)], {A, B}, 0, None, 3),
    # a member outside the set still holding partitions: not balanced until it holds none
    ([held(1, A, 0, 1), held(1, B, 2, 3), held(2, A, 0, 1, 2, 3), held(4, B)], {A}, 2, None, 4),
    # a killed member stops reporting: its partitions no longer count from its death
    ([held(1, A, 0, 1), held(1, B, 2, 3), held(9, A, 0, 1, 2, 3)], {A}, 2, {B: 3.0}, 9),
    # ... and nothing before its partitions were taken over
    ([held(1, A, 0, 1), held(1, B, 2, 3)], {A}, 2, {B: 3.0}, None),
    # more members than partitions: those beyond hold none (c has not said so yet at 1: it holds nothing known)
    ([held(1, A, 0), held(1, B, 1), held(2, C)], {A, B, C}, 0, None, 1),
    ([held(1, A, 0), held(1, B, 0, 1), held(2, C, 1), held(3, B)], {A, B, C}, 0, None, 3),
])
def test_balanced_at(changes: list[gd.Assignment], members: set[str], after: float, gone: dict[str, float] | None,
                     expected: float | None) -> None:
    partitions = 2 if C in members else 4
    assert gd.balanced_at(changes, partitions, frozenset(members), after, gone) == expected


@pytest.mark.parametrize(("reads", "start", "end", "expected"), [
    ([1.1, 1.2, 2.0, 2.1], 1.0, 3.0, 0.9),  # from 2.1 to the end
    ([1.5, 1.6], 1.0, 1.7, 0.5),  # from the start to the first read
    ([], 1.0, 2.0, 1.0),  # nothing read at all
    ([0.5, 5.0], 1.0, 2.0, 1.0),  # reads outside the span do not count
    ([1.0], 2.0, 2.0, 0.0),  # an empty span
])
def test_longest_pause(reads: list[float], start: float, end: float, expected: float) -> None:
    assert gd.longest_pause(reads, start, end) == pytest.approx(expected)


def test_lag_cost_peak_and_recovery_against_the_calm_before() -> None:
    samples = [(0.5, 9_999), (1.0, 100), (2.0, 300), (3.0, 200), (4.0, 900), (5.0, 2_000), (6.0, 500),
               (7.0, 250), (8.0, 1_000)]
    cost = gd.lag_cost(samples, calm_from=1.0, change=3.5)  # the 9,999 before calm_from is the group forming
    assert (cost.calm_records, cost.peak_records) == (300, 2_000)
    assert cost.recovered_s == pytest.approx(7.0 - 3.5)  # first at or below 330 after the peak; later rises do not count


@pytest.mark.parametrize(("samples", "peak", "recovered"), [
    ([(1.0, 300), (4.0, 200), (5.0, 250)], 250, 0.0),  # never above calm: recovered at once
    ([(1.0, 300), (4.0, 330), (5.0, 320)], 330, 0.0),  # within a tenth above calm is calm
    ([(1.0, 300), (4.0, 340), (5.0, 330)], 340, 2.0),  # above it, back at it
    ([(1.0, 300), (4.0, 900), (5.0, 800)], 900, math.nan),  # never back within the samples
    ([(1.0, 300)], 0, math.nan),  # nothing sampled after the change
])
def test_lag_cost_edges(samples: list[tuple[float, int]], peak: int, recovered: float) -> None:
    cost = gd.lag_cost(samples, calm_from=1.0, change=3.0)
    assert cost.peak_records == peak
    assert cost.recovered_s == recovered or (math.isnan(cost.recovered_s) and math.isnan(recovered))


@pytest.mark.parametrize(("change", "message"), [
    (GroupChange("crash", 2, 3.0, 10.0), "a group change is one of join, leave, kill, got 'crash'"),
    (GroupChange("leave", 1, 3.0, 10.0), "a leave needs a group of 2 or more members"),
    (GroupChange("kill", 1, 3.0, 10.0), "a kill needs a group of 2 or more members"),
    (GroupChange("join", 0, 3.0, 10.0), "a join needs a group of 1 or more members"),
    (GroupChange("join", 1, 0.0, 10.0), "must be positive seconds, got 0 and 10"),
])
def test_group_change_refused(change: GroupChange, message: str) -> None:
    with pytest.raises(KperfError, match=message):
        change.check()


@pytest.mark.parametrize(("overrides", "message"), [
    ({"clients": ["python", "java"]}, "runs the python client only"),
    ({"members": 1}, "a leave needs a group of 2 or more members"),
    ({"change_at_s": 1.0}, "must be at least 2 s"),
])
def test_rebalance_rules_refuse(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(KperfError, match=message):
        rebalance.rules({**profiles.parameters("rebalance", "smoke"), **overrides})


def test_rebalance_grid_crosses_protocols_and_changes_and_outlasts_each_recovery() -> None:
    settings = profiles.parameters("rebalance", "quick")
    points = rebalance.grid(settings)
    assert {(p.params["group.protocol"], p.params["event"]) for p in points} == {
        (protocol, event) for protocol in ("classic", "consumer") for event in ("join", "leave", "kill")}
    for p in points:
        change = p.workload.group_change
        assert change is not None and p.clients == ("python",) and p.workload.consumers == settings["members"]
        assert p.workload.records / p.workload.rate == pytest.approx(change.at_s + change.recover_s + 1, abs=1e-3)
        assert change.recover_s == (settings["kill_recover_s"] if change.event == "kill" else settings["recover_s"])


def test_the_rebalance_points_need_the_consumer_protocol_of_the_cluster() -> None:
    from kperf.kafka import features
    from kperf.study import validation

    points = rebalance.grid(profiles.parameters("rebalance", "quick"))
    assert features.CONSUMER_PROTOCOL in validation.needs(points, ["python"])
    classic = [p for p in points if p.params["group.protocol"] == "classic"]
    assert features.CONSUMER_PROTOCOL not in validation.needs(classic, ["python"])

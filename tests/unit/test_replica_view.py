"""What the brokers said of their replicas around a fault (kperf.replica_view), from made-up rounds, and the lag a
group reading along showed (kperf.group_disruption.fault_lag)."""

from __future__ import annotations

import math

import pytest

from kperf.group_disruption import fault_lag
from kperf.replica_view import Round, cost


def round_(at: float, under: dict[str, float], leaders: dict[str, float], complete: bool = True) -> Round:
    return Round(at, complete, under, leaders)


CALM = [round_(t, {"a": 0, "b": 0, "c": 0}, {"a": 2, "b": 2, "c": 2}) for t in (8.0, 9.0)]
# b killed at 10 s, back at 20 s: its partitions led by a and c from 14 s, caught up at 23 s
KILLED = [*CALM, round_(11.0, {"a": 0, "c": 0}, {"a": 2, "c": 2}, complete=False),
          round_(14.0, {"a": 3, "c": 2}, {"a": 3, "c": 3}, complete=False),
          round_(21.0, {"a": 3, "b": 0, "c": 2}, {"a": 3, "b": 0, "c": 3}),
          round_(23.0, {"a": 0, "b": 0, "c": 0}, {"a": 3, "b": 0, "c": 3})]
# b paused 10-12 s: it misses a round, nothing moves, nothing falls behind
PAUSED = [*CALM, round_(11.0, {"a": 0, "c": 0}, {"a": 2, "c": 2}, complete=False),
          round_(13.0, {"a": 0, "b": 0, "c": 0}, {"a": 2, "b": 2, "c": 2})]


@pytest.mark.parametrize(("rounds", "began", "ended", "peak", "cleared_s", "moved"), [
    (KILLED, 10.0, 20.0, 5, 3.0, 2),  # a and c gained b's two leaderships
    (PAUSED, 10.0, 12.0, 0, 1.0, 0),  # the first whole round after the end had none: cleared then
    (KILLED[:-1], 10.0, 20.0, 5, math.nan, 2),  # still under-replicated at the last round: not cleared
    ([], 10.0, 20.0, math.nan, math.nan, math.nan),  # no round: nothing said
    ([round_(t, {}, {}) for t in (9.0, 11.0, 21.0)], 10.0, 20.0, math.nan, math.nan, math.nan),  # no gauges
    ([round_(r.at, {}, r.leaders, r.complete) for r in KILLED], 10.0, 20.0, math.nan, math.nan, 2),  # leaders only
    ([round_(r.at, r.under_replicated, {}, r.complete) for r in KILLED], 10.0, 20.0, 5, 3.0, math.nan),  # URPs only
])
def test_replica_cost(rounds: list[Round], began: float, ended: float, peak: float, cleared_s: float,
                      moved: float) -> None:
    found = cost(rounds, began, ended)
    assert found == pytest.approx({"under_replicated_peak": peak, "under_replicated_cleared_s": cleared_s,
                                   "leader_changes": moved}, nan_ok=True)


def test_a_broker_back_from_a_kill_counts_the_leaderships_it_takes_back() -> None:
    back = [*KILLED, round_(30.0, {"a": 0, "b": 0, "c": 0}, {"a": 2, "b": 2, "c": 2})]
    assert cost(back, 10.0, 20.0)["leader_changes"] == 4  # two moved away, two back (from its 0 after restart)




@pytest.mark.parametrize(("samples", "calm", "peak", "back_s"), [
    ([(6.0, 100), (8.0, 120), (11.0, 900), (13.0, 600), (16.0, 110)], 120, 900, 2.0),  # back 2 s after the end
    ([(6.0, 100), (8.0, 120), (11.0, 900), (12.0, 100), (16.0, 110)], 120, 900, 0.0),  # back before the end
    ([(6.0, 100), (8.0, 120), (11.0, 900), (16.0, 500)], 120, 900, math.nan),  # never back while measured
    ([(2.0, 5000), (8.0, 120), (11.0, 130)], 120, 130, 0.0),  # the first half (first commits) is no calm
    ([(2.0, 100), (11.0, 900), (16.0, 110)], math.nan, math.nan, math.nan),  # no sample in the calm: no guess
    ([(6.0, 100), (8.0, 120)], math.nan, math.nan, math.nan),  # none answered from the fault on: no guess
])
def test_the_lag_of_a_group_reading_along(samples: list[tuple[float, int]], calm: float, peak: float,
                                          back_s: float) -> None:
    found = fault_lag(samples, 6.0, 10.0, 14.0, 0.0)  # calm from 6 s, the fault from 10 s to 14 s
    assert found == pytest.approx({"lag_calm_records": calm, "lag_peak_records": peak, "lag_recovery_s": back_s},
                                  nan_ok=True)


def test_a_lag_within_one_commit_interval_of_records_above_the_calm_is_calm() -> None:
    noisy = [(6.0, 100), (8.0, 120), (11.0, 900), (13.0, 600), (16.0, 110)]
    assert fault_lag(noisy, 6.0, 10.0, 14.0, 800.0)["lag_recovery_s"] == 0.0  # 900 is within 120 + 800

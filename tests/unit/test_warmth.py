"""When a warm-up is over: the rounds' costs, the rule's answer, and why."""

from __future__ import annotations

import math

import pytest

from kperf import warmth

NAN = math.nan
# The brokers' CPU (% of a core) over nine 20 s runs of S1's paced producer after a start (kperf/warmth.py).
AFTER_A_START = [173.4, 136.0, 68.4, 61.3, 51.3, 45.0, 41.3, 42.8, 39.0]


@pytest.mark.parametrize(
    ("costs", "expected"),
    [
        ([], False),
        ([5.0], False),
        ([5.0, 5.0], False),  # two rounds, nothing before them to compare with
        ([5.0, 5.0, 5.0], True),  # the least a warm cluster takes: three rounds
        ([10.0, 9.5, 9.1], True),  # 9.1 is 9% below 10: within the tolerance
        ([10.0, 9.5, 8.9], False),  # 11% below: still getting faster
        ([10.0, 12.0, 11.0], True),  # slower than before counts as settled: it is not getting faster
        ([100.0, 60.0, 100.0], False),  # one slow round (noise) does not end a warm-up that is going on
        ([100.0, 60.0, 100.0, 58.0], True),  # 60 then two rounds within 10% of it
        ([NAN, 5.0, 5.0], False),  # nothing measured before: no base
        ([5.0, NAN, 5.0], False),  # a round with nothing measured is never settled on
        ([5.0, NAN, 5.0, 5.0], True),
        (AFTER_A_START[:7], False),
        (AFTER_A_START[:8], True),  # 41.3 and 42.8 against 45.0
    ],
)
def test_a_warm_up_settles_once_two_rounds_in_a_row_improve_on_the_best_before_by_at_most_the_tolerance(
        costs: list[float], expected: bool) -> None:
    assert warmth.settled(costs) is expected


def test_the_tolerance_and_the_rounds_compared_can_be_chosen() -> None:
    assert warmth.settled([10.0, 8.5, 8.5], tolerance=0.2)
    assert not warmth.settled([10.0, 8.5, 8.5], tolerance=0.1)
    assert warmth.settled([10.0, 9.5], rounds=1)
    assert not warmth.settled([9.5, 9.5, 9.5], rounds=3)  # three rounds need one more before them


@pytest.mark.parametrize(("costs", "expected"), [
    ([5.0, 5.0], False),  # too few
    ([5.0, 5.0, 5.0], True),
    ([10.0, 9.0, 1.0], True),  # judged, and not settled: still falling
    ([NAN, 5.0, 5.0], False),  # nothing measured before them to compare with
    ([5.0, NAN, 5.0], False),  # the last rounds unmeasured
])
def test_the_rule_judges_only_measured_rounds_with_a_measured_one_before_them(costs: list[float], expected: bool) -> None:
    assert warmth.judged(costs) is expected
    assert warmth.settled(costs) <= warmth.judged(costs)  # never settled on what it cannot judge

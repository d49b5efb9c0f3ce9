"""The one rule for a unit's rate: its steady rate where that stands for it, else its whole run's."""

from __future__ import annotations

import math

from kperf.achieved import steady_else_whole, steady_stands
from kperf.steady import MIN_STEADY_WINDOWS


def test_any_steady_state_stands_for_its_unit_and_none_gives_the_whole_run() -> None:
    assert steady_else_whole(990.0, 3, 700.0) == 990.0  # a short unit's steady windows: its join or warm-up left out
    assert steady_else_whole(math.nan, math.nan, 700.0) == 700.0  # no steady state (or a record older than it)
    assert not steady_stands(990.0, math.nan)  # a steady rate without its windows is not one this kperf wrote


def test_a_verdict_can_ask_for_the_windows_from_which_mser_cuts_a_warm_up() -> None:
    assert steady_else_whole(990.0, MIN_STEADY_WINDOWS - 1, 700.0, MIN_STEADY_WINDOWS) == 700.0
    assert steady_else_whole(990.0, MIN_STEADY_WINDOWS, 700.0, MIN_STEADY_WINDOWS) == 990.0

"""The time to recover from a fault, on made-up records of a producer paced at 100 records/s for 20 s."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kperf.fault_recovery import RECOVERED_WINDOWS, calm_level, recovery_s, window_p99

RATE, END = 100, 20.0
INTENDED = np.arange(0, END, 1 / RATE)
CALM_S = 0.01 + 0.002 * np.sin(INTENDED * 7)  # 8-12 ms, a little noise


def waited(*slow: tuple[float, float, float]) -> np.ndarray:
    """Latency: calm, except records meant for each [start, stop) that wait until ``done`` (a backlog)."""
    latency = CALM_S.copy()
    for start, stop, done in slow:
        inside = (INTENDED >= start) & (INTENDED < stop)
        latency[inside] = done - INTENDED[inside] + 0.01
    return latency


@pytest.mark.parametrize(
    ("latency", "intended", "expected"),
    [
        # A fault from 8 to 12 s; its backlog drained at 13.5 s: the windows from 14 s on are calm.
        (waited((8, 13.5, 13.5)), INTENDED, 2.0),
        # No backlog after the fault's end: recovered at once.
        (waited((8, 12, 12)), INTENDED, 0.0),
        # Never drained before the load ended.
        (waited((8, END, END + 5)), INTENDED, math.nan),
        # One calm window between slow ones is not a recovery: it takes RECOVERED_WINDOWS in a row.
        (waited((8, 13, 13), (14, 15, 15.2)), INTENDED, 3.0),
        # A window no record was meant for (the producer itself held up, 12-13 s) is not calm.
        (CALM_S[(INTENDED < 12) | (INTENDED >= 13)], INTENDED[(INTENDED < 12) | (INTENDED >= 13)], 1.0),
    ],
    ids=["backlog", "none", "never", "one-calm-window", "empty-window"],
)
def test_recovery_is_the_first_run_of_calm_windows_after_the_fault(
        latency: np.ndarray, intended: np.ndarray, expected: float) -> None:
    got = recovery_s(intended, intended + latency, 0.0, 8.0, 12.0, END, 1.0)
    assert got == pytest.approx(expected, nan_ok=True)


def test_the_calm_level_comes_from_the_second_half_before_the_fault() -> None:
    latency = CALM_S.copy()
    latency[INTENDED < 4] = 0.5  # connecting and warming up: not the calm
    assert calm_level(INTENDED, INTENDED + latency, 0.0, 8.0, 1.0) <= CALM_S.max() * 1.1
    assert math.isnan(calm_level(INTENDED, INTENDED + latency, 0.0, 1.5, 1.0))  # no whole window before the fault
    assert math.isnan(recovery_s(INTENDED, INTENDED + latency, 0.0, 1.5, 3.0, END, 1.0))  # nothing to compare with


def test_a_record_the_fault_held_up_is_no_part_of_the_calm() -> None:
    latency = waited((7.5, 13.5, 13.5))  # meant just before the fault at 8 s, acknowledged after it
    assert calm_level(INTENDED, INTENDED + latency, 0.0, 8.0, 1.0) <= CALM_S.max() * 1.1
    assert recovery_s(INTENDED, INTENDED + latency, 0.0, 8.0, 12.0, END, 1.0) == 2.0


def test_windows_cut_short_are_left_out_and_empty_ones_are_nan() -> None:
    p99 = window_p99(np.array([0.1, 0.2, 2.5]), np.array([1.0, 2.0, 3.0]), 0.0, 3.5, 1.0)
    assert len(p99) == 3 and p99[0] == pytest.approx(np.percentile([1.0, 2.0], 99)) and math.isnan(p99[1])
    assert p99[2] == 3.0 and RECOVERED_WINDOWS >= 2

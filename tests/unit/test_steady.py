"""Steady state of a time series: MSER-5 cuts a known warm-up and drain, batch means cover the true rate as often
as they claim, and the steady columns and resources are of the steady windows only."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from kperf.series import Series
from kperf.steady import batch_means_half_width, columns, steady_rates, steady_resources, steady_state

TRUE_RATE = 1000.0


def series_of(rates: np.ndarray, load_s: float | None = None) -> Series:
    """One-second windows with these records counts, under load until ``load_s`` (default: throughout)."""
    n = len(rates)
    return Series(1.0, tuple(float(i) for i in range(n)), (1.0,) * n, tuple(int(r) for r in rates), (0,) * n,
                  float(n) if load_s is None else load_s)


def test_a_ramp_and_a_drain_are_cut_and_the_plateau_kept() -> None:
    rng = np.random.default_rng(1)
    rates = np.concatenate([np.linspace(0, TRUE_RATE, 10, endpoint=False), rng.normal(TRUE_RATE, 20, 60),
                            [700.0, 50.0, 5.0]])
    found = steady_state(series_of(np.round(rates), load_s=70.4))  # the load stopped 0.4 s into window 70
    assert found is not None
    assert 10 <= found.first <= 15  # MSER-5 cuts whole batches of five: the ramp ends at window 10
    assert found.last == 69  # the window the load stopped in and the drain after it are cut, the plateau kept
    assert found.low <= TRUE_RATE <= found.high
    assert abs(found.records_per_s - TRUE_RATE) < 4 * 20 / math.sqrt(found.windows)


RUNS = 2000  # at 95%, the share covered has a binomial standard deviation of 0.5%: bounds are four of them out


def test_the_batch_means_interval_covers_the_true_rate_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(RUNS):
        windows = rng.normal(TRUE_RATE, 50, 60)
        half = batch_means_half_width(windows, np.ones(60))
        covered += abs(windows.mean() - TRUE_RATE) <= half
    assert 0.93 <= covered / RUNS <= 0.97


def test_with_the_warm_up_cut_from_white_noise_the_interval_covers_somewhat_less_often_as_documented() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(RUNS):
        found = steady_state(series_of(np.round(rng.normal(TRUE_RATE, 50, 60))))
        assert found is not None
        covered += found.low <= TRUE_RATE <= found.high
    assert 0.91 <= covered / RUNS <= 0.96  # MSER-5 cuts a third of such series: about 93% (kperf.steady)


def test_windows_that_correlate_with_their_neighbours_are_covered_less_often_as_documented() -> None:
    rng = np.random.default_rng(13)
    covered = measured = 0
    for _ in range(RUNS):
        noise = rng.normal(0, 50, 60)
        windows = np.empty(60)
        windows[0] = noise[0] / math.sqrt(1 - 0.5**2)
        for i in range(1, 60):  # AR(1): each window's deviation carries half of the one before
            windows[i] = 0.5 * windows[i - 1] + noise[i]
        found = steady_state(series_of(np.round(TRUE_RATE + windows)))
        assert found is not None and not math.isnan(found.low)
        measured += 1
        covered += found.low <= TRUE_RATE <= found.high
    assert 0.85 <= covered / measured <= 0.94  # batches of five windows or more: about 89% (kperf.steady)


def test_too_few_windows_give_a_rate_but_no_interval() -> None:
    found = steady_state(series_of(np.array([TRUE_RATE, TRUE_RATE])))
    assert found is not None and found.records_per_s == TRUE_RATE
    assert math.isnan(found.low) and math.isnan(found.high)


def test_windows_shorter_than_half_the_width_do_not_count() -> None:
    series = Series(1.0, (0.0, 0.9, 1.9, 2.9, 3.9), (0.9, 1.0, 1.0, 1.0, 0.05), (900, 1000, 1000, 1000, 50), (0,) * 5, 3.95)
    found = steady_state(series)
    assert found is not None and found.last == 3  # the last 0.05 s (50 records: "1,000/s") is too short to say


def test_steady_resources_are_the_time_weighted_means_over_the_steady_windows_only() -> None:
    rates = np.r_[np.full(20, 100.0), np.full(2, 1.0)]
    series = replace(series_of(rates, load_s=20.0), resources={"client_cpu_pct": (*[10.0] * 19, math.nan, 90.0, 90.0)})
    found = steady_state(series)
    assert found is not None and found.last == 19
    assert steady_resources(series, found) == {"client_cpu_pct": 10.0}  # the drain's 90s and the unsampled NaN out


def test_the_steady_columns_name_the_steady_windows_and_their_span() -> None:
    series = replace(series_of(np.full(20, TRUE_RATE), load_s=19.5), resources={"client_cpu_pct": (10.0,) * 20})
    found = columns(series)
    assert found["steady_records_per_s"] == TRUE_RATE and found["steady_windows"] == 19
    assert (found["steady_start_s"], found["steady_end_s"]) == (0.0, 19.0) and found["steady_res.client_cpu_pct"] == 10.0
    assert columns(series_of(np.zeros(5))) == {}  # nothing moved: no steady state, no column


def test_repeats_go_by_their_steady_rates_only_when_every_one_has_one() -> None:
    import pandas as pd

    steady = pd.DataFrame({"steady_records_per_s": [1000.0, 990.0], "steady_windows": [3, 40]})
    assert steady_rates(steady) and steady_rates(steady[:0])
    assert not steady_rates(steady.assign(steady_records_per_s=[1000.0, None]))
    assert not steady_rates(pd.DataFrame({"records_per_s": [1000.0]}))  # records older than the steady state

"""Steady state of a time series: MSER-5 cuts a known warm-up and drain, batch means cover the true rate as often
as they claim, and the processes' snapshots merge onto one wall-clock grid without losing a record."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from kperf.results import Series
from kperf.steady import (
    ResourceSample,
    Snapshots,
    batch_means_half_width,
    snapshots_to_series,
    steady_resources,
    steady_state,
    with_resources,
)

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


def test_snapshots_of_several_processes_merge_on_one_grid_and_keep_every_record() -> None:
    first, second = Snapshots(100.3), Snapshots(100.6)
    for now, count, failed in ((101.05, 70, 0), (102.2, 170, 2), (103.0, 270, 2)):
        first.take(now, count, count * 10, errors=failed)
    for now, count in ((101.0, 40), (102.0, 140)):
        second.take(now, count, count * 10)
    series = snapshots_to_series([first.close(103.4, 300, 3000, errors=5), second.close(102.7, 200, 2000, errors=1)],
                                 [103.1, 102.5])
    assert series.records == (70 + 40, 100 + 100, 100 + 60, 30) and sum(series.bytes) == 5000
    assert series.errors == (0, 2, 1, 3)  # each process's failures in the window they happened in
    assert series.starts_s == pytest.approx((0.0, 0.7, 1.7, 2.7)) and series.seconds == pytest.approx((0.7, 1, 1, 0.4))
    assert series.load_s == pytest.approx(2.2)  # the earlier of the two stops: both processes under load until then


def test_precision_is_students_t_over_repeats_and_one_runs_own_interval_alone() -> None:
    from kperf.steady import precision

    # Two repeats 990 and 1010: mean 1000, sd 14.14, t(1) 12.706: half-width 127.06.
    assert precision([990, 1010], [5, 5]) == pytest.approx(0.12706, rel=1e-4)
    assert precision([1000], [25]) == pytest.approx(0.025)
    assert math.isnan(precision([1000], [math.nan])) and math.isnan(precision([], []))


def test_repeats_that_agree_within_their_own_noise_are_pooled_over_their_batches() -> None:
    from scipy.stats import t

    from kperf.steady import precision

    # Each repeat: 10 batches, half-width 22.62 = t(9) x standard error 10. Their rates 1000 and 1002 differ far
    # less than that noise (variance 2 against 100), so the mean's standard error is sqrt(2 x 100) / 2, on 18 df.
    half = t.ppf(0.975, 9) * 10
    pooled = t.ppf(0.975, 18) * math.sqrt(200) / 2
    assert precision([1000, 1002], [half, half], batch_counts=[10, 10]) == pytest.approx(pooled / 1001, rel=1e-9)
    # Repeats 900 and 1100 disagree far beyond it: Student's t over the two repeats alone.
    assert precision([900, 1100], [half, half], batch_counts=[10, 10]) == pytest.approx(12.706 * 100 / 1000, rel=1e-4)
    # No batch count (or one repeat without an interval): the repeats alone.
    assert precision([1000, 1002], [half, half]) == pytest.approx(12.706 * 1 / 1001, rel=1e-4)
    assert precision([1000, 1002], [half, math.nan], batch_counts=[10, 0]) == pytest.approx(12.706 / 1001, rel=1e-4)


@pytest.mark.parametrize(("drift", "at_least"), [(0.0, 0.94), (1.0, 0.94), (2.0, 0.90)])
def test_pooled_interval_covers_the_mean_over_runs_when_runs_drift_by_up_to_twice_their_own_noise(
    drift: float, at_least: float,
) -> None:
    from scipy.stats import t

    from kperf.steady import precision

    # Two repeats of 10 batches each; each run's own mean drifts from the true 1000 by ``drift`` of its standard
    # error. 3000 trials: a binomial 95% coverage lands within 0.94-0.96 but for one time in a thousand.
    rng, batches, noise, trials = np.random.default_rng(11), 10, 50.0, 3000
    error = noise / math.sqrt(batches)
    covered = 0
    for _ in range(trials):
        runs = rng.normal(1000 + rng.normal(0, drift * error, (2, 1)), noise, (2, batches))
        rates = runs.mean(axis=1)
        halves = t.ppf(0.975, batches - 1) * runs.std(axis=1, ddof=1) / math.sqrt(batches)
        reached = precision(rates.tolist(), halves.tolist(), batch_counts=[batches, batches])
        covered += abs(rates.mean() - 1000) <= reached * rates.mean()
    assert covered / trials >= at_least


def test_window_latencies_merge_across_processes_and_give_percentiles_within_a_bin() -> None:
    from kperf.steady import BIN_RATIO, to_bins

    rng = np.random.default_rng(3)
    first_ms, second_ms = rng.lognormal(1.0, 0.5, 6000), rng.lognormal(2.0, 0.3, 4000)
    one, two = Snapshots(100.0), Snapshots(100.0)
    series = snapshots_to_series(
        [one.close(100.9, 6000, 0, to_bins(first_ms / 1000)), two.close(100.8, 4000, 0, to_bins(second_ms / 1000))],
        [100.9, 100.8], latency="ack",
    )
    together = np.concatenate([first_ms, second_ms])
    (p50,), (p99,), (top,) = series.latency_p50_ms, series.latency_p99_ms, series.latency_max_ms
    for found, exact in ((p50, np.percentile(together, 50)), (p99, np.percentile(together, 99)), (top, together.max())):
        assert exact <= found * (1 + 1e-9) and found <= exact * BIN_RATIO**2  # the upper edge of the right bin


def test_resource_samples_land_in_the_window_their_middle_falls_in_time_weighted() -> None:
    series = replace(series_of(np.full(5, 100.0)), started_at=1000.0)
    samples = [ResourceSample(1000.5, 0.5, {"client_cpu_pct": 10.0}), ResourceSample(1001.0, 0.5, {"client_cpu_pct": 30.0}),
               ResourceSample(1002.0, 1.0, {"client_cpu_pct": 50.0, "host_cpu_pct": 80.0}),
               ResourceSample(1003.6, 1.6, {"client_cpu_pct": 70.0}),  # its middle, 1002.8, is in window 2
               ResourceSample(1010.0, 0.5, {"client_cpu_pct": 999.0})]  # after the series: dropped
    found = with_resources(series, samples).resources
    assert found["client_cpu_pct"][:3] == (20.0, 50.0, 70.0)
    assert all(math.isnan(v) for v in found["client_cpu_pct"][3:])  # no sample: unknown, never zero
    assert found["host_cpu_pct"][1] == 80.0 and math.isnan(found["host_cpu_pct"][0])
    assert with_resources(series_of(np.full(5, 100.0)), samples).resources == {}  # no wall-clock start: not aligned


def test_steady_resources_are_the_time_weighted_means_over_the_steady_windows_only() -> None:
    rates = np.r_[np.full(20, 100.0), np.full(2, 1.0)]
    series = replace(series_of(rates, load_s=20.0), resources={"client_cpu_pct": (*[10.0] * 19, math.nan, 90.0, 90.0)})
    found = steady_state(series)
    assert found is not None and found.last == 19
    assert steady_resources(series, found) == {"client_cpu_pct": 10.0}  # the drain's 90s and the unsampled NaN out

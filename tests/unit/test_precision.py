"""A point's precision: Student's t over its repeats, one run's own batch-means interval, and repeats that agree
within their own noise pooled over their batches, with the coverage that pooling keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kperf.precision import precision


def test_precision_is_students_t_over_repeats_and_one_runs_own_interval_alone() -> None:
    # Two repeats 990 and 1010: mean 1000, sd 14.14, t(1) 12.706: half-width 127.06.
    assert precision([990, 1010], [5, 5]) == pytest.approx(0.12706, rel=1e-4)
    assert precision([1000], [25]) == pytest.approx(0.025)
    assert math.isnan(precision([1000], [math.nan])) and math.isnan(precision([], []))


def test_repeats_that_agree_within_their_own_noise_are_pooled_over_their_batches() -> None:
    from scipy.stats import t

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

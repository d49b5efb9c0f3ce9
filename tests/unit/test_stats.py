"""Statistics of repeats: the median's interval, the unstable flag, comparisons of two settings."""

from __future__ import annotations

import pandas as pd
import pytest

from kperf.analysis import stats


def test_summary_flags_an_unstable_point() -> None:
    # Real repeats (records/s) of the quick profile's batch experiment on the
    # 2-core CI machine, 2026-11-22: batch.size=10000 in two runs of the study.
    table = pd.DataFrame(
        {
            "point": ["steady"] * 3 + ["noisy"] * 3,
            "records_per_s": [128875.0, 153197.0, 132115.0, 177823.0, 122137.0, 146935.0],
        }
    )
    summary = stats.summarize(table, ["point"]).set_index("point")
    assert summary.loc["steady", "median"] == 132115.0 and not summary.loc["steady", "unstable"]
    assert summary.loc["steady", "cv"] == pytest.approx(0.0957, abs=1e-4)
    assert summary.loc["noisy", "unstable"] and summary.loc["noisy", "cv"] == pytest.approx(0.1873, abs=1e-4)
    # Three repeats allow 75% coverage: the interval is their range.
    assert (summary.loc["steady", "median_low"], summary.loc["steady", "median_high"]) == (128875.0, 153197.0)
    assert summary.loc["steady", "coverage"] == pytest.approx(0.75)


def test_median_interval_reaches_95_percent_from_six_repeats() -> None:
    assert stats.median_interval([3.0, 1.0]) == (1.0, 3.0, 0.5)
    assert stats.median_interval(range(1, 6))[2] == pytest.approx(0.9375)  # five: the range, 93.75%
    assert stats.median_interval(range(1, 7)) == (1.0, 6.0, pytest.approx(1 - 2 / 64))
    # Twenty repeats: [x_(6), x_(15)] (R's binom-based median CI for n=20 gives 95.9%).
    low, high, coverage = stats.median_interval(range(1, 21))
    assert (low, high) == (6.0, 15.0) and coverage == pytest.approx(0.9586, abs=1e-4)


def test_comparison_of_two_settings() -> None:
    clear = stats.compare("lz4", [100.0, 102.0, 101.0], "gzip", [50.0, 51.0, 49.0])
    assert clear.significant and clear.ratio == pytest.approx(101 / 50) and clear.p_value < 1e-4
    close = stats.compare("lz4", [100.0, 120.0], "gzip", [95.0, 118.0])
    assert not close.significant and "not significant" in close.sentence()
    assert not stats.compare("a", [1.0], "b", [2.0]).significant  # one repeat: no test, no claim

"""Robust summaries of repeated measurements (as pyperf and asv report them), and tests between two settings.

Studies here have few repeats (2 in the quick profile), so intervals are
distribution-free: the confidence interval of the median between two order
statistics, with the coverage that the number of repeats really allows. With
two repeats that is their range at 50% coverage; a t-interval of the mean would
claim 95% and, being symmetric around a mean of two noisy values, can even
go below zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

UNSTABLE_CV = 0.10  # a point whose repeats vary by more than 10% is flagged, not hidden
LEVEL = 0.95  # the coverage asked of a median interval (reached from 6 repeats on)
ALPHA = 0.05  # significance level of the comparison of two settings


def median_interval(values: ArrayLike, level: float = LEVEL) -> tuple[float, float, float]:
    """(low, high, coverage): the narrowest order-statistic interval [x_(k), x_(n+1-k)] covering the
    median with probability >= ``level``, or the full range with its lower coverage 1 - 2^(1-n) when
    there are too few values for ``level``. Exact for any continuous distribution."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    k = 1  # coverage of [x_(k), x_(n+1-k)] is 1 - 2 * P(Binomial(n, 1/2) <= k - 1)
    while k + 1 <= n - k and 1 - 2 * stats.binom.cdf(k, n, 0.5) >= level:
        k += 1
    return float(x[k - 1]), float(x[n - k]), float(max(0.0, 1 - 2 * stats.binom.cdf(k - 1, n, 0.5)))


def summarize(results: pd.DataFrame, by: list[str], value: str = "records_per_s") -> pd.DataFrame:
    """Per group: n, median, min, max, coefficient of variation, the median's interval and its coverage,
    and the unstable flag."""

    def one(group: pd.Series) -> pd.Series:
        values = group.dropna().to_numpy(dtype=float)
        n, mean = len(values), float(np.mean(values)) if len(values) else float("nan")
        cv = float(np.std(values, ddof=1)) / mean if n > 1 and mean > 0 else float("nan")
        low, high, coverage = median_interval(values) if n else (float("nan"),) * 3
        return pd.Series(
            {
                "n": n,
                "median": float(np.median(values)) if n else float("nan"),
                "min": float(values.min()) if n else float("nan"),
                "max": float(values.max()) if n else float("nan"),
                "cv": cv,
                "median_low": low,
                "median_high": high,
                "coverage": coverage,
                "unstable": bool(cv > UNSTABLE_CV),
            }
        )

    return results.groupby(by, sort=True)[value].apply(one).unstack().infer_objects().reset_index()


def interval_text(median: float, low: float, high: float, coverage: float, n: int, unit: str = "",
                  spec: str = ",.0f") -> str:
    """``12,300 records/s (50% CI 11,900-12,700, n=2)``: a median with its interval, for sentences (``spec``: the
    numbers' format, e.g. ``.2f`` for seconds)."""
    if n < 2:
        return f"{median:{spec}}{unit} (one measurement)"
    return f"{median:{spec}}{unit} ({coverage:.0%} CI {low:{spec}}-{high:{spec}}, n={n})"


@dataclass(frozen=True)
class Comparison:
    """The better of two settings and whether the data say it is better: Welch's t-test of their repeats."""

    better: str
    other: str
    ratio: float  # median of the better / median of the other
    p_value: float  # two-sided; nan when either has fewer than 2 repeats or both have no spread
    significant: bool

    def sentence(self) -> str:
        verdict = (
            f"significant (Welch's t-test p={self.p_value:.3f})"
            if self.significant
            else "not significant at the 5% level"
            + (f" (Welch's t-test p={self.p_value:.2f})" if np.isfinite(self.p_value) else " (too few repeats to test)")
        )
        ratio = f"x{self.ratio:.2f}" if np.isfinite(self.ratio) and self.ratio > 0 else "no ratio (a median of 0)"
        return f"{self.better} over {self.other}: {ratio}, {verdict}"


def compare(better: str, better_values: ArrayLike, other: str, other_values: ArrayLike) -> Comparison:
    """Is ``better`` really ahead of ``other``? Welch's t-test, which works from 2 repeats each (a rank
    test cannot reach p < 0.05 with fewer than 4 per side), on the repeats of the two settings."""
    a, b = np.asarray(better_values, dtype=float), np.asarray(other_values, dtype=float)
    ratio = float(np.median(a) / np.median(b)) if np.median(b) > 0 else float("inf")
    p = float("nan")
    if len(a) > 1 and len(b) > 1 and (np.std(a) > 0 or np.std(b) > 0):
        p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
    return Comparison(better, other, ratio, p, bool(np.isfinite(p) and p < ALPHA))


def most_common(values: pd.Series) -> object:
    """The most frequent value of ``values`` (the first seen on a tie); None when all are missing."""
    counts = values.dropna().value_counts(sort=True)
    return counts.index[0] if len(counts) else None

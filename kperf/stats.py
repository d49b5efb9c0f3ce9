"""Robust summaries of repeated measurements (as pyperf and asv report them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

UNSTABLE_CV = 0.10  # a point whose repeats vary by more than 10% is flagged, not hidden


def summarize(results: pd.DataFrame, by: list[str], value: str = "records_per_s") -> pd.DataFrame:
    """Per group: n, median, min, max, coefficient of variation, 95% CI of the mean, unstable flag."""

    def one(group: pd.Series) -> pd.Series:
        values = group.to_numpy(dtype=float)
        n, mean = len(values), float(np.mean(values))
        std = float(np.std(values, ddof=1)) if n > 1 else float("nan")
        half = float(stats.t.ppf(0.975, n - 1) * std / np.sqrt(n)) if n > 1 else float("nan")
        cv = std / mean if n > 1 and mean > 0 else float("nan")
        return pd.Series(
            {
                "n": n,
                "median": float(np.median(values)),
                "min": float(values.min()),
                "max": float(values.max()),
                "cv": cv,
                "ci95_low": mean - half,
                "ci95_high": mean + half,
                "unstable": bool(cv > UNSTABLE_CV),
            }
        )

    return results.groupby(by, sort=True)[value].apply(one).unstack().reset_index()

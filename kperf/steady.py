"""The steady state of a measured unit's time series: warm-up and drain cut off, the rate of what is left, and
that rate's confidence interval from the windows themselves.

The drain is cut by what happened: every window from the one in which the
load stopped (the last record sent, or read) on. The warm-up is cut by MSER-5
(White 1997; Franklin and White 2008, "Stationarity tests and MSER-5"):
windows are averaged in batches of five, and the truncation point is the one
that minimizes the standard error of what remains, searched over the first
half (so it can cut only from 15 windows on). On a series with no warm-up at
all it still cuts now and then (a third of the time on white noise), which
makes the interval below cover the true rate less often than it claims:
about 93% for 95% on 60 windows of white noise, about 89% when each window's
deviation carries half of the one before (``tests/unit/test_steady.py``
measures both). The interval is the batch-means
interval (Law and Kelton, "Simulation Modeling and Analysis", 9.5.3): the
steady windows are split into at most ``MAX_BATCHES`` consecutive batches of
at least ``BATCH_WINDOWS`` windows, whose rates are nearly independent, and
Student's t over them gives a 95% interval of the steady rate, centred on the
steady windows' rate. Below ``MIN_BATCHES`` such batches (15 windows) no
interval is claimed (NaN), never a made-up one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kperf.achieved import steady_stands
from kperf.series import Series

if TYPE_CHECKING:
    import pandas as pd

MSER_BATCH = 5
MAX_BATCHES = 10
MIN_BATCHES = 3
BATCH_WINDOWS = 5  # windows a batch holds at least: a lone window's rate correlates with its neighbours'
MIN_STEADY_WINDOWS = MIN_BATCHES * BATCH_WINDOWS  # from these on, a steady rate has its interval (and MSER can cut)

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Steady:
    """The steady part of a series: windows ``first`` to ``last`` (inclusive), their rate and its interval."""

    first: int
    last: int
    records_per_s: float
    low: float  # NaN: too few windows for an interval
    high: float

    @property
    def windows(self) -> int:
        return self.last - self.first + 1


def window_rates(series: Series) -> np.ndarray:
    """Records per second of each window wholly under load; NaN for a window shorter than half the width (its
    rate is noise), for those up to the one in which the load began (a consumer's group join) and for those from
    the one in which it stopped (the drain)."""
    seconds = np.asarray(series.seconds, dtype=float)
    starts = np.asarray(series.starts_s, dtype=float)
    kept = (seconds >= series.width_s / 2) & (starts >= series.load_from_s) & (starts + seconds <= series.load_s)
    return np.divide(series.records, seconds, out=np.full(len(seconds), np.nan), where=kept)


def mser_cut(values: np.ndarray, batch: int = MSER_BATCH) -> int:
    """MSER-``batch``: how many leading values to drop (a multiple of ``batch``) so the rest has the least
    squared standard error; searched over the first half, as the rule prescribes."""
    means = np.array([values[i : i + batch].mean() for i in range(0, len(values) - batch + 1, batch)])
    if len(means) < 2:
        return 0
    best, cut = math.inf, 0
    for d in range((len(means) + 1) // 2):
        rest = means[d:]
        score = float(((rest - rest.mean()) ** 2).sum()) / len(rest) ** 2
        if score < best:
            best, cut = score, d
    return cut * batch


def steady_state(series: Series, confidence: float = CONFIDENCE) -> Steady | None:
    """The steady windows of ``series`` (the drain cut, then the warm-up by MSER-5) and their rate with its
    batch-means interval; None when the series has no full window under load, or no record in them."""
    rates = window_rates(series)
    full = np.isfinite(rates)
    if not full.any():
        return None
    values = rates[full]
    positions = np.flatnonzero(full)
    first, last = mser_cut(values), len(values) - 1
    kept = slice(positions[first], positions[last] + 1)
    records = np.asarray(series.records[kept], dtype=float)
    seconds = np.asarray(series.seconds[kept], dtype=float)
    if records.sum() <= 0:
        return None  # nothing moved: no rate to speak of
    rate = float(records.sum() / seconds.sum())
    half = batch_means_half_width(records, seconds, confidence)
    return Steady(int(positions[first]), int(positions[last]), rate, rate - half, rate + half)


def batch_means_half_width(records: np.ndarray, seconds: np.ndarray, confidence: float = CONFIDENCE) -> float:
    """Half the batch-means interval of the rate of ``records`` over ``seconds`` (window by window): every window
    in at most MAX_BATCHES consecutive batches of at least BATCH_WINDOWS each, whose rates are then close to
    independent even when neighbouring windows are not; NaN below MIN_BATCHES such batches."""
    count = batches(len(records))
    if not count:
        return math.nan
    batch_rates = np.array([r.sum() / s.sum() for r, s in zip(np.array_split(records, count), np.array_split(seconds, count))])
    from scipy.special import stdtrit  # Student's t quantile; scipy loads only once a series is summarized

    return float(stdtrit(count - 1, 0.5 + confidence / 2) * batch_rates.std(ddof=1) / math.sqrt(count))


def batches(windows: int) -> int:
    """How many batches :func:`batch_means_half_width` splits ``windows`` steady windows into (0: too few)."""
    count = min(MAX_BATCHES, windows // BATCH_WINDOWS)
    return count if count >= MIN_BATCHES else 0


def columns(series: Series) -> dict[str, float]:
    """The steady state of ``series`` as a record's ``steady_*`` columns (its rate, interval, windows and span, and
    the resources' means over its windows: ``steady_res.*``); empty when it has none."""
    found = steady_state(series)
    if found is None:
        return {}
    return {
        "steady_records_per_s": found.records_per_s,
        "steady_low": found.low,
        "steady_high": found.high,
        "steady_windows": found.windows,
        "steady_start_s": series.starts_s[found.first],
        "steady_end_s": series.starts_s[found.last] + series.seconds[found.last],
        **{f"steady_res.{key}": value for key, value in steady_resources(series, found).items()},
    }


def steady_resources(series: Series, found: Steady) -> dict[str, float]:
    """The mean of each resource figure over the steady windows ``found`` (NaN where none was sampled)."""
    kept = slice(found.first, found.last + 1)
    seconds = np.asarray(series.seconds[kept], dtype=float)
    means = {}
    for key, values in series.resources.items():
        figures = np.asarray(values[kept], dtype=float)
        known = np.isfinite(figures)
        means[key] = float((figures[known] * seconds[known]).sum() / seconds[known].sum()) if known.any() else math.nan
    return means


def steady_rates(records: pd.DataFrame) -> bool:
    """Whether the steady rate stands (:func:`kperf.achieved.steady_stands`) for every record of ``records`` (else
    the whole runs' rates stand for all of them, so that repeats are compared on one footing)."""
    rates, windows = records.get("steady_records_per_s"), records.get("steady_windows")
    if rates is None or windows is None:
        return False
    return all(steady_stands(rate, count) for rate, count in zip(rates.astype(float), windows.astype(float)))

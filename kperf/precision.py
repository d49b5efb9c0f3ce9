"""How tight a point's rate is known from its repeats: the half-width of its 95% interval over its mean rate,
over the repeats' steady rates (their windows' batch-means intervals) where they stand, else their whole runs'."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kperf.results import UNIT, succeeded
from kperf.steady import CONFIDENCE, MIN_BATCHES, batches, steady_rates

if TYPE_CHECKING:
    import pandas as pd

POOL_QUANTILE = 0.5  # repeats are pooled when their spread is below the median the F distribution gives it (precision)


def precision(rates: Sequence[float], halves: Sequence[float], confidence: float = CONFIDENCE,
              batch_counts: Sequence[int] | None = None) -> float:
    """How tight a point's rate is known: the half-width of its 95% interval over the mean rate.

    With one repeat, that run's batch-means half-width (``halves``). From two
    repeats on, Student's t over the repeats' rates: their spread includes each
    run's own noise and the drift between runs, but with two repeats t has one
    degree of freedom (12.7), so it takes agreement within 1.6% to know a rate
    to 10%. When every repeat has its batch-means interval (``batch_counts``:
    its batches), the repeats are pooled instead when they differ less than
    their own windows say they would half the time (a preliminary F test,
    Bancroft's pooling, at ``POOL_QUANTILE``: the variance of the repeats'
    rates against the mean squared standard error of one, on n-1 and
    sum(batches-1) degrees of freedom): then the mean's standard error is
    sqrt(sum of squared standard errors) / n, on sum(batches-1) degrees of
    freedom. Repeats that disagree more keep the t over repeats. A drift
    between runs too small to be detected is then missed; pooling at the
    median rather than the usual 95% keeps the coverage of the mean over runs
    at 95% when that drift is as large as one run's standard error, and 92%
    at twice it (two repeats of 10 batches: ``tests/unit/test_precision.py``).
    NaN when no interval exists.
    """
    from scipy.special import stdtrit  # Student's t quantile; scipy loads only once a series is summarized

    values, spans = np.asarray(rates, dtype=float), np.asarray(halves, dtype=float)
    known = np.isfinite(values)
    if known.sum() == 1:
        return float(spans[known][0] / values[known][0]) if values[known][0] > 0 else math.nan
    mean, error, freedom = mean_error(rates, halves, confidence, batch_counts)
    return float(stdtrit(freedom, 0.5 + confidence / 2) * error / mean) if mean > 0 else math.nan


def mean_error(rates: Sequence[float], halves: Sequence[float], confidence: float = CONFIDENCE,
               batch_counts: Sequence[int] | None = None) -> tuple[float, float, float]:
    """A point's mean rate over its repeats, that mean's standard error and its degrees of freedom, as
    :func:`precision` explains (over the repeats, or pooled over their batches); one repeat's from its
    batch-means interval (``halves``, on ``batch_counts`` batches). NaN where no interval exists."""
    from scipy.special import fdtri, stdtrit  # quantiles; scipy loads only once a series is summarized

    values, spans = np.asarray(rates, dtype=float), np.asarray(halves, dtype=float)
    counts = np.asarray(batch_counts if batch_counts is not None else np.zeros(len(values)), dtype=float)
    known = np.isfinite(values)
    values, spans, counts = values[known], spans[known], counts[known]
    if len(values) == 0 or values.mean() <= 0:
        return math.nan, math.nan, math.nan
    quantile = 0.5 + confidence / 2
    if len(values) == 1:
        if counts[0] < MIN_BATCHES or not math.isfinite(spans[0]):
            return float(values[0]), math.nan, math.nan
        return float(values[0]), float(spans[0] / stdtrit(counts[0] - 1, quantile)), float(counts[0] - 1)
    spread = values.std(ddof=1)
    mean, error, freedom = float(values.mean()), float(spread / math.sqrt(len(values))), float(len(values) - 1)
    if (counts >= MIN_BATCHES).all() and np.isfinite(spans).all():
        errors = spans / stdtrit(counts - 1, quantile)  # each repeat's standard error
        pooled = float((counts - 1).sum())
        if spread**2 <= fdtri(len(values) - 1, pooled, POOL_QUANTILE) * float(np.mean(errors**2)):
            error, freedom = math.sqrt(float((errors**2).sum())) / len(values), pooled
    return mean, error, freedom


def precisions(records: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, point, client and role of ``records``: the repeats measured (``repeats``, and the next
    repeat's number, ``next_repeat``) and the :func:`precision` reached, failed units left out; on the steady rates when every repeat
    has one, else on the whole runs' rates (the stock tools before Kafka 4.2, and units too short for a steady state)."""

    def reached(group: pd.DataFrame) -> float:
        return precision(*unit_rates(group, steady_rates(group)))

    valid = succeeded(records)  # a failed repeat is no repeat ...
    if valid.empty:
        return valid[UNIT].assign(precision=[], repeats=[], next_repeat=[])
    grouped = valid.groupby(UNIT, sort=False)
    repeats = grouped["repeat"].nunique().rename("repeats")
    last = records.groupby(UNIT, sort=False)["repeat"].max().rename("next_repeat")  # ... but its number is taken
    return grouped.apply(reached, include_groups=False).rename("precision").to_frame().join([repeats, last + 1]).reset_index()


def unit_rates(group: pd.DataFrame, steady: bool) -> tuple[list[float], list[float], float, list[int]]:
    """The arguments of :func:`precision` and :func:`mean_error` for one unit's repeats: their steady rates with
    their half-widths and batch counts (``steady``), or their whole runs' rates without an interval."""
    if steady:
        counts = [batches(int(w)) if math.isfinite(w) else 0 for w in group["steady_windows"]]
        halves = ((group["steady_high"] - group["steady_low"]) / 2).tolist()
        return group["steady_records_per_s"].tolist(), halves, CONFIDENCE, counts
    return group["records_per_s"].tolist(), [math.nan] * len(group), CONFIDENCE, [0] * len(group)

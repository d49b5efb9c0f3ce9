"""A measured unit as a time series of fixed windows, and its steady state: warm-up and drain cut off, the rate
of what is left, and that rate's confidence interval from the windows themselves.

The drain is cut by what happened: every window from the one in which the
load stopped (the last record sent, or read) on. The warm-up is cut by MSER-5
(White 1997; Franklin and White 2008, "Stationarity tests and MSER-5"):
windows are averaged in batches of five, and the truncation point is the one
that minimizes the standard error of what remains, searched over the first
half. On a series with no warm-up at all it still cuts now and then (a third
of the time on white noise), which makes the interval below cover the true
rate somewhat less often than it claims: 93% for 95% on 60 to 200 windows of
white noise (``tests/unit/test_steady.py``). The interval is the batch-means
interval (Law and Kelton, "Simulation Modeling and Analysis", 9.5.3): the
steady windows are split into at most ``MAX_BATCHES`` equal batches, whose
rates are nearly independent, and Student's t over them gives a 95% interval
of the steady rate, centred on the steady windows' rate. With fewer than ``MIN_BATCHES`` batches no interval is
claimed (NaN), never a made-up one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kperf.results import Series

if TYPE_CHECKING:
    import pandas as pd

WINDOW_S = 1.0  # the default window: one second, OpenMessaging Benchmark's reporting interval
MSER_BATCH = 5
MAX_BATCHES = 10
MIN_BATCHES = 3
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


class Snapshots:
    """Cumulative counts taken as a measuring loop passes each window boundary: one comparison per loop turn.

    A snapshot taken late (the loop was busy) is dated at the boundary it
    passed, so counts land in the window they were made in, give or take one
    turn of the loop.
    """

    def __init__(self, start: float, width_s: float = WINDOW_S) -> None:
        self.width_s = width_s
        self.taken: list[tuple[float, int, int]] = [(start, 0, 0)]
        self.next_at = (math.floor(start / width_s) + 1) * width_s

    def take(self, now: float, records: int, size: int) -> None:
        boundary = math.floor(now / self.width_s) * self.width_s
        self.taken.append((boundary, records, size))
        self.next_at = boundary + self.width_s

    def close(self, end: float, records: int, size: int) -> tuple[tuple[float, int, int], ...]:
        """The snapshots, the last at ``end``."""
        return (*self.taken, (end, records, size))


def snapshots_to_series(
    snapshots: Sequence[Sequence[tuple[float, int, int]]], stopped: Sequence[float], width_s: float = WINDOW_S
) -> Series:
    """Merge the cumulative counts of several processes into one series on a common wall-clock grid.

    Each process gives ``(wall time, records so far, bytes so far)`` snapshots
    (:class:`Snapshots`), the first at its start with zero counts. Window ``k``
    is ``[k * width_s, (k + 1) * width_s)`` of the wall clock, so the processes'
    windows line up; counts between two snapshots fall in the window of the
    earlier one. ``stopped``: when each process's load stopped (its last record sent, or read).
    """
    taken = [s for s in snapshots if len(s) >= 2]
    if not taken:
        return Series(width_s, (), (), (), (), 0.0)
    first = math.floor(min(s[0][0] for s in taken) / width_s)
    last = math.floor(max(s[-1][0] for s in taken) / width_s)
    records = np.zeros(last - first + 1, dtype=np.int64)
    sizes = np.zeros(last - first + 1, dtype=np.int64)
    for snaps in taken:
        times = np.array([t for t, _, _ in snaps])
        index = np.floor(times[:-1] / width_s + 1e-9).astype(np.int64) - first  # 1e-9: a boundary's own window
        np.add.at(records, index, np.diff([r for _, r, _ in snaps]))
        np.add.at(sizes, index, np.diff([b for _, _, b in snaps]))
    begin = min(s[0][0] for s in taken)
    end = max(s[-1][0] for s in taken)
    edges = np.arange(first, last + 2) * width_s
    starts = np.maximum(edges[:-1], begin)
    stops = np.minimum(edges[1:], end)
    return Series(
        width_s, tuple((starts - begin).tolist()), tuple((stops - starts).tolist()), tuple(records.tolist()),
        tuple(sizes.tolist()), max(stopped, default=end) - begin,
    )


def window_rates(series: Series) -> np.ndarray:
    """Records per second of each window under load; NaN for a window shorter than half the width (its rate is
    noise) and for those from the one in which the load stopped (the drain)."""
    seconds = np.asarray(series.seconds, dtype=float)
    ends = np.asarray(series.starts_s, dtype=float) + seconds
    kept = (seconds >= series.width_s / 2) & (ends <= series.load_s)
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
    batch-means interval; None when the series has no full window under load."""
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
    rate = float(records.sum() / seconds.sum())
    half = batch_means_half_width(records, seconds, confidence)
    return Steady(int(positions[first]), int(positions[last]), rate, rate - half, rate + half)


def batch_means_half_width(records: np.ndarray, seconds: np.ndarray, confidence: float = CONFIDENCE) -> float:
    """Half the batch-means interval of the rate of ``records`` over ``seconds`` (window by window); NaN when
    fewer than MIN_BATCHES batches of at least one window each can be made."""
    batches = min(MAX_BATCHES, len(records))
    if batches < MIN_BATCHES:
        return math.nan
    size = len(records) // batches
    used = slice(len(records) - batches * size, None)  # whole batches, the earliest windows left over
    batch_rates = records[used].reshape(batches, size).sum(axis=1) / seconds[used].reshape(batches, size).sum(axis=1)
    from scipy.special import stdtrit  # Student's t quantile; scipy loads only once a series is summarized

    return float(stdtrit(batches - 1, 0.5 + confidence / 2) * batch_rates.std(ddof=1) / math.sqrt(batches))


def precision(rates: Sequence[float], halves: Sequence[float], confidence: float = CONFIDENCE) -> float:
    """How tight a point's rate is known: the half-width of its 95% interval over the rate. From two repeats
    on, Student's t over the repeats' rates (their spread includes each run's own noise and the drift between
    runs); with one, that run's batch-means half-width (``halves``); NaN when neither exists."""
    values = np.asarray(rates, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0 or values.mean() <= 0:
        return math.nan
    if len(values) == 1:
        return float(halves[0]) / float(values[0]) if len(halves) else math.nan
    from scipy.special import stdtrit

    half = stdtrit(len(values) - 1, 0.5 + confidence / 2) * values.std(ddof=1) / math.sqrt(len(values))
    return float(half / values.mean())


UNIT = ["point", "param.client", "role"]


def precisions(records: pd.DataFrame) -> pd.DataFrame:
    """Per point, client and role of ``records``: the repeats measured and the :func:`precision` reached, on the
    steady rate where a series was recorded, else on the whole run's rate (the stock tools)."""
    steady = records.get("steady_records_per_s")
    rate = records["records_per_s"] if steady is None else steady.fillna(records["records_per_s"])
    half = (records["steady_high"] - records["steady_low"]) / 2 if "steady_high" in records else rate * math.nan
    table = records[UNIT].assign(rate=rate, half=half)
    return (
        table.groupby(UNIT, sort=False)
        .apply(lambda g: precision(g["rate"].tolist(), g["half"].tolist()), include_groups=False)
        .rename("precision")
        .reset_index()
        .merge(records.groupby(UNIT, sort=False)["repeat"].nunique().rename("repeats").reset_index(), on=UNIT)
    )

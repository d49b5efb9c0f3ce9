"""A measured unit as a time series of fixed windows, and its steady state: warm-up and drain cut off, the rate
of what is left, and that rate's confidence interval from the windows themselves.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from kperf.errors import KperfError
from kperf.load import WINDOW_S
from kperf.results import Series

if TYPE_CHECKING:
    import pandas as pd

BIN_RATIO = 1.02  # a window's latencies are counted in bins this far apart: its percentiles are within 2%
Bins = tuple[tuple[int, int], ...]  # (bin, count) of the latencies of one window: small, picklable, summable
Snapshot = tuple[float, int, int, Bins, int]  # (wall time, records, bytes, latencies since the last, errors so far)
MSER_BATCH = 5
MAX_BATCHES = 10
MIN_BATCHES = 3
BATCH_WINDOWS = 5  # windows a batch holds at least: a lone window's rate correlates with its neighbours'
MIN_STEADY_WINDOWS = MIN_BATCHES * BATCH_WINDOWS  # from these on, a steady rate has its interval (and MSER can cut)

CONFIDENCE = 0.95
POOL_QUANTILE = 0.5  # repeats are pooled when their spread is below the median the F distribution gives it (precision)


@dataclass(frozen=True)
class ResourceSample:
    """What a resource sampler read over one interval ending at ``at`` (wall clock, epoch seconds)."""

    at: float
    seconds: float
    values: Mapping[str, float]  # e.g. client_cpu_pct, broker_rss_mib, host_cpu_pct (kperf.drivers.resources)


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


def to_bins(seconds: ArrayLike) -> Bins:
    """Latencies (seconds) counted in bins ``BIN_RATIO`` apart, from 1 microsecond up."""
    micros = np.maximum(np.asarray(seconds, dtype=float) * 1e6, 1.0)
    found = np.floor(np.log(micros) / math.log(BIN_RATIO)).astype(np.int64)
    if not len(found):
        return ()
    lowest = int(found.min())
    counts = np.bincount(found - lowest)  # linear time: this runs in the measuring loop, once per window
    (present,) = np.nonzero(counts)
    return tuple(zip((present + lowest).tolist(), counts[present].tolist()))


def bin_percentiles(bins: dict[int, int]) -> tuple[float, float, float]:
    """p50, p99 and max in ms of binned latencies (each the upper edge of its bin); NaN for no latency."""
    if not bins:
        return math.nan, math.nan, math.nan
    order = sorted(bins)
    cumulative = np.cumsum([bins[b] for b in order])
    edges_ms = [BIN_RATIO ** (b + 1) / 1000 for b in order]

    def at(q: float) -> float:
        return float(edges_ms[int(np.searchsorted(cumulative, q * cumulative[-1]))])

    return at(0.50), at(0.99), float(edges_ms[-1])


class Snapshots:
    """Cumulative counts, and the latencies since the last snapshot, taken as a measuring loop passes each window
    boundary: one comparison per loop turn.

    A snapshot taken late (the loop was busy) is dated at the boundary it
    passed, so counts land in the window they were made in, give or take one
    turn of the loop.
    """

    def __init__(self, start: float, width_s: float = WINDOW_S) -> None:
        self.width_s = width_s
        self.taken: list[Snapshot] = [(start, 0, 0, (), 0)]
        self.next_at = (math.floor(start / width_s) + 1) * width_s

    def take(self, now: float, records: int, size: int, latencies: Bins = (), errors: int = 0) -> None:
        boundary = math.floor(now / self.width_s) * self.width_s
        self.taken.append((boundary, records, size, latencies, errors))
        self.next_at = boundary + self.width_s

    def close(self, end: float, records: int, size: int, latencies: Bins = (), errors: int = 0) -> tuple[Snapshot, ...]:
        """The snapshots, the last at ``end``."""
        return (*self.taken, (end, records, size, latencies, errors))

def check_window(window_s: float, duration_s: float | None, records: int | None = None, rate: float = -1) -> None:
    """Refuse a time-series window that is not positive or longer than the point (its duration, or a paced
    point's records over its rate): such a series would have no full window to judge."""
    if not window_s > 0:
        raise KperfError(f"the time series' window must be positive seconds, got {window_s}")
    length = duration_s if duration_s is not None else (records / rate if records and rate > 0 else None)
    if length is not None and window_s > length:
        raise KperfError(f"the time series' window ({window_s:g} s) is longer than the point ({length:g} s): "
                         "shorten the window or lengthen the point")


def snapshots_to_series(
    snapshots: Sequence[Sequence[Snapshot]],
    stopped: Sequence[float],
    latency: str = "",
    began: Sequence[float] = (),
    width_s: float = WINDOW_S,
) -> Series:
    """Merge the cumulative counts of several processes into one series on a common wall-clock grid.

    Each process gives ``(wall time, records so far, bytes so far)`` snapshots
    (:class:`Snapshots`), the first at its start with zero counts. Window ``k``
    is ``[k * width_s, (k + 1) * width_s)`` of the wall clock, so the processes'
    windows line up; counts between two snapshots fall in the window of the
    earlier one, and so do the latencies the later one carries. ``stopped`` and
    ``began``: when each process's load stopped (its last record sent, or read)
    and began (its first record read; none: at its start); the series is under
    full load only while every process is, from the last to begin to the first
    to stop. ``latency``: which latency the snapshots' bins hold ("" if none).
    """
    taken = [s for s in snapshots if len(s) >= 2]
    if not taken:
        return Series(width_s, (), (), (), (), 0.0)  # nothing was measured
    first = math.floor(min(s[0][0] for s in taken) / width_s)
    last = math.floor(max(s[-1][0] for s in taken) / width_s)
    records = np.zeros(last - first + 1, dtype=np.int64)
    sizes = np.zeros(last - first + 1, dtype=np.int64)
    failed = np.zeros(last - first + 1, dtype=np.int64)
    latencies: list[dict[int, int]] = [{} for _ in range(last - first + 1)]
    for snaps in taken:
        times = np.array([s[0] for s in snaps])
        index = np.floor(times[:-1] / width_s + 1e-9).astype(np.int64) - first  # 1e-9: a boundary's own window
        np.add.at(records, index, np.diff([s[1] for s in snaps]))
        np.add.at(sizes, index, np.diff([s[2] for s in snaps]))
        np.add.at(failed, index, np.diff([s[4] for s in snaps]))
        for window, snap in zip(index.tolist(), snaps[1:]):
            for found, count in snap[3]:
                latencies[window][found] = latencies[window].get(found, 0) + count
    begin = min(s[0][0] for s in taken)
    end = max(s[-1][0] for s in taken)
    edges = np.arange(first, last + 2) * width_s
    starts = np.maximum(edges[:-1], begin)
    stops = np.minimum(edges[1:], end)
    p50, p99, top = zip(*(bin_percentiles(window) for window in latencies)) if latency else ((), (), ())
    return Series(
        width_s, tuple((starts - begin).tolist()), tuple((stops - starts).tolist()), tuple(records.tolist()),
        tuple(sizes.tolist()), min(stopped, default=end) - begin, max(began, default=begin) - begin, latency,
        tuple(p50), tuple(p99), tuple(top), started_at=begin, errors=tuple(failed.tolist()),
    )


def with_resources(series: Series, samples: Sequence[ResourceSample]) -> Series:
    """``series`` with each window's resource figures: the time-weighted mean of the sampling intervals whose
    middle falls in it (a sampler reads every half second, so a one-second window holds about two); NaN for a
    window no interval falls in. A series without a wall-clock start (``started_at``) is returned as it is."""
    if not samples or not series.starts_s or math.isnan(series.started_at):
        return series
    middles = np.array([s.at - s.seconds / 2 for s in samples]) - series.started_at
    starts = np.asarray(series.starts_s, dtype=float)
    window = np.searchsorted(starts, middles, side="right") - 1
    inside = (window >= 0) & (middles < starts[-1] + series.seconds[-1])
    columns: dict[str, tuple[float, ...]] = {}
    for key in sorted({k for s in samples for k in s.values}):
        values = np.array([s.values.get(key, math.nan) for s in samples], dtype=float)
        weights = np.array([s.seconds for s in samples]) * np.isfinite(values) * inside
        weighted = np.bincount(window[inside], (np.nan_to_num(values) * weights)[inside], len(starts))
        total = np.bincount(window[inside], weights[inside], len(starts))
        columns[key] = tuple(np.divide(weighted, total, out=np.full(len(starts), np.nan), where=total > 0).tolist())
    return replace(series, resources=columns)


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
    at twice it (two repeats of 10 batches: ``tests/unit/test_steady.py``).
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


UNIT = ["experiment", "point", "param.client", "role"]


def precisions(records: pd.DataFrame) -> pd.DataFrame:
    """Per experiment, point, client and role of ``records``: the repeats measured (``repeats``, and the next
    repeat's number, ``next_repeat``) and the :func:`precision` reached; on the steady rates when every repeat
    has one, else on the whole runs' rates (the stock tools before Kafka 4.2, and units too short for a steady state)."""

    def reached(group: pd.DataFrame) -> float:
        return precision(*unit_rates(group, steady_rates(group)))

    grouped = records.groupby(UNIT, sort=False)
    repeats, last = grouped["repeat"].nunique().rename("repeats"), grouped["repeat"].max().rename("next_repeat")
    return grouped.apply(reached, include_groups=False).rename("precision").to_frame().join([repeats, last + 1]).reset_index()


def steady_rates(records: pd.DataFrame) -> bool:
    """Whether every record of ``records`` has a steady rate (else the whole runs' rates stand for all of them)."""
    found = records.get("steady_records_per_s")
    return found is not None and bool(found.notna().all())


def unit_rates(group: pd.DataFrame, steady: bool) -> tuple[list[float], list[float], float, list[int]]:
    """The arguments of :func:`precision` and :func:`mean_error` for one unit's repeats: their steady rates with
    their half-widths and batch counts (``steady``), or their whole runs' rates without an interval."""
    if steady:
        counts = [batches(int(w)) if math.isfinite(w) else 0 for w in group["steady_windows"]]
        halves = ((group["steady_high"] - group["steady_low"]) / 2).tolist()
        return group["steady_records_per_s"].tolist(), halves, CONFIDENCE, counts
    return group["records_per_s"].tolist(), [math.nan] * len(group), CONFIDENCE, [0] * len(group)

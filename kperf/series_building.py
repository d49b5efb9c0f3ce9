"""Building a unit's time series: snapshots a measuring loop takes as it passes each window boundary, merged over
its processes onto one wall-clock grid, and the resources sampled meanwhile laid onto the same windows."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from kperf.errors import KperfError
from kperf.latency_bins import Bins, bin_percentiles
from kperf.load import WINDOW_S
from kperf.series import Series

# (wall time, records, bytes, latencies since the last as packed bins, errors so far)
Snapshot = tuple[float, int, int, np.ndarray, int]


def packed(latencies: Bins) -> np.ndarray:
    """A window's bins as one (n, 2) int32 array: 8 bytes a bin where a tuple of tuples takes about 110, so a run of
    hours keeps its windows in a few MiB (a 1 s window of a producer holds some 150 bins)."""
    return np.array(latencies, dtype=np.int32).reshape(-1, 2)


@dataclass(frozen=True)
class ResourceSample:
    """What a resource sampler read over one interval ending at ``at`` (wall clock, epoch seconds)."""

    at: float
    seconds: float
    values: Mapping[str, float]  # e.g. client_cpu_pct, broker_rss_mib, host_cpu_pct (kperf.drivers.resources)


class Snapshots:
    """Cumulative counts, and the latencies since the last snapshot, taken as a measuring loop passes each window
    boundary: one comparison per loop turn.

    A snapshot taken late (the loop was busy) is dated at the boundary it
    passed, so counts land in the window they were made in, give or take one
    turn of the loop.
    """

    def __init__(self, start: float, width_s: float = WINDOW_S) -> None:
        self.width_s = width_s
        self.taken: list[Snapshot] = [(start, 0, 0, packed(()), 0)]
        self.next_at = (math.floor(start / width_s) + 1) * width_s

    def take(self, now: float, records: int, size: int, latencies: Bins = (), errors: int = 0) -> None:
        boundary = math.floor(now / self.width_s) * self.width_s
        self.taken.append((boundary, records, size, packed(latencies), errors))
        self.next_at = boundary + self.width_s

    def close(self, end: float, records: int, size: int, latencies: Bins = (), errors: int = 0) -> tuple[Snapshot, ...]:
        """The snapshots, the last at ``end``."""
        return (*self.taken, (end, records, size, packed(latencies), errors))


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
    begin, end = min(s[0][0] for s in taken), max(s[-1][0] for s in taken)
    first, last = math.floor(begin / width_s), math.floor(end / width_s)
    (records, sizes, failed), latencies = _window_counts(taken, first, last - first + 1, width_s)
    edges = np.arange(first, last + 2) * width_s
    starts, stops = np.maximum(edges[:-1], begin), np.minimum(edges[1:], end)
    p50, p99, top = zip(*(bin_percentiles(window) for window in latencies)) if latency else ((), (), ())
    return Series(
        width_s, tuple((starts - begin).tolist()), tuple((stops - starts).tolist()), tuple(records.tolist()),
        tuple(sizes.tolist()), min(stopped, default=end) - begin, max(began, default=begin) - begin, latency,
        tuple(p50), tuple(p99), tuple(top), started_at=begin, errors=tuple(failed.tolist()),
    )


def _window_counts(taken: Sequence[Sequence[Snapshot]], first: int, windows: int,
                   width_s: float) -> tuple[np.ndarray, list[dict[int, int]]]:
    """The records, bytes and errors (an array's three rows) and the latency bins each of ``windows`` windows, from
    window ``first`` of the wall clock on, gained between the processes' snapshots ``taken``."""
    counts = np.zeros((3, windows), dtype=np.int64)
    latencies: list[dict[int, int]] = [{} for _ in range(windows)]
    for snaps in taken:
        times = np.array([s[0] for s in snaps])
        index = np.floor(times[:-1] / width_s + 1e-9).astype(np.int64) - first  # 1e-9: a boundary's own window
        for row, so_far in enumerate((1, 2, 4)):  # a snapshot's records, bytes and errors so far
            np.add.at(counts[row], index, np.diff([s[so_far] for s in snaps]))
        for window, snap in zip(index.tolist(), snaps[1:]):
            for found, count in snap[3].tolist():
                latencies[window][found] = latencies[window].get(found, 0) + count
    return counts, latencies


def with_resources(series: Series, samples: Sequence[ResourceSample]) -> Series:
    """``series`` with each window's resource figures: the time-weighted mean of the sampling intervals whose
    middle falls in it (a sampler reads every half second, so a one-second window holds about two); NaN for a
    window no interval falls in. Figures the series already holds and the samples do not (a group's lag a driver
    sampled, before the run's resources are added) stay. A series without a wall-clock start (``started_at``) is
    returned as it is."""
    if not samples or not series.starts_s or math.isnan(series.started_at):
        return series
    middles = np.array([s.at - s.seconds / 2 for s in samples]) - series.started_at
    starts = np.asarray(series.starts_s, dtype=float)
    window = np.searchsorted(starts, middles, side="right") - 1
    inside = (window >= 0) & (middles < starts[-1] + series.seconds[-1])
    columns: dict[str, tuple[float, ...]] = dict(series.resources)
    for key in sorted({k for s in samples for k in s.values}):
        values = np.array([s.values.get(key, math.nan) for s in samples], dtype=float)
        weights = np.array([s.seconds for s in samples]) * np.isfinite(values) * inside
        weighted = np.bincount(window[inside], (np.nan_to_num(values) * weights)[inside], len(starts))
        total = np.bincount(window[inside], weights[inside], len(starts))
        columns[key] = tuple(np.divide(weighted, total, out=np.full(len(starts), np.nan), where=total > 0).tolist())
    return replace(series, resources=columns)

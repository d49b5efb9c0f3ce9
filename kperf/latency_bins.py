"""Latencies counted in logarithmic bins: small, picklable and summable, so a measuring loop can hand each
window's latencies on and processes' windows can be merged, with percentiles within ``BIN_RATIO`` of the truth."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

BIN_RATIO = 1.02  # a window's latencies are counted in bins this far apart: its percentiles are within 2%
Bins = tuple[tuple[int, int], ...]  # (bin, count) of the latencies of one window: small, picklable, summable


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

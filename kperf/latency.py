"""Latency histograms: HdrHistogram in microseconds, bounded memory whatever the record count.

Histograms, not summaries, cross process boundaries (encoded), so that the
percentiles of P producer processes are those of all their records together.
"""

from __future__ import annotations

from collections.abc import Iterable

from hdrh.histogram import HdrHistogram

from kperf.results import LATENCY_STATS

MAX_US = 600_000_000  # 10 minutes: beyond it a record counts as the maximum
SIGNIFICANT_DIGITS = 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, MAX_US, SIGNIFICANT_DIGITS)


def record_seconds(histogram: HdrHistogram, seconds: float) -> None:
    """Record a latency given in seconds (clamped to the histogram's range)."""
    histogram.record_value(min(MAX_US, max(1, int(seconds * 1e6))))


def merge(encoded: Iterable[bytes]) -> HdrHistogram:
    """One histogram of all the encoded ones (from several processes)."""
    total = new_histogram()
    for blob in encoded:
        total.add(HdrHistogram.decode(blob))
    return total


def summary(histogram: HdrHistogram) -> dict[str, float]:
    """avg, p50, p95, p99, p99.9 and max in ms; empty when nothing was recorded."""
    if histogram.get_total_count() == 0:
        return {}
    at = histogram.get_value_at_percentile
    values_us = {
        "avg": histogram.get_mean_value(),
        "p50": at(50.0),
        "p95": at(95.0),
        "p99": at(99.0),
        "p999": at(99.9),
        "max": histogram.get_max_value(),
    }
    assert tuple(values_us) == LATENCY_STATS
    return {k: v / 1000.0 for k, v in values_us.items()}

"""Latency histograms: HdrHistogram in microseconds, bounded memory whatever the record count.

Histograms, not summaries, cross process boundaries (encoded), so that the
percentiles of P producer processes are those of all their records together.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import numpy as np
from hdrh.histogram import HdrHistogram

from kperf.latency_bins import Bins, to_bins
from kperf.results import LATENCY_STATS

MAX_US = 600_000_000  # 10 minutes: beyond it a record counts as the maximum
SIGNIFICANT_DIGITS = 3
BUFFER = 65_536  # latencies held before they are folded into the histogram: bounded memory (512 KiB)


class Recorder:
    """Latencies of a hot loop, buffered and folded into an HdrHistogram in bulk.

    HdrHistogram's record_value costs about 3 us in Python: once per record it
    would take half a core at 150k records/s. Buffered values are rounded to
    four significant digits (finer than the histogram's three), counted with
    numpy, and recorded once per distinct value with its count.
    """

    def __init__(self) -> None:
        self.histogram = new_histogram()
        self._buffer = array("d")

    def add(self, seconds: float) -> None:
        self._buffer.append(seconds)
        if len(self._buffer) >= BUFFER:
            self.flush()

    def add_many(self, seconds: np.ndarray) -> None:
        """Many latencies at once (a consumer's batch): one copy, no Python loop."""
        self._buffer.frombytes(np.asarray(seconds, dtype=np.float64).tobytes())
        if len(self._buffer) >= BUFFER:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        micros = np.clip(np.frombuffer(self._buffer, dtype=np.float64) * 1e6, 1, MAX_US)
        step = 10.0 ** np.maximum(np.floor(np.log10(micros)) - 3, 0)
        values, counts = np.unique((micros // step * step).astype(np.int64), return_counts=True)
        for value, count in zip(values.tolist(), counts.tolist()):
            self.histogram.record_value(value, count)
        self._buffer = array("d")

    def encode(self) -> bytes:
        """The histogram, everything buffered included, encoded to cross a process boundary."""
        self.flush()
        return self.histogram.encode()

    def window_bins(self) -> Bins:
        """Nothing: a plain Recorder keeps no window (a run without a time series)."""
        return ()


class WindowedRecorder(Recorder):
    """A Recorder that also keeps the latencies of the current window, for the unit's time series: whoever
    makes one takes :meth:`window_bins` at every window boundary, which bounds its memory."""

    def __init__(self) -> None:
        super().__init__()
        self._window = array("d")

    def add(self, seconds: float) -> None:  # Recorder.add inlined: this runs once per record
        self._window.append(seconds)
        self._buffer.append(seconds)
        if len(self._buffer) >= BUFFER:
            self.flush()

    def add_many(self, seconds: np.ndarray) -> None:
        self._window.frombytes(np.asarray(seconds, dtype=np.float64).tobytes())
        super().add_many(seconds)

    def window_bins(self) -> Bins:
        """The latencies added since the last call, binned (see :func:`kperf.latency_bins.to_bins`), and forgotten."""
        bins = to_bins(np.frombuffer(self._window, dtype=np.float64)) if self._window else ()
        self._window = array("d")
        return bins


def new_histogram() -> HdrHistogram:
    return HdrHistogram(1, MAX_US, SIGNIFICANT_DIGITS)


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
        "avg": mean_us(histogram),
        "p50": at(50.0),
        "p95": at(95.0),
        "p99": at(99.0),
        "p999": at(99.9),
        "max": histogram.get_max_value(),
    }
    assert tuple(values_us) == LATENCY_STATS
    return {k: v / 1000.0 for k, v in values_us.items()}


def mean_us(histogram: HdrHistogram) -> float:
    """``histogram.get_mean_value()``, the same number, without its Python loop over every recorded bucket (0.3 s a
    unit of 150,000 records): each bucket's count at the middle of its range, in numpy."""
    if not histogram.total_count:
        return 0.0
    filled = min(histogram.counts_len, histogram.encoder.payload.counts_len)  # a decoded one may hold fewer
    counts = np.ctypeslib.as_array(histogram.counts)[:filled].astype(np.int64)
    index = np.nonzero(counts)[0].astype(np.int64)
    half, magnitude = histogram.sub_bucket_half_count, histogram.sub_bucket_half_count_magnitude
    bucket = (index >> magnitude) - 1  # as HdrHistogram.get_value_from_index maps an index to its lowest value
    sub = (index & (half - 1)) + half
    first = bucket < 0
    sub[first] -= half
    bucket[first] = 0
    size = np.left_shift(1, bucket + histogram.unit_magnitude)
    lowest = sub << (bucket + histogram.unit_magnitude)
    return float(int(np.sum(counts[index] * (lowest + (size >> 1))))) / histogram.total_count

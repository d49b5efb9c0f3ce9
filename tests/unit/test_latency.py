"""Buffered latency recording gives the histogram recording each value would."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from kperf.drivers import latency


def test_buffered_recording_matches_recording_each_value() -> None:
    # Not measurements: a wide spread of values (1 us to minutes) to exercise every bucket range.
    values = np.random.default_rng(7).lognormal(np.log(0.005), 2.0, 200_000).tolist()
    recorder, exact = latency.Recorder(), latency.new_histogram()
    for seconds in values:
        recorder.add(seconds)
        exact.record_value(min(latency.MAX_US, max(1, int(seconds * 1e6))))
    recorder.flush()
    buffered, each = latency.summary(recorder.histogram), latency.summary(exact)
    assert recorder.histogram.get_total_count() == len(values)
    for stat in each:
        assert buffered[stat] == pytest.approx(each[stat], rel=2e-3), stat


def test_merged_histograms_of_two_processes_count_every_record() -> None:
    one, two = latency.Recorder(), latency.Recorder()
    for i in range(1000):
        one.add(0.001)
        two.add(0.1 if i % 100 == 0 else 0.001)
    merged = latency.merge([one.encode(), two.encode()])
    assert merged.get_total_count() == 2000
    assert latency.summary(merged)["p999"] == pytest.approx(100, rel=1e-2)  # 10 slow records of 2000


@pytest.mark.parametrize("kind", [latency.Recorder, latency.WindowedRecorder])
def test_adding_a_batch_records_what_adding_each_value_would(kind: type[latency.Recorder]) -> None:
    values = np.random.default_rng(3).lognormal(np.log(0.005), 1.0, 3 * latency.BUFFER // 2)
    each, bulk = kind(), kind()
    for seconds in values.tolist():
        each.add(seconds)
    for part in np.array_split(values, 7):
        bulk.add_many(part)
    assert bulk.window_bins() == each.window_bins()
    assert bulk.encode() == each.encode()


@pytest.mark.parametrize(("seed", "lowest"), [(0, 1), (1, 1), (2, 1), (3, 1000), (4, 1_000_000)])
def test_the_mean_is_hdrhistograms_own_to_the_last_bit(seed: int, lowest: int) -> None:
    """Kperf's own histograms (lowest 1 us), merged and decoded as a measurement's are, and coarser ones (a unit
    magnitude above 0)."""
    rng = np.random.default_rng(seed)
    values = rng.lognormal(-6 + seed, 1.5, 20_000)  # seconds: tens of microseconds to minutes
    recorder = latency.Recorder()
    recorder.add_many(values)
    recorder.flush()
    coarse = HdrHistogram(lowest, latency.MAX_US, latency.SIGNIFICANT_DIGITS)
    for value in np.minimum(values * 1e6, latency.MAX_US).astype(np.int64):
        coarse.record_value(int(value))
    for histogram in (latency.merge([recorder.histogram.encode()]), HdrHistogram.decode(recorder.histogram.encode()),
                      coarse):
        assert latency.mean_us(histogram) == histogram.get_mean_value()
    assert latency.mean_us(latency.new_histogram()) == latency.new_histogram().get_mean_value() == 0.0

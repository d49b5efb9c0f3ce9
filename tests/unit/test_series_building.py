"""Building a time series: the processes' snapshots merge onto one wall-clock grid without losing a record, their
window latencies merge within a bin, and resource samples land in the window their middle falls in."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from kperf.latency_bins import BIN_RATIO, to_bins
from kperf.series import Series
from kperf.series_building import ResourceSample, Snapshots, snapshots_to_series, with_resources


def test_snapshots_of_several_processes_merge_on_one_grid_and_keep_every_record() -> None:
    first, second = Snapshots(100.3), Snapshots(100.6)
    for now, count, failed in ((101.05, 70, 0), (102.2, 170, 2), (103.0, 270, 2)):
        first.take(now, count, count * 10, errors=failed)
    for now, count in ((101.0, 40), (102.0, 140)):
        second.take(now, count, count * 10)
    series = snapshots_to_series([first.close(103.4, 300, 3000, errors=5), second.close(102.7, 200, 2000, errors=1)],
                                 [103.1, 102.5])
    assert series.records == (70 + 40, 100 + 100, 100 + 60, 30) and sum(series.bytes) == 5000
    assert series.errors == (0, 2, 1, 3)  # each process's failures in the window they happened in
    assert series.starts_s == pytest.approx((0.0, 0.7, 1.7, 2.7)) and series.seconds == pytest.approx((0.7, 1, 1, 0.4))
    assert series.load_s == pytest.approx(2.2)  # the earlier of the two stops: both processes under load until then


def test_window_latencies_merge_across_processes_and_give_percentiles_within_a_bin() -> None:
    rng = np.random.default_rng(3)
    first_ms, second_ms = rng.lognormal(1.0, 0.5, 6000), rng.lognormal(2.0, 0.3, 4000)
    one, two = Snapshots(100.0), Snapshots(100.0)
    series = snapshots_to_series(
        [one.close(100.9, 6000, 0, to_bins(first_ms / 1000)), two.close(100.8, 4000, 0, to_bins(second_ms / 1000))],
        [100.9, 100.8], latency="ack",
    )
    together = np.concatenate([first_ms, second_ms])
    (p50,), (p99,), (top,) = series.latency_p50_ms, series.latency_p99_ms, series.latency_max_ms
    for found, exact in ((p50, np.percentile(together, 50)), (p99, np.percentile(together, 99)), (top, together.max())):
        assert exact <= found * (1 + 1e-9) and found <= exact * BIN_RATIO**2  # the upper edge of the right bin


def test_resource_samples_land_in_the_window_their_middle_falls_in_time_weighted() -> None:
    unaligned = Series(1.0, (0.0, 1.0, 2.0, 3.0, 4.0), (1.0,) * 5, (100,) * 5, (0,) * 5, 5.0)  # no wall-clock start
    series = replace(unaligned, started_at=1000.0)
    samples = [ResourceSample(1000.5, 0.5, {"client_cpu_pct": 10.0}), ResourceSample(1001.0, 0.5, {"client_cpu_pct": 30.0}),
               ResourceSample(1002.0, 1.0, {"client_cpu_pct": 50.0, "host_cpu_pct": 80.0}),
               ResourceSample(1003.6, 1.6, {"client_cpu_pct": 70.0}),  # its middle, 1002.8, is in window 2
               ResourceSample(1010.0, 0.5, {"client_cpu_pct": 999.0})]  # after the series: dropped
    found = with_resources(series, samples).resources
    assert found["client_cpu_pct"][:3] == (20.0, 50.0, 70.0)
    assert all(math.isnan(v) for v in found["client_cpu_pct"][3:])  # no sample: unknown, never zero
    assert found["host_cpu_pct"][1] == 80.0 and math.isnan(found["host_cpu_pct"][0])
    assert with_resources(unaligned, samples).resources == {}  # no wall-clock start: not aligned


def test_resource_samples_keep_the_figures_a_driver_sampled_before() -> None:
    lagged = Series(1.0, (0.0, 1.0), (1.0,) * 2, (100,) * 2, (0,) * 2, 2.0, started_at=1000.0,
                    resources={"group_lag_records": (5.0, 7.0)})
    found = with_resources(lagged, [ResourceSample(1000.5, 0.5, {"client_cpu_pct": 10.0})]).resources
    assert found["group_lag_records"] == (5.0, 7.0) and found["client_cpu_pct"][0] == 10.0

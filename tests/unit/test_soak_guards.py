"""What keeps a long run (a soak) visible and within the disk: its progress lines, the disk checks, and windows kept
small in memory."""

from __future__ import annotations

import io
import math
import shutil
import sys
from pathlib import Path

import pytest

from kperf.drivers import disk_room
from kperf.drivers.progress import Progress, line
from kperf.errors import KperfError, MeasurementFailed
from kperf.latency_bins import to_bins
from kperf.series_building import Snapshots, snapshots_to_series


def test_a_progress_line_gives_the_time_the_rate_and_the_p99_over_its_span() -> None:
    bins = dict(to_bins([0.001] * 99 + [0.010]))
    assert line("producer 7 to soak", 600.4, 3600, 1_200_000, 60.0, bins) == (
        "kperf: producer 7 to soak: 10:00 of 60:00, 20,000 records/s, p99 1.0 ms over the last 60 s")
    assert line("consumer 7 of soak", 75, None, 30, 60.0, {}) == "kperf: consumer 7 of soak: 1:15, 0 records/s over the last 60 s"


def test_progress_is_written_once_a_span_passed_and_never_when_not_asked() -> None:
    out = io.StringIO()
    progress = Progress("producer 1 to t", 1000.0, 120.0, 60.0, out)
    for second in range(1, 121):
        progress.update(1000.0 + second, second * 10, to_bins([0.002]))
    lines = out.getvalue().splitlines()
    assert lines == ["kperf: producer 1 to t: 1:00 of 2:00, 10 records/s, p99 2.0 ms over the last 60 s",
                     "kperf: producer 1 to t: 2:00 of 2:00, 10 records/s, p99 2.0 ms over the last 60 s"]
    silent = Progress("producer 1 to t", 1000.0, 120.0, 0.0, out)
    silent.update(5000.0, 10, ())
    assert out.getvalue().splitlines() == lines


def test_a_run_that_would_leave_less_than_the_floor_free_is_refused_naming_retention(tmp_path: Path) -> None:
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(KperfError, match="set retention.bytes on soak"):
        disk_room.require_room(str(tmp_path), free, "soak")
    if free >= disk_room.FLOOR_BYTES:  # an unpaced run of a duration: not known, so only the floor is checked
        disk_room.require_room(str(tmp_path), math.inf, "soak")
    disk_room.DiskWatch("").check()  # no folder (a user's cluster): nothing watched
    disk_room.DiskWatch(str(tmp_path / "elsewhere")).check()  # not on this host (a Dask worker's): nothing watched


def test_a_running_unit_fails_once_the_disk_has_less_than_the_floor_free(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    watch = disk_room.DiskWatch(str(tmp_path))
    watch.check()  # as much free as there is: fine while it is above the floor
    monkeypatch.setattr(disk_room, "FLOOR_BYTES", shutil.disk_usage(tmp_path).total + 1)  # more than the disk holds
    with pytest.raises(MeasurementFailed, match=r"^the brokers' disk \(.*\) had .* GiB free, under the .* kperf keeps: "
                                                r"the run stopped") as failed:
        watch.check()
    assert failed.value.cause == disk_room.FULL


def test_snapshots_keep_a_window_in_a_few_bytes_a_bin_and_give_the_same_percentiles() -> None:
    latencies = to_bins([0.001 * (1 + i % 150) for i in range(20_000)])  # about 150 bins: a producer's busy window
    taken = Snapshots(100.0)
    for second in range(101, 111):
        taken.take(float(second), second, second, latencies)
    windows = taken.close(110.5, 110, 110)
    kept = sum(sys.getsizeof(w[3]) for w in windows[1:])  # an array that owns its data counts it
    as_tuples = sys.getsizeof(latencies) + sum(sys.getsizeof(pair) + sum(map(sys.getsizeof, pair)) for pair in latencies)
    assert kept < 10 * (8 * len(latencies) + 200) < 10 * as_tuples / 5  # 8 bytes a bin, against over 40 as tuples
    series = snapshots_to_series([windows], [110.5], "ack")
    assert series.latency_p99_ms[1] == pytest.approx(series.latency_p99_ms[2])
    assert series.latency_p99_ms[1] == pytest.approx(149, rel=0.03)

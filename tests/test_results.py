"""Result records and their store: flat rows, atomic files, nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from kperf import stats
from kperf.results import MIB, Measurement, Result, ResultStore, Verification


def result(point: str = "batch.size=16384", repeat: int = 0, seconds: float = 2.0) -> Result:
    return Result(
        run_id="run-1",
        experiment="batch",
        point=point,
        repeat=repeat,
        params={"records": 1000, "batch.size": 16384},
        measurement=Measurement(
            role="producer",
            client="python",
            records=1000,
            bytes=1000 * 1024,
            seconds=seconds,
            latency_ms={"ack": {"avg": 1.5, "p50": 1.0, "p95": 3.0, "p99": 4.0, "p999": 5.0, "max": 6.0}},
            errors={"MSG_TIMED_OUT": 2},
            verification=Verification(expected=1000, missing=2, duplicated=0),
            resources={"broker_cpu_pct": 80.0},
        ),
        environment={"kafka_version": "4.1.1"},
    )


def test_row_is_flat_and_derives_rates() -> None:
    row = result().row()
    assert row["param.batch.size"] == 16384 and row["env.kafka_version"] == "4.1.1"
    assert row["records_per_s"] == 500.0
    assert row["mib_per_s"] == pytest.approx(1000 * 1024 / MIB / 2.0)
    assert row["latency_ack_p999_ms"] == 5.0
    assert row["errors"] == 2 and row["error.MSG_TIMED_OUT"] == 2
    assert row["verified"] is False and row["missing"] == 2
    assert row["res.broker_cpu_pct"] == 80.0


def test_store_appends_one_file_per_record_and_reads_back_in_order(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results")
    for repeat in range(3):
        store.append(result(repeat=repeat))
    table = store.load("batch")
    assert list(table["repeat"]) == [0, 1, 2]
    assert len(list((tmp_path / "results").glob("*.parquet"))) == 3
    assert not list((tmp_path / "results").glob(".*"))  # no temporary file left behind
    assert store.load("codecs").empty


def test_summary_flags_an_unstable_point() -> None:
    # Real repeats (records/s) of the quick profile's batch experiment on the
    # 2-core CI machine, 2026-11-22: batch.size=10000 in two runs of the study.
    table = pd.DataFrame(
        {
            "point": ["steady"] * 3 + ["noisy"] * 3,
            "records_per_s": [128875.0, 153197.0, 132115.0, 177823.0, 122137.0, 146935.0],
        }
    )
    summary = stats.summarize(table, ["point"]).set_index("point")
    assert summary.loc["steady", "median"] == 132115.0 and not summary.loc["steady", "unstable"]
    assert summary.loc["steady", "cv"] == pytest.approx(0.0957, abs=1e-4)
    assert summary.loc["noisy", "unstable"] and summary.loc["noisy", "cv"] == pytest.approx(0.1873, abs=1e-4)
    # Three repeats allow 75% coverage: the interval is their range.
    assert (summary.loc["steady", "median_low"], summary.loc["steady", "median_high"]) == (128875.0, 153197.0)
    assert summary.loc["steady", "coverage"] == pytest.approx(0.75)


def test_median_interval_reaches_95_percent_from_six_repeats() -> None:
    assert stats.median_interval([3.0, 1.0]) == (1.0, 3.0, 0.5)
    assert stats.median_interval(range(1, 6))[2] == pytest.approx(0.9375)  # five: the range, 93.75%
    assert stats.median_interval(range(1, 7)) == (1.0, 6.0, pytest.approx(1 - 2 / 64))
    # Twenty repeats: [x_(6), x_(15)] (R's binom-based median CI for n=20 gives 95.9%).
    low, high, coverage = stats.median_interval(range(1, 21))
    assert (low, high) == (6.0, 15.0) and coverage == pytest.approx(0.9586, abs=1e-4)


def test_comparison_of_two_settings() -> None:
    clear = stats.compare("lz4", [100.0, 102.0, 101.0], "gzip", [50.0, 51.0, 49.0])
    assert clear.significant and clear.ratio == pytest.approx(101 / 50) and clear.p_value < 1e-4
    close = stats.compare("lz4", [100.0, 120.0], "gzip", [95.0, 118.0])
    assert not close.significant and "not significant" in close.sentence()
    assert not stats.compare("a", [1.0], "b", [2.0]).significant  # one repeat: no test, no claim

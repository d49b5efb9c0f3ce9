"""Result records and their store: flat rows, atomic files, nothing half-written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from kperf.results import MIB, Measurement, Result, ResultStore, Verification
from kperf.series import Series
from tests.helpers import DATA


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


def test_a_records_series_is_stored_beside_it_and_loads_with_its_steady_state(tmp_path: Path) -> None:
    windows = Series(1.0, (0.0, 0.5, 1.5, 2.5, 3.5), (0.5, 1.0, 1.0, 1.0, 0.2), (100, 230, 240, 230, 200), (1,) * 5, 3.6)
    measured = result()
    store = ResultStore(tmp_path / "results")
    store.append(replace(measured, measurement=replace(measured.measurement, series=windows)), result(repeat=1))
    with_series, without = store.load("batch").to_dict("records")
    loaded = store.series(with_series)
    assert list(loaded["records"]) == [100, 230, 240, 230, 200] and loaded["records_per_s"].iloc[1] == 230
    # the first window is half a window (kept), the last is shorter (cut), and so is the drain after 3.6 s
    assert with_series["steady_windows"] == 4 and with_series["steady_end_s"] == 3.5
    assert with_series["steady_records_per_s"] == pytest.approx((100 + 230 + 240 + 230) / 3.5)
    assert store.series(without).empty and pd.isna(without["steady_records_per_s"])


def test_records_carry_their_schema_version_and_older_runs_still_load(tmp_path: Path) -> None:
    """The sample run was recorded before the ``schema`` column (but for share_groups, transactions, rebalance and
    faults, recorded again later): it reads as version 1, beside new records."""
    from kperf.errors import KperfError
    from kperf.results import FIRST_SCHEMA, SCHEMA_VERSION

    sample = DATA / "sample-run" / "results"
    old = ResultStore(sample).load()
    later = ["share_groups", "transactions", "rebalance", "faults"]
    assert not old.empty and set(old.loc[~old["experiment"].isin(later), "schema"]) == {FIRST_SCHEMA}
    store = ResultStore(tmp_path)
    (tmp_path / "batch-sample.parquet").write_bytes((sample / "batch.parquet").read_bytes())
    store.append(result())
    mixed = store.load("batch")
    assert set(mixed["schema"]) == {FIRST_SCHEMA, SCHEMA_VERSION} and mixed["schema"].iloc[-1] == SCHEMA_VERSION
    future = tmp_path / "batch-future.parquet"
    pd.DataFrame([{**result().row(), "schema": SCHEMA_VERSION + 1}]).to_parquet(future, index=False)
    with pytest.raises(KperfError, match=rf"^{future}: result records of schema version {SCHEMA_VERSION + 1}, newer"):
        store.load("batch")


def test_a_measurements_steady_state_is_computed_once_and_carried_with_added_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    from kperf import steady

    computed = []
    monkeypatch.setattr(steady, "columns", lambda series: computed.append(series) or {"steady_records_per_s": 600.0,
                                                                                      "steady_windows": 20})
    windows = Series(1.0, (0.0, 1.0), (1.0, 1.0), (500, 700), (0, 0), 2.0)
    measured = replace(result().measurement, series=windows)
    record = replace(result(), measurement=measured.with_measures({"slo_margin": -1.0}))
    assert measured.achieved_records_per_s(at_least=21) == measured.records_per_s == 500
    assert measured.achieved_records_per_s() == 600.0 == record.row()["steady_records_per_s"] == record.row()["steady_records_per_s"]
    assert record.row()["slo_margin"] == -1.0 and computed == [windows]  # once, whoever read it

"""A run's failed units: named once each, measured again on --resume (not counted as recorded), never beside their
new record, and not taken for imprecise points."""

from pathlib import Path

import pandas as pd

from kperf.results import FAILED, Measurement, Result, ResultStore
from kperf.study import failures, plan, profiles, sweep


def _units() -> list[plan.Unit]:
    return plan.units("batch", profiles.parameters("batch", "smoke", clients=["python"]))


def _record(run_dir: Path, unit: plan.Unit, *measured: Measurement) -> None:
    params = {**unit.point.params, "client": unit.client}
    ResultStore.of_run(run_dir).append(*(Result("run", "batch", unit.point.name, unit.repeat, params, m, {})
                                         for m in measured))


def _ran(role: str = "producer") -> Measurement:
    """A valid run of any of the smoke batch units (kperf.validity): every record asked, over 2 s."""
    records = _units()[0].point.workload.records
    return Measurement(role=role, client="python", records=records, bytes=100 * records, seconds=2.0)


def test_a_failed_unit_is_named_once_with_its_reasons_and_is_not_recorded(tmp_path: Path) -> None:
    ok, failed, half = _units()[:3]
    _record(tmp_path, ok, _ran())
    reason = "e2e-latency failed (exit code 1): poll() timed out"
    _record(tmp_path, failed, Measurement.failed("producer", "python", reason),
            Measurement.failed("consumer", "python", reason))
    _record(tmp_path, half, _ran(), Measurement(role="consumer", client="python", records=0, bytes=0, seconds=1.0))
    named = failures.of_run(tmp_path)
    assert [(u.point, u.repeat, u.reason) for u in named] == [
        (failed.point.name, failed.repeat, reason), (half.point.name, half.repeat, "consumer read no record")]
    assert named[0].line() == f"batch: {failed.point.name} [python, repeat {failed.repeat}] failed: {reason}"
    assert sweep.recorded(tmp_path, "batch") == {ok.key}


def test_failed_units_files_are_removed_before_they_are_measured_again(tmp_path: Path) -> None:
    ok, failed = _units()[:2]
    _record(tmp_path, ok, _ran())
    _record(tmp_path, failed, Measurement.failed("producer", "python", "no group formed"))
    store = ResultStore.of_run(tmp_path)
    assert store.remove_failed("batch") == 1
    left = store.load("batch")
    assert list(left["point"]) == [ok.point.name] and left[FAILED].isna().all()
    assert store.remove_failed("batch") == 0


def test_a_failed_repeat_is_no_precision_and_its_number_is_taken() -> None:
    settings = profiles.parameters("batch", "smoke", clients=["python"], repeats=2, extra_repeats=2, precision=0.05)
    units = plan.units("batch", settings)
    first, second = list(dict.fromkeys(u.point.name for u in units))[:2]

    def row(point: str, repeat: int, rate: float | None) -> dict[str, object]:
        return {"experiment": "batch", "point": point, "param.client": "python", "role": "producer", "repeat": repeat,
                "records_per_s": rate, FAILED: None if rate else "producer wrote no record"}

    records = pd.DataFrame([row(first, 0, 1000.0), row(first, 1, None), row(second, 0, None), row(second, 1, None)])
    extra = sweep.imprecise(records, units, settings)
    assert [(u.point.name, u.repeat) for u in extra] == [(first, 2)]  # one rate has no interval; the second no rate

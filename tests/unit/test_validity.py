"""The rules of a valid measurement (kperf.validity), one row each, and a failed record through Result.row()."""

from __future__ import annotations

from typing import Any

import pytest

from kperf import validity
from kperf.results import FAILED, Measurement, Result
from kperf.series import Series

# A valid producer of the study: 100,000 records asked and written over 2 s of 0.1 s windows, in 20 of them.
VALID = {"role": "producer", "records": 100_000, "errors": 0, "seconds": 2.0, "param.records": 100_000,
         "param.window_s": 0.1, "windows": 20, "windows_with_records": 20}


@pytest.mark.parametrize(("change", "reason"), [
    ({}, None),
    ({"records": 0}, "producer wrote no record"),
    ({"role": "consumer", "records": 0}, "consumer read no record"),
    ({"records": None}, "producer wrote no record"),
    # what was asked
    ({"role": "consumer", "records": 99_999}, "consumer read 99,999 of the 100,000 records asked"),
    ({"records": 99_000, "errors": 1_000}, None),  # failed sends are a finding (the fault experiment's), not a shortfall
    ({"records": 99_000, "errors": 10}, "producer wrote 99,000 of the 100,000 records asked"),
    ({"records": 99_000, "errors": None}, "producer wrote 99,000 of the 100,000 records asked"),
    ({"role": "end-to-end", "records": 200, "param.round_trips": 2_000}, "end-to-end read 200 of the 2,000 records asked"),
    ({"role": "end-to-end", "records": 2_000, "param.round_trips": 2_000}, None),
    ({"param.records": None, "param.duration_s": 10.0, "seconds": 4.0}, "producer ran 4.00 s of the 10 s asked"),
    ({"param.records": None, "param.duration_s": 10.0, "seconds": 4.0, validity.GAVE_UP: 5}, None),  # it fell behind
    ({"role": "consumer", "param.records": None, "param.duration_s": 10.0, "seconds": 4.0}, None),  # it read all there was
    # the span
    ({"seconds": 0.35}, "rate over 0.35 s, below the 1 s a rate needs"),
    ({"param.window_s": 1.0, "seconds": 1.5}, "rate over 1.50 s, below the 2 s (2 windows of 1 s) a rate needs"),
    ({"param.window_s": None, "seconds": 1.0}, None),  # an imported tool's output: 1 s
    # two fetches or windows
    ({"role": "consumer", "fetches": 1}, "all 100,000 records came in 1 fetch: a rate needs 2 or more"),
    ({"role": "consumer", "fetches": 2, "windows_with_records": 1}, None),  # the fetches counted rule
    ({"windows_with_records": 1}, "all 100,000 records came in 1 window of the 20 of its time series: a rate needs 2 or more"),
    ({"windows": 1, "windows_with_records": 1}, None),  # one window (a stock tool's 5 s line): nothing to tell
])
def test_each_rule_fails_a_record_with_its_numbers_in_words(change: dict[str, Any], reason: str | None) -> None:
    assert validity.failure({**VALID, **change}) == reason


def test_the_first_rule_broken_is_the_reason() -> None:
    assert validity.failure({**VALID, "records": 10, "seconds": 0.1}) == "producer wrote 10 of the 100,000 records asked"


def test_the_shortest_span_is_a_second_or_two_windows() -> None:
    assert validity.min_span_s(0.1) == 1.0 and validity.min_span_s(1.0) == 2.0


def test_a_failed_record_has_its_reason_no_rate_and_no_limit() -> None:
    """A consumer whose records all came in one window (the 1e10 records/s of issue 24) through the real record."""
    series = Series(0.1, tuple(i / 10 for i in range(30)), (0.1,) * 30, (0,) * 29 + (10_000,), (0,) * 29 + (10**7,), 3.0)
    measured = Measurement("consumer", "python", 10_000, 10**7, 3.0, series=series, measures={"fetch_records_per_s": 1e10})
    row = Result("run", "batch", "p", 0, {"records": 10_000, "window_s": 0.1}, measured, {}).row()
    assert row[FAILED] == "all 10,000 records came in 1 window of the 30 of its time series: a rate needs 2 or more"
    assert row["records_per_s"] is None and row["fetch_records_per_s"] is None and "limit" not in row
    assert (row["windows"], row["windows_with_records"]) == (30, 1)
    raised = Result("run", "batch", "p", 0, {}, Measurement.failed("consumer", "java", "group did not form in 60 s"), {})
    assert raised.row()[FAILED] == "group did not form in 60 s"


def test_a_failed_repeat_is_no_repeat_but_its_number_is_taken() -> None:
    import pandas as pd

    from kperf.precision import precisions

    unit = {"experiment": "batch", "point": "p", "param.client": "python", "role": "producer", "records_per_s": 100.0}
    records = pd.DataFrame([{**unit, "repeat": 0, FAILED: None}, {**unit, "repeat": 1, FAILED: "producer wrote no record"}])
    (row,) = precisions(records).to_dict("records")
    assert (row["repeats"], row["next_repeat"]) == (1, 2)
    assert precisions(records.assign(**{FAILED: "producer wrote no record"})).empty


@pytest.mark.parametrize(
    ("row", "cause"),
    [
        ({"role": "consumer", "records": 0}, validity.NO_RECORD),
        ({"role": "consumer", "records": 10, "param.records": 20, "seconds": 5.0}, validity.SHORT_OF_ASKED),
        ({"role": "consumer", "records": 20, "param.records": 20, "seconds": 0.5}, validity.TOO_SHORT),
        ({"role": "consumer", "records": 20, "param.records": 20, "seconds": 5.0, "fetches": 1}, validity.TOO_FEW_BATCHES),
        ({"role": "consumer", "records": 20, "param.records": 20, "seconds": 5.0, "fetches": 2}, None),
    ],
)
def test_each_rule_has_a_stable_cause_the_breaker_can_count(row: dict, cause: str | None) -> None:
    assert validity.cause(row) == cause
    assert (validity.failure(row) is None) == (cause is None)

"""Calibration: a unit too short to give a rate is sized up by what it lacked, and only then."""

import pytest

from kperf.load import Workload
from kperf.results import Measurement, Result
from kperf.study import calibration
from kperf.study.experiment import point


def _row(records: int, seconds: float, asked: int = 10_000, window_s: float = 0.1) -> dict:
    measured = Measurement(role="consumer", client="python", records=records, bytes=records * 100, seconds=seconds,
                           measures={"fetches": 10})
    return Result("run", "batch", "p", 0, {"records": asked, "window_s": window_s}, measured, {}).row()


def test_a_valid_unit_is_not_scaled() -> None:
    assert calibration.scale([_row(10_000, 2.0)]) is None


def test_a_unit_short_of_the_span_is_scaled_to_thrice_what_it_lacked() -> None:
    assert calibration.scale([_row(10_000, 0.25), _row(10_000, 2.0)]) == pytest.approx(4 * calibration.first_margin(4))


def test_the_longest_shortfall_of_the_unit_sets_the_scale() -> None:
    assert calibration.scale([_row(10_000, 0.5), _row(10_000, 0.1)]) == pytest.approx(10 * calibration.FIRST_MARGIN)


@pytest.mark.parametrize(("seconds", "margin"), [(0.93, 2.0), (0.5, 2.5), (0.25, 3.5), (0.2, 4.0), (0.05, 4.0)])
def test_a_near_miss_is_sized_to_twice_its_span_and_a_far_one_with_more_margin(seconds: float, margin: float) -> None:
    # A run of 0.93 s understates a longer one's rate little; one of a fifth of its span or less, by up to twice.
    assert calibration.scale([_row(10_000, seconds)]) == pytest.approx(margin / seconds, rel=0.05)


def test_a_unit_that_failed_otherwise_or_too_short_to_scale_is_not_scaled() -> None:
    assert calibration.scale([_row(10_000, 0.25), _row(9_000, 2.0)]) is None  # read less than asked: not a size issue
    assert calibration.scale([_row(10_000, 0.001)]) is None  # would need 2000 times the records: past MAX_SCALE


def test_a_scaled_point_sends_and_records_more_records_and_round_trips() -> None:
    load = Workload(100, 10_000, round_trips=200)
    grown = calibration.scaled(point("p", load, round_trips=200), 2.5)
    assert (grown.workload.records, grown.workload.round_trips) == (25_000, 500)
    assert (grown.params["records"], grown.params["round_trips"]) == (25_000, 500)


def test_a_point_grows_as_far_as_its_bounds_allow_and_a_paced_one_runs_longer() -> None:
    short = [_row(10_000, 0.25)]  # asks 4 x first_margin(4) (14) times the records
    load = Workload(100, 10_000, rate=5_000)
    planned = point("p", load, duration_s=2.0)
    bigger = calibration.grown(planned, planned, short)
    factor = 4 * calibration.first_margin(4)
    assert bigger is not None and bigger.workload.records == 10_000 * factor and bigger.params["duration_s"] == 2 * factor
    near = calibration.grown(calibration.scaled(planned, 200), planned, short)  # 16 times would pass 1000 times the plan
    assert near is not None and near.workload.records == 10_000_000
    assert calibration.grown(calibration.scaled(planned, 1000), planned, short) is None  # at the bound already
    huge = point("p", Workload(1_000_000, 200, replication_factor=3))
    capped = calibration.grown(huge, huge, short)  # 3,200 records of 1 MB, 3 replicas: past MAX_BYTES
    assert capped is not None and capped.workload.records == calibration.MAX_BYTES // 3_000_000
    assert calibration.grown(capped, huge, short) is None


def test_a_second_round_fits_a_line_through_both_runs() -> None:
    first, second = _row(10_000, 0.41), _row(48_681, 0.91)  # measured here: a start, then ~1.3 µs a record
    factor = calibration.scale([second], [first])
    assert factor is not None
    per_record = (0.91 - 0.41) / (48_681 - 10_000)
    start = 0.41 - per_record * 10_000
    assert start + per_record * 48_681 * factor == pytest.approx(calibration.MARGIN * 1.0)  # twice the 1 s needed
    assert factor > calibration.MARGIN / 0.91  # more than proportion would ask

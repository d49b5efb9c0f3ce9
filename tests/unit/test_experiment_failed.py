"""A measuring notebook's last cell: its experiment failed, by the rule that makes a study exit 3, when a unit failed
(each named with its reason) or nothing was measured."""

import pandas as pd
import pytest

from kperf.errors import MeasurementFailed, UnitsFailed
from kperf.results import FAILED
from kperf.study import failures

REFUSED = "Broker: Message size too large"


def _records(*rows: tuple[str, str, int, str, str | None]) -> pd.DataFrame:
    """Records of the batch experiment: (point, client, repeat, role, why it failed or None)."""
    return pd.DataFrame([{"experiment": "batch", "point": point, "param.client": client, "repeat": repeat, "role": role,
                          FAILED: failed} for point, client, repeat, role, failed in rows])


def test_an_experiment_whose_units_all_ran_passes() -> None:
    records = _records(("a", "python", 0, "producer", None), ("a", "python", 0, "consumer", ""),
                       ("a", "java", 0, "producer", None))
    assert failures.failure_message("batch", records) is None
    failures.raise_if_failed("batch", records)  # returns: nothing to raise


def test_each_failed_unit_is_named_once_with_its_reasons() -> None:
    records = _records(("a", "python", 0, "producer", None),
                       ("b", "java", 1, "producer", REFUSED), ("b", "java", 1, "consumer", "consumer read no record"),
                       ("b", "java", 2, "producer", REFUSED), ("b", "java", 2, "consumer", REFUSED))
    message = ("batch: 2 of 3 unit(s) failed\n"
               f"  batch: b [java, repeat 1] failed: {REFUSED}; consumer read no record\n"
               f"  batch: b [java, repeat 2] failed: {REFUSED}")
    assert failures.failure_message("batch", records) == message
    with pytest.raises(UnitsFailed) as raised:
        failures.raise_if_failed("batch", records)
    assert str(raised.value) == message
    assert isinstance(raised.value, MeasurementFailed) and raised.value.cause == failures.CAUSE


def test_an_experiment_that_measured_nothing_fails() -> None:
    with pytest.raises(UnitsFailed, match=r"^batch: nothing measured$"):
        failures.raise_if_failed("batch", pd.DataFrame())

"""Experiments' grids, the units a study measures, what is already recorded, and what fits on disk."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import KperfError
from kperf.results import Measurement, Result, ResultStore
from kperf.study import experiment, plan, profiles, sweep, validation


def test_plan_interleaves_repeats() -> None:
    settings = profiles.parameters("replication", "smoke", repeats=2, clients=["python"])
    keys = [u.key for u in plan.units("replication", settings)]
    points = len(keys) // 2
    assert [k[2] for k in keys] == [0] * points + [1] * points
    assert [k[0] for k in keys[:points]] == [k[0] for k in keys[points:]]


def test_grids_record_what_they_vary() -> None:
    grid = experiment.get("replication").points(profiles.parameters("replication", "smoke"))
    assert {(p.params["replication_factor"], p.params["acks"], p.params["min.insync.replicas"]) for p in grid} == {
        (1, "1", "1"), (1, "all", "1"), (3, "1", "2"), (3, "all", "2")
    }
    settings = profiles.parameters("message_size", "quick")
    sizes = experiment.get("message_size").points(settings)
    assert max(p.workload.records * p.workload.record_size for p in sizes) <= settings["max_mib"] * 2**20
    consumers = experiment.get("threads").points(profiles.parameters("threads", "smoke"))
    assert [(p.params["producers"], p.params["consumers"], p.workload.measure_producer) for p in consumers] == [
        (1, 0, True), (2, 0, True), (1, 1, False), (1, 2, False)
    ]


def test_recorded_units_are_found_by_point_client_and_repeat(tmp_path: Path) -> None:
    settings = profiles.parameters("batch", "smoke", clients=["python"])
    units = plan.units("batch", settings)
    first = units[0]
    records = first.point.workload.records  # all asked, over 2 s: a valid measurement (kperf.validity)
    measured = Measurement(role="producer", client="python", records=records, bytes=records, seconds=2.0)
    ResultStore.of_run(tmp_path).append(
        Result("run", "batch", first.point.name, first.repeat, {**first.point.params, "client": "python"}, measured, {})
    )
    assert sweep.recorded(tmp_path, "batch") == {first.key}


def test_a_grid_larger_than_the_free_disk_is_refused_before_any_load(tmp_path: Path) -> None:
    free_gib = shutil.disk_usage(tmp_path).free / 2**30
    settings = profiles.parameters("batch", "smoke")
    records = int(free_gib * 2**30 / settings["record_size"]) + 1  # one point alone would fill the disk
    settings = profiles.parameters("batch", "smoke", records=records)
    with pytest.raises(KperfError) as refused:
        validation.check_disk("batch", settings, tmp_path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("experiment 'batch' needs about")
    assert f"on the brokers' disk ({tmp_path})" in message and "GiB are free" in message
    validation.check_disk("batch", profiles.parameters("batch", "smoke"), tmp_path)  # 20 MB points fit


def test_points_short_of_the_precision_target_get_one_more_repeat_while_repeats_are_left() -> None:
    import pandas as pd

    settings = profiles.parameters("replication", "smoke", clients=["python"], repeats=2, extra_repeats=1, precision=0.05)
    units = plan.units("replication", settings)
    names = list(dict.fromkeys(u.point.name for u in units))
    rows = [  # the first point's repeats agree within 0.1%, the second's differ by 20%, the third has three already
        {"experiment": "replication", "point": names[0], "param.client": "python", "role": "producer", "repeat": r,
         "records_per_s": v}
        for r, v in ((0, 1000.0), (1, 1001.0))
    ] + [
        {"experiment": "replication", "point": names[1], "param.client": "python", "role": "producer", "repeat": r,
         "records_per_s": v}
        for r, v in ((0, 1000.0), (1, 1200.0))
    ] + [
        {"experiment": "replication", "point": names[2], "param.client": "python", "role": "producer", "repeat": r,
         "records_per_s": v}
        for r, v in ((0, 500.0), (1, 1000.0), (2, 1500.0))
    ]
    extra = sweep.imprecise(pd.DataFrame(rows), units, settings)
    assert [(u.point.name, u.repeat) for u in extra] == [(names[1], 2)]  # points with no record are not extras


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (ProducerSpec("b", "t", 100, duration_s=2, window_s=3), "window (3 s) is longer than the point (2 s)"),
        (ProducerSpec("b", "t", 100, records=1000, rate=500, window_s=2.5), "longer than the point (2 s)"),
        (ProducerSpec("b", "t", 100, records=1000, window_s=0), "window must be positive seconds, got 0"),
        (ConsumerSpec("b", "t", duration_s=1, window_s=1.5), "window (1.5 s) is longer than the point (1 s)"),
    ],
)
def test_a_window_not_positive_or_longer_than_the_point_is_refused(spec: ProducerSpec | ConsumerSpec, error: str) -> None:
    with pytest.raises(KperfError, match=re.escape(error)):
        spec.check(librdkafka=False)


def test_a_studys_window_longer_than_a_paced_point_is_refused_and_every_point_records_its_window() -> None:
    settings = profiles.parameters("batch", "quick")
    assert {p.params["window_s"] for p in experiment.get("batch").points(settings)} == {settings["window_s"]}
    with pytest.raises(KperfError, match="longer than the point"):
        validation.check("batch", {**settings, "window_s": 30.0}, brokers=3)

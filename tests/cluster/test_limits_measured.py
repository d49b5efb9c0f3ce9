"""What limited a point, on real runs against a real cluster: the rule fires on the load that should hit it."""

from __future__ import annotations

import os

import pytest

from kperf import drivers, limits
from kperf.drivers.observed import measured_with_resources
from kperf.drivers.point import measure_point
from kperf.drivers.producer import produce
from kperf.drivers.specs import ProducerSpec
from kperf.kafka import topics
from kperf.kafka.target import connect
from kperf.load import Workload
from kperf.results import Measurement, Result
from kperf.study import environment


def limit_of(bootstrap: str, load: Workload) -> tuple[dict, Measurement]:
    """The record row of one measured point (its limit and evidence in it)."""
    target = connect(bootstrap, start=False)
    (measured,) = measure_point(target, load, drivers.get("python"), "kperf-limits")
    row = Result("run", "limits", "point", 0, {"rate": load.rate, "client": "python"}, measured,
                 environment.collect(target)).row()
    return row, measured


def test_a_paced_point_is_labelled_rate_cap(bootstrap: str) -> None:
    row, _ = limit_of(bootstrap, Workload(record_size=100, records=9_000, rate=3_000, partitions=3))
    assert row["limit"] == limits.RATE_CAP, row["limit_evidence"]
    assert "of the 3,000 records/s offered" in row["limit_evidence"]


# Records per loop for 2 s or more on one shared core (the native loop sends well over a million a second).
PINNED_RECORDS = {"native": 3_000_000, "python": 600_000}


@pytest.mark.parametrize("loop", sorted(PINNED_RECORDS))
def test_a_producer_pinned_to_one_core_at_full_speed_is_labelled_load_generator(bootstrap: str, loop: str) -> None:
    everywhere = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(everywhere)})  # this thread, and the load process it spawns, on one core
    try:
        target = connect(bootstrap, start=False)
        with topics.temporary(bootstrap, "kperf-limits", 6, 1) as topic:
            spec = ProducerSpec(bootstrap, topic, 100, records=PINNED_RECORDS[loop], loop=loop)
            (measured,) = measured_with_resources(target, [topic], spec.window_s, lambda: [produce(spec)])
    finally:
        os.sched_setaffinity(0, everywhere)
    row = Result("run", "limits", "point", 0, {"client": "python"}, measured, environment.collect(target)).row()
    assert row["limit"] == limits.LOAD_GENERATOR, (row["limit_evidence"], measured.resources)
    assert row["loop"] == loop
    # Its series carries what was used window by window, and its steady windows are what was judged.
    assert measured.series is not None and "client_cpu_pct_busiest" in measured.series.resources
    assert row["steady_res.client_cpu_pct_busiest"] >= 0

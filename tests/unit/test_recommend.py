"""Setting recommendations for a workload, on the recorded quick study's real batch and codecs points."""

from __future__ import annotations

import pandas as pd
import pytest

from kperf import steady
from kperf.analysis import compare, recommend
from kperf.paths import project_root
from kperf.results import ResultStore

SAMPLE = project_root() / "tests" / "data" / "sample-run"


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return ResultStore.of_run(SAMPLE).load()


def mean_rate(results: pd.DataFrame, experiment: str, point: str) -> float:
    rows = results[(results["experiment"] == experiment) & (results["point"] == point) & (results["role"] == "producer")
                   & (results["param.client"] == "python")]
    return compare.estimate(rows, steady.steady_rates(rows)).mean


def test_the_fastest_setting_is_set_against_the_workloads_own_with_the_ratios_interval(results: pd.DataFrame) -> None:
    found = {r.experiment: r for r in recommend.recommend(results, {"batch.size": "65536", "linger.ms": "10",
                                                                    "compression.type": "lz4"})}
    batch = found["batch"]
    assert batch.own == "batch.size=65536, linger.ms=10"
    unthrottled = results[(results["experiment"] == "batch") & (results["param.rate"] <= 0)]["point"].unique()
    rates = {p: mean_rate(results, "batch", p) for p in unthrottled}
    fastest = max(rates, key=rates.__getitem__)
    assert batch.best_rate == rates[fastest] and batch.best in fastest.replace(" ", ", ").replace(", throughput=-1", "")
    assert batch.ratio is not None
    own = rates["batch.size=65536 linger.ms=10 throughput=-1"]
    assert batch.ratio.ratio == pytest.approx(rates[fastest] / own)
    assert batch.ratio.verdict == compare.UNTESTED or batch.ratio.low <= batch.ratio.ratio <= batch.ratio.high
    assert found["codecs"].own == "compression.type=lz4" and found["codecs"].ratio is not None


def test_a_setting_the_grid_did_not_measure_gets_the_fastest_measured_and_no_ratio(results: pd.DataFrame) -> None:
    batch = next(r for r in recommend.recommend(results, {}) if r.experiment == "batch")  # librdkafka's defaults
    assert batch.own == "batch.size=1000000, linger.ms=5" and batch.ratio is None
    assert batch.sentence().startswith("batch: the workload's batch.size=1000000, linger.ms=5 was not measured; the fastest")


def test_no_advice_without_the_experiments(results: pd.DataFrame) -> None:
    assert recommend.recommend(results[results["experiment"] == "throughput"], {}) == []

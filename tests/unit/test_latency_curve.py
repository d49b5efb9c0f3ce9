"""Where a latency SLO is first missed, predicted from other capacity runs' trials: on simulated verdicts whose
latency follows a known power of the rate."""

from __future__ import annotations

import math
from typing import Any

import pytest

from kperf.capacity import latency_curve
from kperf.errors import KperfError
from kperf.sizing import linear
from kperf.study.runs import LOCAL

RATES = (1_000.0, 2_000.0, 4_000.0, 8_000.0)
SPREAD = 1.25  # each rate's two trials lie this factor above and below the law: least squares finds the law itself


def law(rate: float, scale: float = 5.0, power: float = 1.5) -> float:
    """A p99 in ms: ``scale`` ms at 1,000 records/s, growing as ``power`` of the rate."""
    return scale * (rate / 1000) ** power


def trial(rate: float, values: dict[str, float], phase: str = "headroom") -> dict[str, Any]:
    bounds = {"produce latency p99": 50.0, "end-to-end latency p99": 200.0, "consumer lag": 100_000.0}
    return {"phase": phase, "rate": rate, "slos": [
        {"name": name, "bound": bounds[name], "value": value, "unit": "records" if name == "consumer lag" else "ms"}
        for name, value in values.items()]}


def run(started: str, trials: list[dict[str, Any]], name: str = "w", cluster: str = LOCAL,
        warm_up: dict[str, Any] | None = None) -> dict[str, Any]:
    """A capacity verdict; its warm-up settled unless told otherwise."""
    return {"workload": {"name": name}, "environment": {"cluster": cluster}, "started": started, "trials": trials,
            "warm_up": {"settled": True} if warm_up is None else warm_up}


def along_the_law(**law_args: float) -> list[dict[str, Any]]:
    """Two trials at each rate, SPREAD above and below the law, their lag far inside its bound."""
    return [trial(rate, {"produce latency p99": law(rate, **law_args) * factor, "consumer lag": 10.0})
            for rate in RATES for factor in (SPREAD, 1 / SPREAD)]


CHECKED = run("2026-11-28T10:00:00", [trial(2_000.0, {"produce latency p99": 900.0, "consumer lag": 10.0})])


def test_the_crossing_is_where_the_fitted_law_reaches_the_bound() -> None:
    found = latency_curve.predicted(CHECKED, [CHECKED, run("2026-11-28T09:00:00", along_the_law())])
    assert found is not None
    truth = 1000 * (50.0 / 5.0) ** (1 / 1.5)  # 50 ms = 5 ms x (rate / 1000) ^ 1.5: 4,642 records/s
    assert found.value == pytest.approx(truth, rel=1e-6)
    assert min(RATES) < found.low < truth < found.high < max(RATES) and not found.extrapolated
    assert "produce latency p99 reaching 50 ms" in found.basis and "fitted on 8 trials" in found.basis


def test_the_intervals_ends_are_where_the_fitted_means_interval_reaches_the_bound() -> None:
    import numpy as np

    points = [(rate, law(rate) * factor) for rate in RATES for factor in (1.6, 1.1, 1 / 1.3)]  # not symmetric
    model = linear.fit(latency_curve.FEATURES, np.array([[1.0, math.log(r)] for r, _ in points]),
                       np.log([v for _, v in points]))
    middle, low, high = latency_curve.fieller(model, math.log(50.0))
    assert model.predict([1.0, middle]).value == pytest.approx(math.log(50.0))
    assert model.predict([1.0, low]).high == pytest.approx(math.log(50.0))  # the mean's upper bound reaches it first
    assert model.predict([1.0, high]).low == pytest.approx(math.log(50.0))  # its lower bound last
    assert low < middle < high


def test_a_slope_not_told_from_flat_leaves_the_interval_open() -> None:
    noisy = [trial(rate, {"produce latency p99": law(rate, power=0.05) * factor})
             for rate in RATES for factor in (3.0, 1 / 3.0)]
    found = latency_curve.predicted(CHECKED, [run("2026-11-28T09:00:00", noisy)])
    assert found is not None and found.low == 0.0 and found.high == math.inf and found.extrapolated


def test_the_checked_runs_own_trials_are_never_fitted() -> None:
    other = run("2026-11-28T09:00:00", along_the_law())
    alone = latency_curve.predicted(CHECKED, [other])
    assert alone == latency_curve.predicted(CHECKED, [CHECKED, other])  # its 900 ms trial changes nothing
    with pytest.raises(KperfError, match="no other capacity run of w"):
        latency_curve.predicted(CHECKED, [CHECKED])


@pytest.mark.parametrize("ignored", [
    run("2026-11-28T08:00:00", along_the_law(scale=50.0), name="another"),  # another workload
    run("2026-11-28T08:00:00", along_the_law(scale=50.0), cluster="bootstrap"),  # a user's cluster
    run("2026-11-28T08:00:00", along_the_law(scale=50.0), warm_up={"settled": False}),  # measured still warming
    {**run("2026-11-28T08:00:00", along_the_law(scale=50.0)), "warm_up": None},  # no warm-up, or before it was judged
])
def test_only_the_same_workloads_warmed_runs_on_the_local_cluster_count(ignored: dict[str, Any]) -> None:
    other = run("2026-11-28T09:00:00", along_the_law())
    assert latency_curve.predicted(CHECKED, [other, ignored]) == latency_curve.predicted(CHECKED, [other])


def test_only_trials_that_ran_the_workload_as_it_is_count() -> None:
    caught_up = [trial(8_000.0, {"produce latency p99": 5_000.0}, phase) for phase in ("catch-up", "fault")]
    other = run("2026-11-28T09:00:00", along_the_law())
    with_others = run("2026-11-28T09:00:00", along_the_law() + caught_up)
    assert latency_curve.predicted(CHECKED, [with_others]) == latency_curve.predicted(CHECKED, [other])


def test_trials_other_load_on_the_host_disturbed_are_left_out() -> None:
    """Whether measured again (not counted) or counted all the same: kperf.disturbance saw the host busy."""
    slow = [{**trial(rate, {"produce latency p99": 5_000.0}), "disturbed": "disturbed: ...", "counted": counted}
            for rate in RATES for counted in (False, True)]
    other = run("2026-11-28T09:00:00", along_the_law())
    with_disturbed = run("2026-11-28T09:00:00", along_the_law() + slow)
    assert latency_curve.predicted(CHECKED, [with_disturbed]) == latency_curve.predicted(CHECKED, [other])


def test_the_first_slo_missed_is_the_prediction() -> None:
    e2e = [trial(rate, {"end-to-end latency p99": 10 * law(rate) * factor})  # 200 ms at 2,714 records/s
           for rate in RATES for factor in (SPREAD, 1 / SPREAD)]
    checked = run("2026-11-28T10:00:00", [trial(2_000.0, {"produce latency p99": 1.0, "end-to-end latency p99": 1.0})])
    found = latency_curve.predicted(checked, [run("2026-11-28T09:00:00", along_the_law() + e2e)])
    assert found is not None and "end-to-end latency p99 reaching 200 ms" in found.basis
    assert found.value == pytest.approx(1000 * (200 / 50) ** (1 / 1.5), rel=1e-6)


@pytest.mark.parametrize("power", [-0.05, -0.3])
def test_a_latency_that_does_not_grow_with_the_rate_gives_no_crossing(power: float) -> None:
    flat = [trial(rate, {"produce latency p99": law(rate, scale=80.0, power=power) * factor})
            for rate in RATES for factor in (SPREAD, 1 / SPREAD)]
    with pytest.raises(KperfError, match="produce latency p99: its fitted value does not grow with the rate"):
        latency_curve.predicted(CHECKED, [run("2026-11-28T09:00:00", flat)])


def test_unmeasured_values_are_left_out() -> None:
    unmeasured = [trial(8_000.0, {"produce latency p99": value}) for value in (math.nan, 0.0)]
    unmeasured.append({**trial(8_000.0, {}), "slos": [{"name": "produce latency p99", "bound": 50.0, "value": None,
                                                       "unit": "ms"}]})
    other = run("2026-11-28T09:00:00", along_the_law())
    with_unmeasured = run("2026-11-28T09:00:00", along_the_law() + unmeasured)
    assert latency_curve.predicted(CHECKED, [with_unmeasured]) == latency_curve.predicted(CHECKED, [other])


def test_a_workload_without_a_latency_slo_has_no_prediction() -> None:
    checked = run("2026-11-28T10:00:00", [trial(2_000.0, {"consumer lag": 10.0})])
    assert latency_curve.predicted(checked, [run("2026-11-28T09:00:00", along_the_law())]) is None


def test_too_few_trials_for_an_interval_are_named() -> None:
    few = [trial(rate, {"produce latency p99": law(rate)}) for rate in RATES[:2]]
    with pytest.raises(KperfError, match=r"produce latency p99: 2 trial\(s\) measured it, and an interval needs 3"):
        latency_curve.predicted(CHECKED, [run("2026-11-28T09:00:00", few)])


def test_a_crossing_beyond_the_trials_rates_is_flagged() -> None:
    found = latency_curve.predicted(CHECKED, [run("2026-11-28T09:00:00", along_the_law(scale=0.5))])
    assert found is not None and found.value > max(RATES) and found.extrapolated

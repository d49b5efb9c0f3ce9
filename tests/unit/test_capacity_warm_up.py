"""A capacity run's warm-up: each round's cost, the signal it judges, when it ends, and what the run records."""

from __future__ import annotations

import math

import pytest

from kperf.capacity import slo, verdict, warm_up, workload
from kperf.results import Measurement

WORKLOAD = workload.parse("name: t\ntopic: {partitions: 3}\nrecord: {size: 100}\nrate: {records_per_s: 1000}\n"
                          "duration_s: 10\n")
STREAM = WORKLOAD.streams[0]


def round_of(records: int, seconds: float = 20.0, broker_cpu_pct: float | None = None, cpu_cores: float | None = None,
             p50_ms: float = 5.0, sampled_s: float | None = None) -> list[slo.StreamRun]:
    resources = {**({} if broker_cpu_pct is None else {"broker_cpu_pct": broker_cpu_pct}),
                 **({} if sampled_s is None else {"sampled_s": sampled_s})}
    produced = Measurement("producer", "python", records=records, bytes=records * 100, seconds=seconds,
                           latency_ms={"ack": {"p50": p50_ms}}, resources=resources,
                           broker={} if cpu_cores is None else {"broker.cpu_cores": cpu_cores})
    return [slo.StreamRun(STREAM, records / seconds, produced, [], records)]


def test_a_round_costs_the_brokers_cpu_per_record_where_it_was_sampled_else_their_jvms_own() -> None:
    sampled = round_of(20_000, broker_cpu_pct=50.0, cpu_cores=9.0)  # kperf's samples come first
    assert warm_up.signal_of(sampled) == warm_up.CPU
    assert warm_up.cost(sampled, warm_up.CPU) == pytest.approx(0.5 * 20 / 20_000 * 1e6)  # 500 µs per record
    exporters = round_of(20_000, cpu_cores=0.25)
    assert warm_up.cost(exporters, warm_up.signal_of(exporters)) == pytest.approx(250.0)
    assert math.isnan(warm_up.cost(round_of(0, broker_cpu_pct=50.0), warm_up.CPU))  # nothing acknowledged
    # The CPU's mean is over the whole sampled round (joins and grace too): its CPU-seconds are the mean times that.
    assert warm_up.cost(round_of(20_000, broker_cpu_pct=50.0, sampled_s=30.0), warm_up.CPU) == pytest.approx(750.0)


def test_without_the_brokers_cpu_a_round_costs_the_slowest_streams_median_ack_latency() -> None:
    runs = [*round_of(1000, p50_ms=4.0), *round_of(1000, p50_ms=7.5)]
    assert warm_up.signal_of(runs) == warm_up.LATENCY and warm_up.cost(runs, warm_up.LATENCY) == 7.5
    assert math.isnan(warm_up.cost(round_of(1000, broker_cpu_pct=None), warm_up.CPU))  # the signal chosen holds


@pytest.mark.parametrize(
    ("round_s", "max_s", "pcts", "rounds", "settled"),
    [
        (20, 240, [170, 130, 70, 60, 50, 45, 41, 43], 8, True),  # a cold cluster, until its CPU stops falling
        (20, 240, [50, 50, 50], 3, True),  # a warm one: three rounds
        (20, 60, [170, 130, 70], 3, False),  # the bound ends it, not settled
        (20, 0, [170], 1, None),  # a bound below one round: one round, as a fixed warm-up, too few to judge
        (20, 40, [170, 130], 2, None),
        (10, 35, [50, 50, 50], 3, True),  # a fourth round would pass the bound; the third settled anyway
    ],
)
def test_rounds_go_on_until_settled_or_until_another_would_pass_the_bound(
        round_s: float, max_s: float, pcts: list[float], rounds: int, settled: bool | None) -> None:
    found = warm_up.WarmUp(round_s, max_s)
    for pct in pcts:
        assert not found.done
        found.add(round_of(20_000, broker_cpu_pct=pct))
    assert found.done
    recorded = found.as_json()
    assert (recorded["rounds"], recorded["seconds"], recorded["signal"]) == (rounds, rounds * round_s, warm_up.CPU)
    assert recorded["settled"] is settled
    assert recorded["costs"] == pytest.approx([p / 100 * 20 / 20_000 * 1e6 for p in pcts])


def test_a_warm_up_that_did_not_settle_is_said_in_the_verdict_one_too_short_to_judge_is_not() -> None:
    found = warm_up.WarmUp(20, 60)
    for pct in (170, 130, 70):
        found.add(round_of(20_000, broker_cpu_pct=pct))
    assert found.sentence().startswith("the cluster was still warming up after 60 s of load (its last rounds' broker "
                                       "CPU per record (µs) more than 10% below the cheapest before them)")
    run = {"workload": {"name": "t", "target_rate": 1000.0}, "sustain": [], "warm_up": found.as_json()}
    assert verdict.sentence(run).endswith(f"; {found.sentence()}.")
    run["warm_up"]["settled"] = True
    assert "warm" not in verdict.sentence(run)
    assert "warm" not in verdict.sentence({**run, "warm_up": None})  # no warm-up asked for
    short = warm_up.WarmUp(20, 20)
    short.add(round_of(20_000, broker_cpu_pct=170))
    assert short.as_json()["settled"] is None and "not judged warm: that takes 3 measured rounds" in short.sentence()
    assert "warm" not in verdict.sentence({**run, "warm_up": short.as_json()})  # no claim either way
    unmeasured = warm_up.WarmUp(20, 60)
    for records in (20_000, 20_000, 0):  # the last round acknowledged nothing: no cost to judge on
        unmeasured.add(round_of(records, broker_cpu_pct=50))
    assert unmeasured.done and unmeasured.as_json()["settled"] is None
    unmeasured_first = warm_up.WarmUp(20, 60)
    for records in (0, 20_000, 20_000):  # nothing to compare the last two rounds with: no claim either
        unmeasured_first.add(round_of(records, broker_cpu_pct=50))
    assert unmeasured_first.as_json()["settled"] is None


def test_the_warm_up_fields_of_a_workload_file() -> None:
    assert (WORKLOAD.warm_up_s, WORKLOAD.warm_up_max_s) == (workload.WARM_UP_S, workload.WARM_UP_MAX_S)
    chosen = workload.parse("name: t\ntopic: {partitions: 3}\nrecord: {size: 100}\nrate: {records_per_s: 1000}\n"
                            "duration_s: 10\nwarm_up_s: 5\nwarm_up_max_s: 30\n")
    assert (chosen.warm_up_s, chosen.warm_up_max_s) == (5, 30)

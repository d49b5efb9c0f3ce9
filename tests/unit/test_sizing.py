"""kperf plan: the cost fits on a simulated system and on the recorded sample run, the monotony a plan must have,
and its refusals of bad input."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kperf import cli
from kperf.errors import KperfError
from kperf.exits import Exit
from kperf.limits import BUSY
from kperf.results import ResultStore
from kperf.sizing import broker, fitting, held_out, linear, measured, needs, own_cluster, text
from kperf.sizing import costs as c
from tests.helpers import KPERF

DATA = Path(__file__).parents[1] / "data"
SAMPLE = DATA / "sample-run"
RECORDED = [DATA / "sizing-run" / "study", DATA / "sizing-run" / "s1-capacity", DATA / "sizing-run" / "message-sizes"]
BROKER = broker.parse("cores=8,disk_mib_s=250,disk_gib=1000,network_gbit_s=10,memory_gib=32")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[c.Costs, float]:
    """The costs of a quick study and S1's capacity run, recorded on the CI machine (tests/data/sizing-run)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KPERF_DATA", str(tmp_path_factory.mktemp("data")))  # the costs' cache
        return measured.costs_of(RECORDED)


@pytest.fixture(autouse=True)
def own_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPERF_DATA", str(tmp_path / "data"))


def topic(**changes: object) -> needs.Topic:
    base = needs.Topic(name="", records_per_s=10_417, record_bytes=687, replication_factor=3, partitions=15,
                        groups=1, codec="none", daily_bytes=300e6 * 687, retention_hours=168)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_fit_recovers_known_costs_within_its_interval() -> None:
    # A simulated broker: 0.02 cores per MiB/s and 0.5 per million records/s, with noise of 0.01 cores.
    rng = np.random.default_rng(7)
    mib = rng.uniform(10, 200, 40)
    records = mib * 2**20 / rng.choice([100, 1000, 10_000], 40) / 1e6
    cores = 0.02 * mib + 0.5 * records + rng.normal(0, 0.01, 40)
    cost = linear.fit(["MiB/s", "Mrec/s"], np.column_stack([mib, records]), cores)
    at = cost.predict([100.0, 0.5])
    assert at.low < 0.02 * 100 + 0.5 * 0.5 < at.high
    assert cost.r2 > 0.99 and cost.points == 40 and not at.extrapolated
    assert cost.predict([1000.0, 0.5]).extrapolated  # beyond the largest MiB/s measured
    wide, narrow = cost.predict([400.0, 2.0]), cost.predict([100.0, 0.5])
    assert wide.high - wide.low > narrow.high - narrow.low  # the interval widens away from the points


def test_a_fit_that_cannot_tell_its_costs_apart_is_refused() -> None:
    x = np.column_stack([np.arange(1.0, 6.0), 2 * np.arange(1.0, 6.0)])  # records move with bytes: one record size
    with pytest.raises(KperfError, match="do not tell MiB/s, Mrec/s apart"):
        linear.fit(["MiB/s", "Mrec/s"], x, np.arange(1.0, 6.0))
    with pytest.raises(KperfError, match="1 point\\(s\\) cannot fit 2"):
        linear.fit(["MiB/s", "Mrec/s"], x[:1], np.ones(1))


def test_the_recorded_runs_costs(recorded: tuple[c.Costs, float]) -> None:
    costs, cores = recorded
    assert cores == 2
    write = costs.get(c.CPU_WRITE, "none")
    assert write.model.points >= 100 and write.model.r2 > 0.5 and write.replication_factors == (1, 3)
    assert {"replication", "message_size", "batch"} <= set(write.experiments)
    # Every byte a replica writes reaches the disk, and the network, about once (uncompressed records).
    assert 0.8 < costs.get(c.DISK_WRITE, "none").model.coefficients[0] < 1.2
    assert 0.8 < costs.get(c.NETWORK_IN, "none").model.coefficients[0] < 1.2
    # Compressed records keep fewer log bytes per byte sent than uncompressed ones.
    assert costs.get(c.LOG_BYTES, "zstd").model.coefficients[0] < costs.get(c.LOG_BYTES, "none").model.coefficients[0]
    # The workload's own CPU, from its capacity trials: more records, more cores.
    s1 = costs.get(c.CPU_WORKLOAD, "s1-daily").model
    assert s1.features == (c.IDLE, c.KRECORDS) and s1.coefficients[1] > 0 and s1.points >= 5
    assert costs.ceilings["producer"].mib_per_s > 0 and costs.ceilings["consumer"].mib_per_s > 0


def test_the_sample_run_predates_what_some_costs_need() -> None:
    # Recorded before the disk, network and request figures: those costs are missing, saying why, never guessed.
    costs, _ = measured.costs_of([SAMPLE])
    with pytest.raises(KperfError, match="disk written.*no producer record has the brokers' disk"):
        costs.get(c.DISK_WRITE, "none")
    assert costs.get(c.LOG_BYTES, "none").model.points > 0  # what it did record still gives its cost


def test_a_plan_never_needs_less_for_more(recorded: tuple[c.Costs, float]) -> None:
    costs, cores = recorded
    def planned(**changes: object) -> needs.Sizing:
        return needs.size((topic(**changes),), costs, BROKER, cores, workload="s1-daily")

    def used(plan: needs.Sizing, resource: str) -> float:
        return next(n.use for n in plan.needs if n.resource == resource)
    rates = [planned(records_per_s=r) for r in (1e3, 1e4, 1e5, 1e6, 1e7)]
    assert [p.brokers for p in rates] == sorted(p.brokers for p in rates) and rates[-1].brokers > rates[0].brokers
    for resource in ("CPU", "disk throughput", "network"):
        assert [used(p, resource) for p in rates] == sorted(used(p, resource) for p in rates), resource
    assert planned(replication_factor=3).brokers >= planned(replication_factor=1).brokers
    assert used(planned(replication_factor=3), "disk throughput") > used(planned(replication_factor=1), "disk throughput")
    kept = [used(planned(retention_hours=h), "disk space") for h in (1, 24, 168, 720)]
    assert kept == sorted(kept) and kept[0] > 0
    assert [planned(retention_hours=h).brokers for h in (1, 720)] == sorted(planned(retention_hours=h).brokers for h in (1, 720))
    plan = planned()  # S1 for 168 h on 1,000 GiB brokers: 4.98 brokers of disk space bind
    assert (plan.binding, plan.brokers, plan.degraded) == ("disk space", 5, 6)
    assert plan.degraded_low <= plan.degraded <= plan.degraded_high
    assert plan.brokers_low <= plan.brokers <= plan.brokers_high


def test_a_plan_says_what_it_could_not_answer(recorded: tuple[c.Costs, float]) -> None:
    costs, cores = recorded
    plan = needs.size((topic(retention_hours=None),), costs, broker.like_host(cores), cores, workload="another")
    space = next(n for n in plan.needs if n.resource == "disk space")
    assert space.brokers is None and "retention_hours" in space.note
    cpu = next(n for n in plan.needs if n.resource == "CPU")
    assert cpu.brokers is None and "a capacity run of workload 'another'" in cpu.note
    disk = next(n for n in plan.needs if n.resource == "disk throughput")
    assert disk.brokers is None and "disk_mib_s is not given" in disk.note
    shown = "\n".join(text.lines(plan))
    assert "not answered" in shown and "Google" in shown and "AWS MSK" not in shown  # MSK needs disk and network
    assert json.loads(cli.strict_json(text.as_plain(plan, costs)))["plan"]["brokers"] == plan.brokers


def test_cached_costs_are_the_fitted_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    first, cores = measured.costs_of(RECORDED)
    assert list((Path(os.environ["KPERF_DATA"]) / "sizing").glob("*.json"))
    def no_fit(*_: object) -> None:
        raise AssertionError("fitted again: the cache was not read")
    monkeypatch.setattr(fitting, "fitted", no_fit)
    again, cores_again = measured.costs_of(RECORDED)  # from data/sizing/ now
    assert again.fitted.keys() == first.fitted.keys() and again.missing == first.missing and cores_again == cores
    def plan(costs: c.Costs) -> list[str]:
        return text.lines(needs.size((topic(),), costs, BROKER, cores, workload="s1-daily"))
    assert plan(again) == plan(first)


def test_held_out_checks_on_the_recorded_study() -> None:
    found = held_out.checks(measured.records_of(RECORDED[:1]))
    by = {(h.cost, h.dimension, h.value): h for h in found}
    rf3 = by[(c.DISK_WRITE, "replication factor", 3.0)]
    assert rf3.fitted_on == (1.0, 2.0) and rf3.points >= 20 and rf3.low < rf3.measured < rf3.high
    # Each record size held out is fitted on the others alone.
    sizes = {h.value for h in found if h.dimension == "record size (B)" and h.cost == c.DISK_WRITE}
    assert len(sizes) >= 2 and all(h.value not in h.fitted_on for h in found)


def test_a_record_size_is_held_out_within_the_experiments_that_vary_it() -> None:
    # batch runs at 687 B alone: its points are neither held out nor fitted on when record size is the dimension.
    group = pd.DataFrame({"experiment": ["message_size"] * 4 + ["batch"] * 2,
                          "record_size": [500.0, 500.0, 1000.0, 2000.0, 687.0, 687.0]})
    splits = list(held_out._splits(group, "record_size"))
    assert [sorted(set(held["record_size"])) for held, _ in splits] == [[500.0], [1000.0], [2000.0]]
    assert all(set(held["experiment"]) | set(rest["experiment"]) == {"message_size"} for held, rest in splits)
    assert [len(rest) for _, rest in splits] == [2, 3, 3]


def test_a_workload_the_run_cannot_speak_for_is_refused(recorded: tuple[c.Costs, float]) -> None:
    costs, cores = recorded
    with pytest.raises(KperfError, match="measured no producer with compression.type brotli"):
        needs.size((topic(codec="brotli"),), costs, BROKER, cores)
    one_rf = dataclasses.replace(costs, replication_factors=(1,))
    with pytest.raises(KperfError, match="measured replication factor 1 alone: it cannot tell what replication factor 3"):
        needs.size((topic(),), one_rf, BROKER, cores)


@pytest.mark.parametrize("given, error", [
    ("cores=0", "cores=0 must be a positive number"),
    ("cores=8,disk_gib=-1", "disk_gib=-1 must be a positive number"),
    ("cores=8,disk=250", "'disk=250' is not one of cores=N"),
    ("cores=eight", "cores='eight' is not a number"),
    ("disk_gib=100", "give its cores"),
])
def test_a_bad_broker_description_is_refused(given: str, error: str) -> None:
    with pytest.raises(KperfError, match=error):
        broker.parse(given)


def test_a_run_folder_that_cannot_give_costs_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KperfError, match="no such run folder"):
        measured.costs_of([tmp_path / "nowhere"])
    with pytest.raises(KperfError, match="holds no result records"):
        measured.costs_of([tmp_path])
    records = ResultStore.of_run(SAMPLE).load().drop(columns=["res.broker_cpu_pct"])
    (tmp_path / "results").mkdir()
    records.to_parquet(tmp_path / "results" / "batch-0.parquet")
    with pytest.raises(KperfError, match="its records hold no broker view"):
        measured.costs_of([tmp_path])


def test_the_command_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = str(Path(__file__).parents[2] / "examples" / "s1-daily.yaml")
    for args, error in [
        (["--from", str(tmp_path / "nowhere")], "neither a folder nor a run id"),
        (["--from", str(RECORDED[0]), "--broker", "cores=-2"], "cores=-2 must be a positive number"),
        (["--from", str(RECORDED[0]), "--utilisation", "1.5"], "must be above 0 and at most 1"),
    ]:
        with pytest.raises(SystemExit) if "--utilisation" in args else contextlib.nullcontext():
            assert cli.main(["plan", workload, *args]) == Exit.ERROR
        err = capsys.readouterr().err
        assert error in err and len(err.strip().splitlines()) <= 3, err  # argparse adds its usage lines


def test_the_command_plans_s1_from_the_recorded_runs(capsys: pytest.CaptureFixture[str]) -> None:
    workload = str(Path(__file__).parents[2] / "examples" / "s1-daily.yaml")
    args = ["plan", workload, *(a for run in RECORDED for a in ("--from", str(run))),
            "--broker", "cores=8,disk_mib_s=250,disk_gib=1000,network_gbit_s=10", "--validate"]
    assert cli.main(args) == Exit.OK
    out = capsys.readouterr().out
    assert "Brokers: " in out and "bound by disk space" in out and "AWS MSK" in out and "Held out" in out
    assert "kperf capacity measured its limit" in out
    # S1's capacity run missed its produce p99 with no resource at its limit: the plan says it does not promise that.
    assert "Latency: kperf capacity measured s1-daily failing produce latency p99 at 5,208 records/s" in out


def test_the_commands_json_carries_the_latency_bound(capsys: pytest.CaptureFixture[str]) -> None:
    workload = str(Path(__file__).parents[2] / "examples" / "s1-daily.yaml")
    assert cli.main(["plan", workload, *(a for run in RECORDED for a in ("--from", str(run))), "--json"]) == Exit.OK
    bound = json.loads(capsys.readouterr().out)["latency_bound"]
    assert bound["workload"] == "s1-daily" and bound["slos"] == ["produce latency p99"]
    assert bound["high"] == pytest.approx(10_416.67 / 2)  # the recorded run's lowest failing rate


def test_a_workloads_latest_capacity_run_is_its_verdict(tmp_path: Path) -> None:
    """Several capacity runs of one workload among --from (a study and its capacity sub-folder, an older run): the
    latest speaks for it, once."""
    recorded = json.loads((DATA / "sizing-run" / "s1-capacity" / "capacity.json").read_text())
    for name, started, high in (("old", "2026-11-27T20:38:00", 2_604.0), ("new", "2026-11-27T23:53:09", 5_208.0)):
        folder = tmp_path / name / "capacity"
        folder.mkdir(parents=True)
        found = {**recorded, "started": started, "headroom": {**recorded["headroom"], "high": high}}
        (folder / "capacity.json").write_text(json.dumps(found))
    folders = [tmp_path / "new", tmp_path / "old", tmp_path / "old" / "capacity"]
    (verdict,) = measured.verdicts(folders).values()
    assert verdict["headroom"]["high"] == 5_208.0 and measured.capacity_limit(verdict) == (None, 5_208.0)
    # Every run once, oldest first: "old" was given twice (as a study, and as its capacity sub-folder).
    assert [run["started"] for run in measured.capacity_runs(folders)] == ["2026-11-27T20:38:00", "2026-11-27T23:53:09"]
    assert measured.capacity_limit({**verdict, "environment": {"cluster": "remote"}}) is None


def _trials(cores_per_krecord: float, idle: float) -> linear.LinearCost:
    """A cost fitted on simulated capacity trials: ``idle + cores_per_krecord`` per thousand records/s, with a
    scatter of 1% about it (a fit has an interval only when its points scatter)."""
    rates = np.repeat([1.0, 2.0, 4.0, 8.0], 3)
    scatter = np.tile([0.99, 1.0, 1.01], 4)
    used = (idle + cores_per_krecord * rates) * scatter
    return linear.fit([c.IDLE, c.KRECORDS], np.column_stack([np.ones_like(rates), rates]), used)


@pytest.mark.parametrize("host, loop, rate, rule", [
    # 2 cores at 80% (limits.BUSY): 1.6 = 0.3 + 0.13 k -> 10,000 records/s; the loop reaches 80% at 75,000.
    ((0.13, 0.3), (0.01, 0.05), 10_000, "host CPU"),
    # A loop spending 0.2 of its core per thousand records/s reaches 80% at 3,750: it binds first.
    ((0.13, 0.3), (0.2, 0.05), 3_750, "load generator"),
    # Already at the rule with no load (the fitted idle use alone): 0.
    ((0.13, 1.7), (0.01, 0.05), 0, "host CPU"),
    # No loop cost (trials without the busiest process's CPU): the host's rule alone, saying so.
    ((0.13, 0.3), None, 10_000, "host CPU"),
])
def test_the_plans_headroom_on_its_own_host_is_where_its_first_limit_rule_holds(
        host: tuple[float, float], loop: tuple[float, float] | None, rate: float, rule: str) -> None:
    def cost(name: str, slope_idle: tuple[float, float]) -> c.Cost:
        return c.Cost(name, "w", "cores", _trials(*slope_idle), ("capacity",), (1000, 1000), (3, 3))
    models = {c.CPU_WORKLOAD: (0.1, 0.2), c.HOST_WORKLOAD: host, c.LOOP_WORKLOAD: loop}
    costs = c.Costs({(name, "w"): cost(name, model) for name, model in models.items() if model}, {}, {}, "run")
    found = own_cluster.host_limit(costs, "w", 2.0, BUSY)
    assert found.value == pytest.approx(rate, abs=1) and found.basis.startswith(rule), found
    assert found.low <= found.value <= found.high
    assert ("load generator not checked" in found.basis) == (loop is None)
    if loop == (0.2, 0.05):  # the interval is the lower of the rules' at each end
        assert found.high <= own_cluster.host_limit(dataclasses.replace(costs, fitted={
            k: v for k, v in costs.fitted.items() if k[0] != c.HOST_WORKLOAD}), "w", 2.0, BUSY).high


@pytest.mark.parametrize("within, points, verdict", [
    (28, 30, "as 95% intervals allow"),  # 2 outside of 30: 1.5 expected
    (37, 37, "as 95% intervals allow"),
    (84, 124, "TOO NARROW"),  # 40 outside of 124: 6 expected
])
def test_a_dimensions_coverage_is_judged_against_what_95_percent_intervals_allow(
        within: int, points: int, verdict: str) -> None:
    found = [held_out.HeldOut(c.CPU_WRITE, "none", "record size (B)", 687.0, (1000.0,), points, within,
                              1.0, 1.0, 0.5, 1.5)]
    row = held_out.coverage(found).iloc[0]
    assert row["verdict"] == verdict and row["within"].startswith(f"{within} of {points}")


@pytest.mark.parametrize("workload, runs, meets, latency, bound", [
    # S5's capacity run on this project's machine: its limit between 102,400 and 204,800 records/s (its producer loop
    # at 82% of a core, the host's cores busy); predicted from 112,637 (the host busy) to 155,826 (full).
    # It has a latency SLO too, not predicted from its one run.
    ("s5-throughput", ["s5-capacity"], True, "latency SLOs not predicted: no other capacity run of s5-throughput",
     False),
    # S1's load alone (no latency SLO), a run measured after this check's range was chosen: 7,366-10,417, the host
    # 96% busy; predicted 6,342-8,727.
    ("s1-daily-throughput", ["s1-load-capacity"], True, "", False),
    # S1 itself: its produce p99 failed at 5,208 with no resource at its limit; predicted from 8,822 by resources.
    # With no other capacity run of S1 given, where its latency SLO is missed is not predicted, and it says so.
    ("s1-daily", ["s1-capacity"], False, "latency SLOs not predicted: no other capacity run of s1-daily", True),
    # Two later runs of S1 on a cluster started 45 s before them, their warm-up ten seconds: not warmed until settled,
    # so their trials fit how the brokers warmed as much as the rate, and are not used.
    ("s1-daily", ["s1-capacity", "s1-capacity-0738", "s1-capacity-0745"], False,
     "latency SLOs not predicted: no other capacity run of s1-daily on kperf's local cluster, warmed up until", True),
    # Two runs warmed until settled, each on a freshly started cluster: the second below 1,302; from the first, its
    # produce p99 reaches 50 ms at 2,136 (33-3,758): they do NOT meet.
    ("s1-daily", ["s1-capacity-1030", "s1-capacity-1040"], False, "a latency SLO missed from 2,136 records/s (33.2-3,758",
     True),
    # Two runs with each trial's topic primed (kperf.kafka.topics.temporary, primed) and disturbed trials measured again: the second
    # 2,604-10,417 (unclear at 5,208); from the first, the produce p99 reaches 50 ms at 4,159 (1,141-6,228): they meet.
    # Its lowest failing rate, the target, had the host's CPU at kperf's limit: no latency bound below every resource.
    ("s1-daily", ["s1-capacity-1355", "s1-capacity-1404"], True, "a latency SLO missed from 4,159 records/s (1,141-6,228",
     False),
])
def test_the_plan_on_the_measured_host_meets_its_capacity_runs_limit(
        workload: str, runs: list[str], meets: bool, latency: str, bound: bool, capsys: pytest.CaptureFixture[str]) -> None:
    folders = [DATA / "sizing-run" / "study", *(DATA / "sizing-run" / run for run in runs)]
    file = str(Path(__file__).parents[2] / "examples" / f"{workload}.yaml")
    assert cli.main(["plan", file, *(a for run in folders for a in ("--from", str(run))), "--validate"]) == Exit.OK
    out = capsys.readouterr().out
    (line,) = [line for line in out.splitlines() if line.startswith("On the measured host")]
    assert "the host at 80% of its 2 cores" in line and "the host at 100% of its 2 cores" in line, line
    assert ("the two meet" in line) == meets and ("they do NOT meet" in line) == (not meets), line
    assert ("Latency:" in out) == bound  # a latency SLO missed where no resource was at its limit
    assert latency in line and ("latency" in line) == bool(latency), line


def _prediction(value: float) -> linear.Prediction:
    return linear.Prediction(value, value * 0.9, value * 1.1, False)


@pytest.mark.parametrize("low, high, latency, meets", [
    (7_000, 10_000, None, True),   # the measured interval holds the whole range
    (8_500, 10_000, None, True),   # overlaps its upper part
    (None, 6_500, None, True),     # "below 6,500": overlaps its lower part
    (9_100, None, None, True),     # "above 9,100": the range reaches it (full at 9,500)
    (None, 5_208, None, False),    # every rate of the range above the measured failure
    (10_000, None, None, False),   # the measured cluster held beyond where a resource is full
    (None, 5_208, 2_200, True),    # a latency SLO missed first, below the measured failure
    (2_604, 5_208, 2_200, False),  # ... but the measured cluster held above it
    (7_000, 10_000, 8_000, True),  # missed within the range: it caps the range's upper end
    (9_000, 10_000, 8_000, False),  # ... below where the measured cluster held
    (None, 6_500, 20_000, True),   # missed beyond the range: the resources limit first
])
def test_the_predicted_range_meets_a_measured_limit_when_they_overlap(
        low: float | None, high: float | None, latency: float | None, meets: bool) -> None:
    limit = own_cluster.OwnLimit(_prediction(6_000), _prediction(9_500), latency and _prediction(latency))
    assert limit.meets(low, high) == meets


def test_no_held_out_point_gives_no_coverage_row() -> None:
    empty = held_out.HeldOut(c.CPU_WRITE, "none", "record size (B)", 687.0, (1000.0,), 0, 0, 1.0, 1.0, 0.5, 1.5)
    assert held_out.coverage([]).empty and held_out.coverage([empty]).empty


@pytest.mark.parametrize("latency, unpredicted, shown", [
    (2_200.0, "", "; a latency SLO missed from 2,200 records/s (1,980-2,420; p99 reaching 50 ms)"),
    (math.inf, "", "; its latency SLOs never missed at the fitted values (p99 reaching 50 ms)"),
    (None, "no other capacity run of w", "; latency SLOs not predicted: no other capacity run of w"),
    (None, "", ""),  # no latency SLO: nothing said of latency
])
def test_the_own_host_line_says_where_a_latency_slo_is_missed_or_why_not(
        latency: float | None, unpredicted: str, shown: str) -> None:
    caps = None if latency is None else linear.Prediction(latency, latency * 0.9, latency * 1.1, False,
                                                          "p99 reaching 50 ms")
    line = text.own_line(own_cluster.OwnLimit(_prediction(6_000), _prediction(9_500), caps), 2.0, None, 5_208,
                         unpredicted)
    assert shown in line and ("latency" in line) == bool(shown), line
    assert line.endswith("the two meet.") == (latency == 2_200.0), line


def test_a_reader_that_closed_stdout_ends_kperf_quietly() -> None:
    # ``kperf plan ... | head -1``: the pipe's reading end is closed before kperf writes, so every write fails.
    workload = str(Path(__file__).parents[2] / "examples" / "s1-daily.yaml")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        ended = subprocess.run([KPERF, "plan", workload, *(a for run in RECORDED for a in ("--from", str(run)))],
                               stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(write_end)
    assert (ended.returncode, ended.stderr) == (128 + signal.SIGPIPE, "")

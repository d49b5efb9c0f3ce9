"""kperf bench's pairing of two sides: interleaved runs, medians of each."""

from __future__ import annotations

import threading

import pytest

from kperf.errors import KperfError, MeasurementFailed
from kperf.study import bench, bench_runs


def side(name: str, values: list[float], calls: list[str]) -> bench_runs.Run:
    """A side giving ``values`` in turn, noting each call in ``calls``."""
    def measure() -> bench_runs.Figures:
        calls.append(name)
        return {"records_per_s": values[calls.count(name) - 1], "rate": 2 * values[calls.count(name) - 1]}
    return measure


def test_sides_take_turns_going_first_after_a_warm_up_and_each_gives_its_median() -> None:
    calls: list[str] = []
    runs = bench_runs.paired(3, side("ours", [1000.0, 5.0, 1.0, 3.0], calls), side("theirs", [10.0, 30.0, 20.0], calls))
    assert calls == ["ours"] + ["ours", "theirs", "theirs", "ours", "ours", "theirs"]
    compared = bench_runs.row("c", "s", "records/s", runs, "records_per_s")
    assert (compared["first"], compared["second"], compared["ratio"]) == (3.0, 20.0, 0.15)
    assert bench_runs.row("c", "s", "records/s", runs, "records_per_s", their_key="rate")["second"] == 40.0


def test_without_a_warm_up_every_run_is_recorded() -> None:
    calls: list[str] = []
    runs = bench_runs.paired(2, side("ours", [5.0, 1.0], calls), side("theirs", [10.0, 30.0], calls), warm_up=False)
    assert calls == ["ours", "theirs", "theirs", "ours"]
    assert [f["records_per_s"] for f in runs[0]] == [5.0, 1.0]


def test_at_once_runs_both_sides_together_after_the_settling_step_each_repeat() -> None:
    """Each side waits at a barrier for the other: run one after the other, the barrier breaks and the test fails."""
    together, calls = threading.Barrier(2, timeout=5), []

    def meeting(name: str, values: list[float]) -> bench_runs.Run:
        def measure() -> bench_runs.Figures:
            together.wait()
            calls.append(name)
            return {"records_per_s": values[calls.count(name) - 1]}
        return measure

    runs = bench_runs.at_once(3, meeting("ours", [1.0, 2.0, 3.0]), meeting("theirs", [4.0, 5.0, 6.0]),
                         lambda: calls.append("settled"))
    assert calls[::3] == ["settled"] * 3 and sorted(calls) == ["ours"] * 3 + ["settled"] * 3 + ["theirs"] * 3
    assert ([f["records_per_s"] for f in runs[0]], [f["records_per_s"] for f in runs[1]]) == ([1, 2, 3], [4, 5, 6])


def test_a_run_without_the_figure_fails_the_comparison() -> None:
    with pytest.raises(MeasurementFailed, match="gave no fetch_records_per_s"):
        bench_runs.row("c", "s", "records/s", ([{"records_per_s": 1.0}], [{"fetch_records_per_s": 1.0}]), "fetch_records_per_s")


def test_cpu_per_million_records_from_a_runs_cpu_and_records() -> None:
    assert bench_runs.per_million({"client_cpu_s": 1.5, "records": 3_000_000})[bench_runs.PER_MILLION] == 0.5
    assert bench_runs.PER_MILLION not in bench_runs.per_million({"records": 3_000_000})


def test_a_bench_the_disk_cannot_hold_is_refused_naming_what_it_needs() -> None:
    topic = 7 * 5_000_000 * 1024  # 3 repeats of each side and a warm-up, of the largest records
    bench.check_disk(5_000_000, 3, 2 * topic)
    with pytest.raises(KperfError, match=r"bench: 5 repeats of 5,000,000 records need about 104.9 GiB free .* "
                                         r"fewer --repeats or --records"):
        bench.check_disk(5_000_000, 5, 2 * topic)


def test_runs_made_in_pairs_give_the_median_of_the_pairs_own_ratios() -> None:
    """The brokers' pace changes between pairs (both sides slow in the second): each pair's ratio cancels it."""
    runs = ([{"records_per_s": 100.0}, {"records_per_s": 50.0}, {"records_per_s": 90.0}],
            [{"records_per_s": 100.0}, {"records_per_s": 60.0}, {"records_per_s": 80.0}])
    compared = bench_runs.row("c", "s", "records/s", runs, "records_per_s", pairs=True)
    assert (compared["first"], compared["second"], compared["ratio"]) == (90.0, 80.0, 1.0)
    assert bench_runs.row("c", "s", "records/s", runs, "records_per_s")["ratio"] == 90.0 / 80.0

"""kperf bench's pairing of two sides: interleaved runs, medians of each."""

from __future__ import annotations

from kperf.study import bench


def test_sides_run_in_turn_and_each_gives_its_median() -> None:
    calls: list[str] = []

    def side(name: str, values: list[float]) -> bench.Run:
        def measure() -> float:
            calls.append(name)
            return values[calls.count(name) - 1]
        return measure

    medians = bench.paired(3, side("ours", [5.0, 1.0, 3.0]), side("theirs", [10.0, 30.0, 20.0]))
    assert calls == ["ours", "theirs"] * 3
    assert medians == (3.0, 20.0)
    assert bench.row("c", "s", "records/s", medians)["ratio"] == 0.15

"""Two runs compared (kperf.analysis.compare) on synthetic runs whose true difference is known."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kperf.analysis import compare
from kperf.errors import KperfError
from kperf.results import ResultStore

POINTS = ["batch.size=4096", "batch.size=16384", "batch.size=65536"]


def run(rng: np.random.Generator, factors: dict[str, float], repeats: int = 4, cv: float = 0.03,
        points: list[str] = POINTS, batch_size: int = 65536) -> pd.DataFrame:
    """Records of one synthetic run: each point's rate 10,000 x its factor (1 unless given), with noise ``cv``."""
    rows = [{"experiment": "batch", "point": p, "param.client": "python", "role": "producer", "repeat": r,
             "param.batch.size": batch_size, "limit": "none found", "recorded_at": f"{r}",
             "records_per_s": 10_000 * factors.get(p, 1.0) * (1 + cv * rng.standard_normal())}
            for p in points for r in range(repeats)]
    return pd.DataFrame(rows)


def test_a_run_against_itself_changes_nowhere() -> None:
    a = run(np.random.default_rng(1), {})
    table = compare.points(a, a)
    assert (table["verdict"] == compare.SAME).all()
    assert np.allclose(table["ratio"], 1) and (table["low"] < 1).all() and (table["high"] > 1).all()


def test_a_known_difference_is_found_at_its_point_alone() -> None:
    rng = np.random.default_rng(2)
    table = compare.points(run(rng, {}), run(rng, {"batch.size=4096": 0.7, "batch.size=65536": 1.3}))
    verdicts = dict(zip(table["point"], table["verdict"]))
    assert verdicts == {"batch.size=4096": compare.SLOWER, "batch.size=16384": compare.SAME,
                        "batch.size=65536": compare.FASTER}
    faster = table.set_index("point").loc["batch.size=65536"]
    assert faster["low"] < 1.3 < faster["high"]
    assert compare.summary(table)["batch"] == ("3 point(s) in both runs, 1 faster in B (x"
                                               f"{faster['ratio']:.2f}), 1 slower in B (x{table['ratio'].iloc[0]:.2f}), "
                                               "1 no significant change.")


def test_the_ratio_interval_covers_the_true_ratio_as_often_as_it_claims() -> None:
    """Welch on the logarithm of the means: 95% coverage of a true ratio of 1.2 with 3 repeats a side at 5% noise
    (2,000 pairs of runs: the coverage is known to within about 1%)."""
    rng = np.random.default_rng(3)
    covered = []
    for _ in range(2000):
        a, b = 10_000 * (1 + 0.05 * rng.standard_normal(3)), 12_000 * (1 + 0.05 * rng.standard_normal(3))
        estimates = [compare.Estimate(float(x.mean()), float(x.std(ddof=1) / np.sqrt(3)), 2.0, 3) for x in (a, b)]
        found = compare.ratio(*estimates)
        covered.append(found.low <= 1.2 <= found.high)
    assert 0.93 <= np.mean(covered) <= 0.97


def test_steady_rates_are_compared_only_when_every_repeat_of_both_runs_has_one() -> None:
    rng = np.random.default_rng(4)
    a = run(rng, {}).assign(steady_records_per_s=20_000.0, steady_low=19_000.0, steady_high=21_000.0, steady_windows=40)
    b = run(rng, {})
    assert set(compare.points(a, a)["rate"]) == {"steady"}
    mixed = compare.points(a, b)
    assert set(mixed["rate"]) == {"whole run"} and (mixed["verdict"] == compare.SAME).all()


def test_one_repeat_a_side_is_tested_on_its_batch_means_interval_and_untested_without_one() -> None:
    one = pd.DataFrame([{"experiment": "batch", "point": "p", "param.client": "python", "role": "producer",
                         "repeat": 0, "records_per_s": 10_000.0}])
    assert compare.points(one, one)["verdict"].tolist() == [compare.UNTESTED]
    a = one.assign(steady_records_per_s=10_000.0, steady_low=9_900.0, steady_high=10_100.0, steady_windows=50)
    b = a.assign(steady_records_per_s=12_000.0, steady_low=11_900.0, steady_high=12_100.0)
    assert compare.points(a, b)["verdict"].tolist() == [compare.FASTER]


def test_points_one_run_lacks_are_listed_and_differing_parameters_stated(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    a = run(rng, {}, points=POINTS[:2])
    b = run(rng, {}, points=POINTS[1:], batch_size=1024)
    table = compare.points(a, b)
    assert dict(zip(table["point"], table["verdict"])) == {
        "batch.size=4096": compare.ONLY_A, "batch.size=16384": compare.SAME, "batch.size=65536": compare.ONLY_B}
    assert compare.summary(table)["batch"] == "1 point(s) in both runs, 1 no significant change, 1 only in A, 1 only in B."
    a, b = (t.assign(**{"env.host": host, "env.kafka_version": "4.3.1"}) for t, host in ((a, "one"), (b, "two")))
    found = compare.conditions(tmp_path, a, tmp_path, b)
    assert found.values.tolist() == [["host", "one", "two"], ["batch: batch.size (1 point(s))", "65536", "1024"]]


def test_broker_settings_that_differ_are_listed_one_by_one(tmp_path: Path) -> None:
    records = run(np.random.default_rng(6), {})
    for name, setting in (("a", {"num.io.threads": "8", "listeners": "x"}), ("b", {"num.io.threads": "16", "listeners": "y"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "environment.json").write_text(json.dumps({"broker_config": json.dumps(setting)}))
    found = compare.conditions(tmp_path / "a", records, tmp_path / "b", records)
    assert found.values.tolist() == [["broker setting num.io.threads", "8", "16"]]


def test_bad_runs_are_refused_naming_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KPERF_DATA", str(tmp_path))
    (tmp_path / "runs" / "empty").mkdir(parents=True)
    with pytest.raises(KperfError, match="no run nowhere: neither a folder nor a run id under"):
        compare.compared("nowhere", "empty")
    with pytest.raises(KperfError, match=r"empty holds no results"):
        compare.compared(tmp_path / "runs" / "empty", "empty")
    rng = np.random.default_rng(7)
    for name, points in (("a", POINTS[:1]), ("b", POINTS[1:])):
        store = ResultStore.of_run(tmp_path / "runs" / name).directory
        store.mkdir(parents=True)
        run(rng, {}, points=points).to_parquet(store / "batch-1.parquet")
    with pytest.raises(KperfError, match="a and b have no point in common"):
        compare.compared("a", "b")
    same = compare.compared("a", "a")
    assert (same.folder_a, same.folder_b) == (tmp_path / "runs" / "a",) * 2

"""``kperf compare`` as a pipeline runs it, on copies of the recorded sample run (tests/data/sample-run): its verdict
in the terminal and its exit code: worse (slower, or failed where A measured), within a threshold, and undecided
when every unit failed in both."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from conftest import copy_sample_run
from kperf.exits import Exit
from kperf.results import FAILED, SCHEMA_VERSION
from tests.helpers import kperf

KEPT = ("throughput", "batch")  # the experiments compared: enough for every verdict, and a short page to render


def run_copy(tmp_path: Path, name: str, change: dict[str, object] | None = None) -> Path:
    """The sample run's KEPT experiments under runs/``name``, their records changed as ``change`` says (a rate factor
    for the throughput experiment, or every record failed)."""
    folder = copy_sample_run(tmp_path / "runs" / name)
    for parquet in (folder / "results").glob("*.parquet"):
        if parquet.stem not in KEPT:
            parquet.unlink()
            continue
        records = pd.read_parquet(parquet)
        rates = [c for c in records if c.endswith("_per_s") or c in ("steady_low", "steady_high")]
        if change and "factor" in change and parquet.stem == "throughput":
            records[rates] = records[rates] * change["factor"]
        if change and "failed" in change:
            # Written as this kperf writes them: an older record's "failed" column was the fault experiment's sends.
            records = records.assign(**{FAILED: change["failed"], "schema": SCHEMA_VERSION}, **dict.fromkeys(rates))
        records.to_parquet(parquet)
    shutil.rmtree(folder / "results" / "series", ignore_errors=True)
    return folder


def scan(text: str) -> None:
    """No NaN, infinity or ratio of zeros shown as a result."""
    assert not re.search(r"\b(nan|inf|infinity)\b|x0\.00\b", text, re.IGNORECASE), text


def test_compare_exits_with_its_verdict_and_prints_it(tmp_path: Path) -> None:
    run_copy(tmp_path, "a")
    run_copy(tmp_path, "b", {"factor": 0.5})
    run_copy(tmp_path, "c", {"failed": "consumer read no record"})

    for bad in ("0.5", "ten"):
        refused = kperf(tmp_path, "compare", "a", "b", "--threshold", bad)
        assert refused.returncode == Exit.USAGE and refused.stderr.count("\n") == 1, refused.stderr
        assert "--threshold" in refused.stderr and "factor of at least 1" in refused.stderr
    assert not (tmp_path / "compare").exists()  # refused before anything

    worse = kperf(tmp_path, "compare", "a", "b", timeout=600)
    assert worse.returncode == Exit.WORSE, worse.stderr[-2000:]
    assert "throughput:" in worse.stdout and "slower in B (x0.50" in worse.stdout and "-50.0%" in worse.stdout
    assert "batch:" in worse.stdout and "WORSE" in worse.stdout
    assert re.search(r"\nVerdict: worse: \d+ point\(s\) significantly slower in B\.\n", worse.stdout)
    scan(worse.stdout)

    within = kperf(tmp_path, "compare", "a", "b", "--threshold", "2.5", "--json", timeout=600)
    assert within.returncode == Exit.OK, within.stderr[-2000:]
    found = json.loads(within.stdout)  # strict JSON on stdout alone: the page's path goes to stderr
    assert found["exit"] == Exit.OK and found["worse"] == [] and found["tested"] > 0 and found["threshold"] == 2.5
    assert "comparison written to" in within.stderr

    broken = kperf(tmp_path, "compare", "a", "c", timeout=600)  # every point measured in A failed in B: worse
    assert broken.returncode == Exit.WORSE, broken.stderr[-2000:]
    assert "failed in B (consumer read no record)" in broken.stdout
    assert re.search(r"\nVerdict: worse: \d+ point\(s\) measured in A, failed in B\.\n", broken.stdout)
    scan(broken.stdout)

    undecided = kperf(tmp_path, "compare", "c", "c", timeout=600)
    assert undecided.returncode == Exit.UNDECIDED, undecided.stderr[-2000:]
    assert "failed in A (consumer read no record) and failed in B (consumer read no record)" in undecided.stdout
    assert undecided.stdout.count("Verdict: undecided: no point could be tested.") == 1
    scan(undecided.stdout)

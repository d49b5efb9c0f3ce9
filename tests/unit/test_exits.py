"""The exit codes a pipeline gates on: capacity's verdict and compare's, each mapping over every kind, and compare's
terminal verdict over records written by the real Result and ResultStore code."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from kperf import cli
from kperf.analysis import compare
from kperf.capacity import verdict
from kperf.errors import KperfError, MeasurementFailed
from kperf.exits import Exit
from kperf.results import Measurement, Result, ResultStore

SLO = {"name": "produce latency p99", "bound": 50.0, "value": 12.0, "unit": "ms", "low": math.nan, "high": math.nan,
       "note": "", "met": True}
CARRIED = {
    "workload": {"name": "orders", "target_rate": 1000.0, "describe": "1,000 records/s"},
    "sustain": [SLO],
    "headroom": {"low": 4000.0, "high": 5657.0, "target": 1000.0, "trials": 7, "note": "narrowed",
                 "failed": ["produce latency p99"], "limited_by": ["host CPU", "the host's 2 cores were 90% busy"]},
    "catch_up": {"caught_up": True, "seconds": 3.0, "timeout_s": 30.0, "backlog_records": 50_000, "sentence": "caught up"},
    "faults": [{"kind": "kill", "for_s": 10.0, "lost": 0.0, "acked": 18_000, "no_ack_s": 8.4, "fault_at_s": 5.0,
                "fault_end_s": 15.0, "isr_recovery_s": 2.0, "recovery_s": 1.0,
                "slos": [{**SLO, "name": "acknowledged records lost", "bound": 0.0, "value": 0.0, "unit": "records"}]}],
}


def changed(**changes: Any) -> dict[str, Any]:
    """CARRIED with some parts changed: ``part=(key, value)`` sets one key of a part, ``part=None`` drops it."""
    found = copy.deepcopy(CARRIED)
    for part, change in changes.items():
        if change is None:
            del found[part]
        elif part == "sustain":
            found["sustain"][0]["met"] = change
        elif part == "faults":
            found["faults"][0]["slos"][0]["met"] = change
        else:
            found[part].update(change)
    return found


LOAD_GENERATOR = ["load generator", "the busiest client process used 99% of a core"]


@pytest.mark.parametrize(("found", "kind", "why"), [
    (CARRIED, verdict.CARRIED, "every SLO met"),
    (changed(headroom=None, catch_up=None, faults=None), verdict.CARRIED, "every SLO met"),
    (changed(sustain=False), verdict.NOT_CARRIED, "missed sustain: produce latency p99"),
    (changed(catch_up={"caught_up": False}), verdict.NOT_CARRIED, "missed catch-up within 30 s"),
    (changed(faults=False), verdict.NOT_CARRIED, "missed a broker killed for 10 s: acknowledged records lost"),
    (changed(sustain=False, headroom={"low": 250.0, "high": 500.0}), verdict.NOT_CARRIED, "missed sustain"),
    (changed(sustain=False, headroom={"low": None, "high": 500.0}), verdict.UNDECIDED, "found only from above"),
    (changed(headroom={"low": None, "high": 1000.0}), verdict.UNDECIDED, "found only from above"),
    (changed(sustain=False, headroom={"low": 250.0, "high": 500.0, "limited_by": LOAD_GENERATOR}), verdict.UNDECIDED,
     "the load generator's, not the cluster's (the busiest client process used 99% of a core)"),
    (changed(headroom={"low": 500.0, "high": 1000.0, "limited_by": LOAD_GENERATOR}), verdict.UNDECIDED,
     "the load generator's"),
    (changed(headroom={"low": 500.0, "high": 1000.0}), verdict.UNDECIDED, "the search's trials failed at 1,000 records/s"),
    (changed(headroom={"limited_by": LOAD_GENERATOR}), verdict.CARRIED, "every SLO met"),  # above the target: no matter
])
def test_capacity_exits_with_its_verdict(found: dict[str, Any], kind: str, why: str) -> None:
    found_kind, found_why = verdict.outcome(found)
    assert found_kind == kind and why in found_why
    code = verdict.exit_code(found)
    assert code == {verdict.CARRIED: Exit.OK, verdict.NOT_CARRIED: Exit.WORSE, verdict.UNDECIDED: Exit.UNDECIDED}[kind]
    assert verdict.table(found)[-1] == ("verdict", found_why, f"{kind.upper()} (exit {code:d})")
    assert not re.search(r"\b(nan|inf)\b", verdict.show(found), re.IGNORECASE)
    assert json.loads(cli.strict_json(found))["sustain"][0]["low"] is None  # NaN is null in --json


def units(folder: Path, rates: dict[str, float | None], repeats: int = 3) -> Path:
    """A run of the throughput experiment written by the real record code: each point's producer at its rate (None:
    every repeat failed), with a small spread over the repeats."""
    results = []
    for point, rate in rates.items():
        for repeat in range(repeats):
            measured = (Measurement.failed("producer", "python", "producer wrote no record: the broker refused it")
                        if rate is None else
                        Measurement("producer", "python", records=100_000, bytes=10_000_000,
                                    seconds=100_000 / (rate * (1 + 0.01 * (repeat - 1)))))
            results.append(Result(folder.name, "throughput", point, repeat, {"client": "python", "rate": -1}, measured,
                                  {"kafka_version": "4.1.1"}))
    ResultStore.of_run(folder).append(*results)
    return folder


def test_compare_prints_its_verdict_and_exits_worse_beyond_the_threshold(tmp_path: Path) -> None:
    a = units(tmp_path / "a", {"producers=1": 10_000.0, "producers=2": 20_000.0, "producers=4": None})
    b = units(tmp_path / "b", {"producers=1": 7_000.0, "producers=2": 20_000.0, "producers=4": None})
    found = compare.compared(a, b)
    text = compare.terminal(found)
    failed = "failed in A (producer wrote no record: the broker refused it) and failed in B (producer wrote no " \
             "record: the broker refused it)"
    assert f"throughput: 3 point(s) in both runs, 1 slower in B (x0.70), 1 no significant change, 1 not tested " \
           f"({failed})." in text
    (slower,) = [line for line in text.splitlines() if "producers=1" in line]
    assert "x0.70" in slower and "-30.0%" in slower and "slower" in slower and "WORSE" in slower
    assert f"Not tested: 1 point(s): 1 {failed}" in text
    assert text.endswith("Verdict: worse: 1 point(s) significantly slower in B.")
    assert not re.search(r"\b(nan|inf)\b", text, re.IGNORECASE)
    assert compare.exit_code(found.table) == Exit.WORSE
    assert compare.exit_code(found.table, 1.2) == Exit.WORSE  # x0.70 is more than 1.2 times slower
    assert compare.exit_code(found.table, 1.5) == Exit.OK
    assert "Verdict: no point significantly slower in B by more than x1.5 (B/A below x0.67): 0 faster, 1 slower within " \
           "the threshold, 1 no significant change." in compare.terminal(found, 1.5)
    shown = json.loads(cli.strict_json(compare.as_json(found, 1.5)))
    assert shown["exit"] == Exit.OK and shown["tested"] == 2 and shown["worse"] == []
    assert shown["not_tested"] == {failed: 1}
    assert [p["rate_b"] for p in shown["points"]][2] is None  # a failed unit has no rate, even in JSON


def test_a_point_measured_in_a_that_failed_in_b_is_worse(tmp_path: Path) -> None:
    a = units(tmp_path / "a", {"producers=1": 10_000.0, "producers=2": 20_000.0})
    b = units(tmp_path / "b", {"producers=1": 10_000.0, "producers=2": None})
    found = compare.compared(a, b)
    assert compare.exit_code(found.table, 10.0) == Exit.WORSE  # whatever the threshold
    assert compare.terminal(found).endswith(f"Verdict: worse: 1 point(s) {compare.BROKEN}.")


def test_compare_is_undecided_when_no_point_could_be_tested(tmp_path: Path) -> None:
    a = units(tmp_path / "a", {"producers=1": None})
    b = units(tmp_path / "b", {"producers=1": None})
    found = compare.compared(a, b)
    assert compare.exit_code(found.table) == Exit.UNDECIDED
    assert compare.terminal(found).endswith("Verdict: undecided: no point could be tested.")
    one = units(tmp_path / "one", {"producers=1": 10_000.0}, repeats=1)  # one repeat, no steady interval
    assert compare.exit_code(compare.compared(one, one).table) == Exit.UNDECIDED
    assert "1 not tested (one repeat without an interval)" in compare.terminal(compare.compared(one, one))


@pytest.mark.parametrize("text", ["0.9", "0", "-2", "abc", "nan", "inf"])
def test_a_threshold_below_one_or_not_a_number_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="factor of at least 1"):
        cli.factor(text)
    assert cli.factor("1.1") == 1.1


@pytest.mark.parametrize(("raised", "code", "line"), [
    (MeasurementFailed("no group formed on 127.0.0.1:9092 within 5 s", "no group formed", timed_out=True), Exit.FAILED,
     "kperf: failed: no group formed on 127.0.0.1:9092 within 5 s"),
    (KperfError("data.csv: no such file"), Exit.ERROR, "kperf: error: data.csv: no such file"),
])
def test_main_exits_failed_for_a_measurement_and_error_for_anything_else(
        raised: Exception, code: Exit, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def run(args: argparse.Namespace, started: float) -> None:
        raise raised

    monkeypatch.setitem(cli.COMMANDS, "fit", dataclasses.replace(cli.COMMANDS["fit"], run=run))
    assert cli.main(["fit", "usl", "--csv", "data.csv", "--x", "n", "--y", "rate"]) == code
    assert capsys.readouterr().err == line + "\n"

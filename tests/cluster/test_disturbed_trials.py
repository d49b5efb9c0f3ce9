"""A capacity trial that other load on the host disturbed, on kperf's local cluster: measured again, its record a
failed unit, and said in the verdict (kperf.disturbance)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kperf.capacity import run, slo, verdict
from kperf.exits import Exit
from kperf.results import FAILED, ResultStore, failures, succeeded
from tests.helpers import kperf, status

pytestmark = pytest.mark.cluster

SMALL = """\
name: small
topic: {partitions: 1, replication_factor: 1}
producer: {acks: all, linger_ms: 5}
record: {size: 200}
rate: {records_per_s: 300}
consumers: [{group: readers}]
duration_s: 2
window_s: 0.5
warm_up_s: 0
slo:
  produce_latency: {percentile: 99, max_ms: 10000}
headroom: {enabled: false}
"""


def test_a_trial_beside_a_busy_loop_outside_kperf_is_measured_again_and_the_last_counts_flagged(tmp_path: Path) -> None:
    workload = tmp_path / "small.yaml"
    workload.write_text(SMALL)
    up = kperf(tmp_path / "data", "cluster", "up", "--brokers", "1")
    assert up.returncode == 0, up.stderr
    # Not a child of kperf's process: the sampler counts the host's CPU, the brokers' and kperf's clients'; a
    # Python busy loop takes most of a core, far over the quarter allowed.
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        result = kperf(tmp_path / "data", "capacity", str(workload), "--bootstrap", status(tmp_path / "data")["bootstrap"])
    finally:
        burner.kill()
        burner.wait(timeout=30)
        down = kperf(tmp_path / "data", "cluster", "down")
    assert down.returncode == 0, down.stderr
    (folder,) = (tmp_path / "data" / "capacity").iterdir()
    found = json.loads((folder / run.VERDICT_FILE).read_text())
    # Carried or not is the counted trial's, under the busy loop: its SLO values as recorded, judged again by their
    # bounds, give the verdict (no search here: carried exactly when every one held), and the exit is that verdict's.
    carried = all(slo.SloValue(**{k: v for k, v in s.items() if k != "met"}).met for s in found["sustain"])
    assert result.returncode == (Exit.OK if carried else Exit.WORSE) == verdict.exit_code(found), result.stderr
    trials = found["trials"]
    assert [(t["phase"], t["counted"]) for t in trials] == [("sustain", False)] * run.DISTURBED_RETRIES + [("sustain", True)]
    assert all(t["disturbed"].startswith("disturbed: the host used ") and t["foreign_cpu_pct"] > 25 for t in trials)
    assert (f"; {run.DISTURBED_RETRIES} attempt(s) that other load on this host disturbed were discarded and measured "
            "again; 1 trial(s) count though") in found["sentence"]
    assert result.stderr.count("measuring it again") == run.DISTURBED_RETRIES
    # The trials measured again are failed units with that reason, kept (nothing lost) and left out of every fit.
    records = ResultStore.of_run(folder).load()
    dropped = failures(records)
    assert set(dropped["repeat"]) == set(range(run.DISTURBED_RETRIES)) and len(dropped) == 2 * run.DISTURBED_RETRIES
    assert dropped[FAILED].str.startswith("disturbed: ").all()
    assert set(succeeded(records)["repeat"]) == {run.DISTURBED_RETRIES}

"""The study command end to end on a real cluster: experiments, capacity, report; resumable; bad input refused first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from kperf.exits import Exit
from kperf.kafka import target
from kperf.kafka.cluster import LocalCluster
from kperf.results import ResultStore
from kperf.study import plan, profiles, sweep
from kperf.study.breaker import TRIPS_AFTER
from tests.helpers import KPERF, ROOT, STUDIED, check_three_brokers_replicate, jvm_alive, kperf, local_cluster


@pytest.mark.timeout(1200, method="signal")  # a whole study: twice the cluster tests' limit
def test_smoke_study_runs_its_experiments_and_capacity_and_writes_a_report(tmp_path: Path) -> None:
    with local_cluster(3, tmp_path / "own-cluster") as cluster:  # not kperf's default folder (tmp_path / "cluster")
        brokers = check_three_brokers_replicate(cluster)  # test_cluster.py's checks of a 3-broker cluster, here
        check_smoke_study(tmp_path, cluster)
    assert not any(jvm_alive(pid, created) for pid, created in brokers if pid and created)  # stopped: none left


def check_smoke_study(tmp_path: Path, cluster: LocalCluster) -> None:
    """On a cluster of its own: the fault experiment kills and pauses its brokers, which no other lane may see.
    That cluster is, to this kperf, a user's (not its default folder): its brokers' view comes from the exporters
    named. With a workload: measured after the experiments, its verdict first in the report."""
    assert cluster.state is not None
    exporters = ",".join(cluster.state.metrics_urls)
    started = time.monotonic()
    result = kperf(tmp_path, "study", *STUDIED, "--profile", "smoke", "--bootstrap", cluster.bootstrap,
                   "--broker-metrics", exporters, "--workload", str(ROOT / "examples" / "smoke.yaml"), timeout=1100)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-2000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert f"report written to {run / 'report.html'}" in result.stdout

    store = ResultStore.of_run(run)
    table = store.load()
    assert set(table["experiment"]) == set(STUDIED)
    for name in STUDIED:
        units = plan.units(name, profiles.parameters(name, "smoke"))
        rows = table[table["experiment"] == name]
        assert set(zip(rows["point"], rows["param.client"], rows["repeat"])) == {u.key for u in units}, name
        assert (rows["records_per_s"] > 0).all() and (rows["errors"] == 0).all(), name
    verifying = table[(table["role"] == "consumer") & (table["param.client"] == "python")]
    assert len(verifying) and verifying["verified"].eq(True).all()  # every record read back once
    readers = table[(table["experiment"] == "end_to_end") & (table["role"] != "producer")]
    assert len(readers) == 2 and readers["latency_e2e_p99_ms"].notna().all()  # python consumer, java tool
    assert table["limit"].notna().all() and table["limit_evidence"].notna().all()
    for _, record in table[table["series_file"].notna()].iterrows():  # a window holds every record once
        assert store.series(record.to_dict())["records"].sum() == record["records"], record["point"]
    # Faults' units too; a read-process-write processor records no series of its own (its consumer and producer do).
    windowed = table[(table["param.client"] == "python") & (table["role"] != "processor")]
    assert windowed["series_file"].notna().all() and (table["role"] == "processor").any()
    # The brokers' own view, from the exporters named, around every unit, and their Kafka version from there.
    assert (table["env.broker_metrics"] == exporters).all()
    assert (table["env.kafka_version"] == table["env.kafka_release"]).all()
    producers = table[table["role"] == "producer"]
    # A broker restarted mid-unit (the fault experiment) starts its counters again: where one went back, no count,
    # mean or rate is claimed there (NaN; on a busy host the restarted broker may have served fewer requests since
    # its restart than before its kill). Every other unit has them all.
    undisturbed = producers[producers["experiment"] != "faults"]
    assert (undisturbed["broker.produce_requests"] > 0).all()
    assert (undisturbed["broker.bytes_in_mib_per_s"] > 0).all() and undisturbed["broker.produce_total_ms"].notna().all()
    faulted = producers.loc[producers["experiment"] == "faults", "broker.produce_requests"]
    assert ((faulted > 0) | faulted.isna()).all(), faulted
    assert {p.name for p in (run / "notebooks").iterdir()} == {f"{n}.ipynb" for n in STUDIED} | {
        "report.ipynb", "capacity.ipynb"  # the report fits and writes fits.csv: no analysis notebook run
    }
    found = json.loads((run / "capacity" / "capacity.json").read_text())
    assert found["workload"]["name"] == "smoke" and found["sustain"] and (run / "capacity" / "capacity.html").is_file()
    assert (run / "fits.csv").is_file() and (run / "report.md").is_file()
    log = (run / "kperf.log").read_text()
    assert "study: experiments done" in log
    measuring = {line.split()[2] for line in log.splitlines() if " units to measure against " in line}  # their pids
    assert len(measuring) == 1, measuring  # every experiment's notebook in the study's one kernel (kperf.study.kernel)
    assert "study:" in result.stderr  # the overall progress bar

    html = (run / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= len(STUDIED)  # a figure per experiment, embedded
    assert "Traceback" not in html and "Unthrottled, the python producer was fastest at" in html
    verdict, advice, answers = (html.find(s) for s in ("Can this cluster carry smoke?", "codecs: ", "id=\"Experiments\""))
    assert -1 < verdict < answers and -1 < advice < answers  # the verdict and its setting advice open the report
    assert "over the workload's compression.type=lz4" in html or "compression.type=lz4 was the fastest" in html
    print(f"smoke study: {elapsed:.0f} s")  # the README's figure comes from a timed run, not from here

    # What to buy, from this run's costs. Its experiments measured replication factor 1 alone: the smoke workload's
    # rf 3 is refused, naming why; a workload at rf 1 is planned. Brokers read as a user's (their exporters): CPU
    # and network are told, the disk is not; CPU needs a capacity run of that very workload.
    refused = kperf(tmp_path, "plan", str(ROOT / "examples" / "smoke.yaml"), "--from", str(run))
    assert refused.returncode == Exit.ERROR and "measured replication factor 1 alone" in refused.stderr, refused.stderr
    single = tmp_path / "single.yaml"
    single.write_text("name: single\ntopic: {partitions: 3, replication_factor: 1, retention_hours: 24}\n"
                      "record: {size: 100}\nrate: {records_per_s: 5000}\nduration_s: 5\n")
    planned = kperf(tmp_path, "plan", str(single), "--from", str(run), "--broker",
                    "cores=4,disk_mib_s=250,disk_gib=500,network_gbit_s=10", "--json")
    assert planned.returncode == 0, planned.stderr[-2000:]
    sized = json.loads(planned.stdout)["plan"]
    assert {a["rule"] for a in sized["peers"]} == {"AWS MSK", "Google Managed Kafka", "Redpanda"}
    need = {n["resource"]: n for n in sized["needs"]}
    if need["network"]["brokers"] is not None:  # the exporters' bytes in, over the points kperf did not limit
        assert sized["binding"] == "network" and need["network"]["brokers"] > 0 and need["network"]["use"] > 0
    else:  # a busy host's load generator limited every point (each client's CPU judged): no cost, said so
        assert "limited by the load generator" in need["network"]["note"] and sized["binding"] == "the replication factor"
    assert need["CPU"]["brokers"] is None and "a capacity run of workload 'single'" in need["CPU"]["note"]
    assert need["disk throughput"]["brokers"] is None and need["disk space"]["brokers"] is None  # no disk figure


def test_a_killed_study_resumes_and_records_every_unit_once(tmp_path: Path, bootstrap: str) -> None:
    # Four units each (two points, two repeats): the kill falls inside the first experiment, the second is all ahead.
    narrowed = {"batch": {"throughputs": [-1]}, "replication": {"replication_factors": [3]}}
    args = ["study", "batch", "replication", "--profile", "smoke", "--bootstrap", bootstrap, "--set", "clients=[python]",
            "--set", "repeats=2", *[a for name, values in narrowed.items() for key, value in values.items()
                                    for a in ("--set", f"{name}.{key}={value}")]]
    env = {**os.environ, "KPERF_DATA": str(tmp_path)}
    proc = subprocess.Popen([KPERF, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = tmp_path / "runs"
    deadline = time.monotonic() + 300
    while len(list(results.glob("*/results/batch-*.parquet"))) < 3:  # mid-way through the first experiment
        assert proc.poll() is None and time.monotonic() < deadline, "the study ended or stalled before the kill"
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (run,) = results.iterdir()
    before = {p.name for p in (run / "results").glob("*.parquet")}

    resumed = kperf(tmp_path, "study", "--resume", timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert before <= {p.name for p in (run / "results").glob("*.parquet")}  # nothing recorded was lost
    table = ResultStore.of_run(run).load()
    for name in ("batch", "replication"):
        settings = profiles.parameters(name, "smoke", clients=["python"], repeats=2, **narrowed[name])
        rows = table[table["experiment"] == name]
        counts = Counter(zip(rows["point"], rows["param.client"], rows["repeat"]))
        assert set(counts) == {u.key for u in plan.units(name, settings)}, name
        assert set(counts.values()) == {1}, f"{name}: a unit recorded twice"
    assert (run / "report.html").is_file()
    assert not list((run / "results").glob(".*"))  # no half-written record


def test_a_study_goes_on_past_failed_units_names_them_and_resume_measures_them_again(tmp_path: Path,
                                                                                     bootstrap: str) -> None:
    # Kafka's EndToEndLatency refuses acks=0 (it needs synchronous acknowledgement) and exits 1 each time: a real
    # tool failure. The python client measures the same points, so the study has results to report besides.
    result = kperf(tmp_path, "study", "end_to_end", "--profile", "smoke", "--bootstrap", bootstrap, "--set", "acks=0",
                   "--set", "clients=[python,java]", "--set", f"repeats={TRIPS_AFTER + 1}", timeout=600)
    assert result.returncode == Exit.FAILED, result.stderr[-2000:]
    (run,) = (tmp_path / "runs").iterdir()
    assert f"report written to {run / 'report.html'}" in result.stdout and (run / "report.html").is_file()
    named = [line for line in result.stderr.splitlines() if line.startswith("kperf: end_to_end: rate=")]
    refused = "failed: e2e-latency failed (exit code 1): Invalid value for --producer-acks"
    assert named[:TRIPS_AFTER] == [line for line in named if refused in line]  # each unit once, in order
    assert named[TRIPS_AFTER:] == [  # then the breaker: the client's last unit is not tried
        f"kperf: end_to_end: rate=2000 [java, repeat {TRIPS_AFTER}] failed: not tried: {TRIPS_AFTER} units of client "
        "java failed before it with 'e2e-latency failed'"]
    table = ResultStore.of_run(run).load()
    java, python = (table[table["param.client"] == c] for c in ("java", "python"))
    assert len(java) == TRIPS_AFTER + 1 and java["failed"].str.len().gt(0).all() and java["records_per_s"].isna().all()
    assert len(python) == 2 * (TRIPS_AFTER + 1) and python["failed"].isna().all()  # producer and consumer, each valid
    assert sweep.recorded(run, "end_to_end") == set(zip(python["point"], python["param.client"], python["repeat"]))
    ran = {p.name for p in (run / "results").glob("*.parquet")}

    resumed = kperf(tmp_path, "study", "--resume", str(run), timeout=600)
    assert resumed.returncode == Exit.FAILED, resumed.stderr[-2000:]  # the tool refuses acks=0 again
    assert f"{TRIPS_AFTER + 1} failed unit(s) to measure again" in (run / "kperf.log").read_text()
    again = ResultStore.of_run(run).load()
    counts = Counter(zip(again["point"], again["param.client"], again["repeat"], again["role"]))
    assert len(counts) == len(table) and set(counts.values()) == {1}  # the failed units' old records are gone
    files = {p.name for p in (run / "results").glob("*.parquet")}
    assert len(files) == len(ran) and len(files & ran) == TRIPS_AFTER + 1  # the python units kept, java's new files


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown experiment 'nope'"),
        (["--set", "batch.recordz=5"], "unknown parameter 'recordz' for experiment 'batch'"),
        (["--set", "partitions.partition_counts=[0,3]"], "parameter 'partitions.partition_counts' must be at least 1"),
        (["--set", "codecs.codecs=[lz4,brotli]"], "parameter 'codecs.codecs': unknown value 'brotli'"),
        (["--set", "replication.replication_factors=[1,4]"],
         "parameter 'replication_factors' of experiment 'replication': 4 is above the 3 live broker"),
        (["--set", "replication_factor=5"], "parameter 'replication_factor' of experiment 'batch': 5 is above"),
        (["--set", "window_s=60"], "the time series' window (60 s) is longer than the point"),
        (["--broker-metrics", "http://kperf:secret@127.0.0.1:9/metrics"],
         "broker metrics endpoint http://127.0.0.1:9/metrics did not answer"),  # and the password is not shown
    ],
)
def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path, bootstrap: str, args: list[str], message: str) -> None:
    result = kperf(tmp_path, "study", "--profile", "smoke", "--bootstrap", bootstrap, *args, timeout=120)
    assert result.returncode != 0
    line = result.stderr.strip()
    assert "\n" not in line and message in line, line
    assert not (tmp_path / "runs").exists()


def test_a_workload_the_cluster_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path, bootstrap: str) -> None:
    wide = tmp_path / "wide.yaml"
    wide.write_text((ROOT / "examples" / "smoke.yaml").read_text().replace("replication_factor: 3", "replication_factor: 5"))
    result = kperf(tmp_path, "study", "batch", "--profile", "smoke", "--bootstrap", bootstrap, "--workload", str(wide),
                   timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() == f"kperf: error: {wide}:12: topics.0.replication_factor: 5 is above the cluster's 3 live broker(s)"
    assert not (tmp_path / "runs").exists()


def test_study_against_an_unreachable_cluster_fails_fast(tmp_path: Path) -> None:
    result = kperf(tmp_path, "study", "--profile", "smoke", "--bootstrap", "127.0.0.1:1", timeout=180)
    assert result.returncode == 1
    assert result.stderr.startswith("kperf: error: cannot reach Kafka at 127.0.0.1:1 within")
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_a_run_measured_with_another_kafka_release(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "old"
    run.mkdir(parents=True)
    (run / "study.json").write_text(json.dumps({"experiments": ["batch"], "profile": "smoke", "overrides": {},
                                                "bootstrap": None}))  # fmt: skip
    (run / "environment.json").write_text(json.dumps({"kafka_release": "3.7.2"}))
    result = kperf(tmp_path, "study", "--resume", str(run))
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert f"{run} was measured with Kafka 3.7.2, not " in result.stderr and "--kafka-version 3.7.2" in result.stderr


def test_resume_refuses_new_settings_and_folders_that_are_not_runs(tmp_path: Path) -> None:
    result = kperf(tmp_path, "study", "--resume", "--set", "repeats=3")
    assert result.returncode == 1 and "--resume continues a run with its own settings: drop --set" in result.stderr
    result = kperf(tmp_path, "study", "--resume", str(tmp_path))
    assert result.returncode == 1 and f"{tmp_path} is not a study's run folder" in result.stderr


def test_plan_prints_units_without_running(tmp_path: Path) -> None:
    result = kperf(tmp_path, "study", "--plan", "--profile", "quick", "codecs")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == f"codecs: {len(plan.units('codecs', profiles.parameters('codecs', 'quick')))} units"
    assert not (tmp_path / "runs").exists()


def test_report_without_any_run_is_a_clear_error(tmp_path: Path) -> None:
    result = kperf(tmp_path, "report")
    assert result.returncode == 1 and "no run with results" in result.stderr


def test_points_short_of_the_precision_target_are_measured_again_as_far_as_allowed(tmp_path: Path, bootstrap: str) -> None:
    settings = profiles.parameters("replication", "smoke", clients=["python"], replication_factors=[1], acks_values=["1"],
                                   precision=0.0001, extra_repeats=2, budget_s=600)  # 0.01%: never met
    with target.connect(bootstrap) as cluster:
        records = sweep.run("replication", cluster, tmp_path / "precise", settings)  # its own topics' prefix
    assert sorted(records["repeat"]) == [0, 1, 2]  # the planned repeat, then the two extra ones allowed
    assert records["limit"].notna().all() and records["limit_evidence"].str.len().gt(0).all()
    store = ResultStore.of_run(tmp_path / "precise")
    assert all(store.series(row)["records"].sum() == row["records"] for row in records.to_dict("records"))

"""Test session set-up shared by tests/ and the nbval run of notebooks/.

Notebooks run as they are (nbval), so their scale and cluster come from the
environment their kernel inherits: KPERF_PROFILE=smoke and KPERF_BOOTSTRAP of a
real local cluster this session starts (unless the caller set one), with
results in a temporary KPERF_DATA, removed at the session's end. The analysis and report notebooks read
KPERF_RUN_DIR: a copy of the quick study recorded in tests/data/sample-run (a
copy, because they write fits and reports into the run folder).

Run in lanes (pytest-xdist's ``-n``), the session's cluster is started once, by the process that hands out the
tests, and shared by every lane; each lane has a data folder and a sample-run copy of its own under the session's
(docs/development.md, "The suite"). ``make test`` starts it once for both of its phases (tests/suite.py), and this
file takes it as a caller's.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kperf.kafka import METRICS_ENV
from kperf.kafka.cluster import LocalCluster
from tests.helpers import SESSION_CLUSTER_ENV, STUDIED, start_session_cluster

SESSION: dict[str, LocalCluster] = {}
MADE: list[Path] = []  # the temporary KPERF_DATA this session made: removed at its end (a run left some 3 GB)
SAMPLE_RUN = Path(__file__).parent / "tests" / "data" / "sample-run"


def pytest_configure(config: pytest.Config) -> None:
    HARD_EXIT_FD.append(os.dup(2))  # capture is suspended here: the terminal's (or the lane's channel to it)
    lane = os.environ.get("PYTEST_XDIST_WORKER")
    if lane is not None:  # the session's folder, cluster and settings inherited: a folder and sample run of its own
        shared = Path(os.environ["KPERF_DATA"])
        os.environ["KPERF_DATA"] = str(shared / lane)
        if os.environ.get("KPERF_RUN_DIR") == str(shared / "sample-run"):  # the session's copy, not the caller's run
            os.environ["KPERF_RUN_DIR"] = str(copy_sample_run(shared / lane / "sample-run"))
        return
    if "KPERF_DATA" not in os.environ:
        MADE.append(Path(tempfile.mkdtemp(prefix="kperf-test-data-")))
        os.environ["KPERF_DATA"] = str(MADE[0])
    os.environ.setdefault("KPERF_PROFILE", "smoke")
    if "KPERF_RUN_DIR" not in os.environ:
        os.environ["KPERF_RUN_DIR"] = str(copy_sample_run(Path(os.environ["KPERF_DATA"]) / "sample-run"))
    if config.getoption("numprocesses", None):  # lanes start after this: they inherit the one cluster
        session_cluster()


def copy_sample_run(destination: Path) -> Path:
    """A writable copy of the recorded sample run (its results only: reports are made from them)."""
    shutil.copytree(SAMPLE_RUN, destination, dirs_exist_ok=True)
    return destination


def session_cluster() -> str:
    """Bootstrap of the session's 3-broker cluster, started on first use."""
    if os.environ.get("KPERF_BOOTSTRAP"):
        return os.environ["KPERF_BOOTSTRAP"]
    cluster, variables = start_session_cluster(Path(os.environ["KPERF_DATA"]) / "session-cluster")
    SESSION["cluster"] = cluster
    os.environ.update(variables)
    return cluster.bootstrap


WHOLE_STUDY_TEST = "test_smoke_study_runs_its_experiments_and_capacity_and_writes_a_report"
# Each test's time limit by its kind (pytest-timeout, method "signal"): a hang fails the test with its stack, the
# fixtures it holds stop their brokers and clients, and the suite goes on. A unit test takes seconds at most (one
# that runs the kperf command, a few); a cluster test or a notebook's cell (nbval makes each cell a test) measures
# for minutes at most (docs/development.md lists the slowest).
TIME_LIMITS_S = {"unit": 120.0, "cluster": 600.0, "notebook": 600.0}
# A test stuck where no signal reaches Python (in C code holding on: librdkafka destroying a client of a stopped
# cluster once waited on its broker thread for good) is ended this long after its limit: faulthandler prints every
# thread's stack and exits the process. In a lane (make test runs both phases in lanes), pytest-xdist reports the
# test as failed and starts another lane; the session's brokers and clients die with their parent.
HARD_AFTER_S = 60.0
HARD_EXIT_FD: list[int] = []  # stderr as the session started: a test's own is captured, and lost when it exits


def kind(item: pytest.Item) -> str:
    """unit (tests/unit), notebook (nbval's cells) or cluster (everything else: tests/cluster)."""
    if item.path.suffix == ".ipynb":
        return "notebook"
    return "unit" if "unit" in item.path.relative_to(Path(__file__).parent).parts[:2] else "cluster"


# Tests that measure this host's CPU or speed, or load it on purpose, by file: run in a lane of their own after the
# others (``make test``: ``-m alone``), so no other test's load is counted in theirs, nor theirs in another's.
# A file's name takes all its tests; file::test one of them.
ALONE = frozenset({
    # a searched limit, the sweep's and the search's intervals compared; a headroom searched, a warm-up judged on the
    # brokers' CPU per record (the file's other tests judge SLOs of seconds, or what was lost: they share the lanes)
    "test_capacity_measured.py::test_the_searched_limit_lies_within_the_throughput_experiments_saturation_interval",
    "test_capacity_measured.py::test_a_load_far_below_capacity_meets_every_slo_with_headroom_and_drains_its_backlog",
    "test_disturbed_trials.py",  # a busy loop beside a capacity trial: any other test there would be disturbed
    # the session cluster's share.version changed and set back: any other test's share groups there would be
    # refused meanwhile (transactions.ipynb, which sets transaction.version, runs in the whole-study test instead,
    # on that test's own cluster: tests.helpers.STUDIED)
    "test_share_groups.py::test_a_cluster_without_share_groups_is_named_with_the_feature_and_how_to_enable_it",
    # every share group on the session cluster listed before and after: another lane's would count
    "test_share_consumers.py::test_the_java_tool_reads_with_more_members_than_partitions_and_leaves_no_group",
    # brokers paused and their links slowed under loads judged by their latency in seconds: beside another lane's load
    # the calm before the fault took seconds too (CI, 2026-11-29: three brokers and a producer need both cores). The
    # kill test judges no latency: test_broker_kill.py runs in the lanes.
    "test_faults.py",
    "test_limits_measured.py",  # which resource limited a point, from the CPU each process used
    "test_loops.py",  # the loops' latencies and rates side by side
    "test_resources.py",  # the brokers' and clients' CPU and disk, sampled
    "test_resource_sampler.py",  # a child's CPU against the OS's account
})


def pytest_itemcollected(item: pytest.Item) -> None:
    """Each test gets its kind's time limit, unless it sets its own (``@pytest.mark.timeout``), and the tests of
    :data:`ALONE` their mark; here, before ``-m`` selects by marks."""
    if item.get_closest_marker("timeout") is None:
        item.add_marker(pytest.mark.timeout(TIME_LIMITS_S[kind(item)], method="signal"))
    if item.path.name in ALONE or f"{item.path.name}::{getattr(item, 'originalname', item.name)}" in ALONE:
        item.add_marker(pytest.mark.alone)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """The hard end of a test past its time limit (:data:`HARD_AFTER_S`)."""
    marker = item.get_closest_marker("timeout")  # every test has one (pytest_itemcollected)
    limit = marker.args[0] if marker and marker.args else marker.kwargs.get("timeout") if marker else None
    if limit:
        faulthandler.dump_traceback_later(float(limit) + HARD_AFTER_S, exit=True, file=HARD_EXIT_FD[0])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    """A test that ended its lane (a crash, or the hard limit) is reported failed and not run again: pytest-xdist puts
    a lost lane's file back in the queue whole (``--dist loadfile``), that test among those still to run."""
    for unit in getattr(sched, "workqueue", {}).values():
        if crashitem in unit:
            unit[crashitem] = True


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under CI=true a skip fails: ``make test`` builds every tool a test needs (rdkafka_performance, kfake,
    toxiproxy, the loss helper, Debian's docker-compose), so a skip there means a set-up step is missing."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true, where 'make test' sets up everything a test needs: {reason}"


@pytest.hookimpl(trylast=True)  # after -k, -m and --deselect: only a whole-study test that will run counts
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run each notebook once a session: one the whole-study test executes (papermill, in the smoke form nbval would
    run, its records then checked) is not run again by nbval; run alone, nbval runs it. The capacity notebook is one:
    that test's --workload is examples/smoke.yaml, what the notebook measures when given none."""
    if not any(item.name == WHOLE_STUDY_TEST for item in items):
        return
    from kperf.study.runs import CAPACITY

    again = {f"{name}.ipynb" for name in (*STUDIED, CAPACITY)}
    dropped = [item for item in items if item.path.name in again]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item.path.name not in again]


def pytest_collection_finish(session: pytest.Session) -> None:
    # nbval kernels start after collection and inherit os.environ: give them the cluster now.
    if any(str(item.path).endswith(".ipynb") for item in session.items):
        session_cluster()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if "cluster" in SESSION:
        SESSION.pop("cluster").stop()
        for variable in ("KPERF_BOOTSTRAP", METRICS_ENV, SESSION_CLUSTER_ENV):
            os.environ.pop(variable, None)
    for made in MADE:  # after the cluster whose data it holds has stopped; one given by the caller is kept
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def bootstrap() -> Iterator[str]:
    """A running 3-broker local cluster for tests that only need one to talk to."""
    yield session_cluster()


@pytest.fixture(params=["python", "native"])
def loop(request: pytest.FixtureRequest) -> str:
    """Each hot loop of the Python client (kperf.drivers.loops): the driver's contract holds for both, so a test
    taking this runs once with each (the native one built by 'make native', which 'make test' runs first)."""
    name: str = request.param
    return name

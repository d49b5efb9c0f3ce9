"""Test session set-up shared by tests/ and the nbval run of notebooks/.

Notebooks run as they are (nbval), so their scale and cluster come from the
environment their kernel inherits: KPERF_PROFILE=smoke and KPERF_BOOTSTRAP of a
real local cluster this session starts (unless the caller set one), with
results in a temporary KPERF_DATA, removed at the session's end. The analysis and report notebooks read
KPERF_RUN_DIR: a copy of the quick study recorded in tests/data/sample-run (a
copy, because they write fits and reports into the run folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kperf.kafka import METRICS_ENV
from kperf.kafka.cluster import LocalCluster

SESSION: dict[str, LocalCluster] = {}
MADE: list[Path] = []  # the temporary KPERF_DATA this session made: removed at its end (a run left some 3 GB)
SAMPLE_RUN = Path(__file__).parent / "tests" / "data" / "sample-run"


def pytest_configure(config: pytest.Config) -> None:
    if "KPERF_DATA" not in os.environ:
        MADE.append(Path(tempfile.mkdtemp(prefix="kperf-test-data-")))
        os.environ["KPERF_DATA"] = str(MADE[0])
    os.environ.setdefault("KPERF_PROFILE", "smoke")
    if "KPERF_RUN_DIR" not in os.environ:
        os.environ["KPERF_RUN_DIR"] = str(copy_sample_run(Path(os.environ["KPERF_DATA"]) / "sample-run"))


def copy_sample_run(destination: Path) -> Path:
    """A writable copy of the recorded sample run (its results only: reports are made from them)."""
    shutil.copytree(SAMPLE_RUN, destination, dirs_exist_ok=True)
    return destination


def session_cluster() -> str:
    """Bootstrap of the session's 3-broker cluster, started on first use."""
    if os.environ.get("KPERF_BOOTSTRAP"):
        return os.environ["KPERF_BOOTSTRAP"]
    cluster = LocalCluster(3, directory=Path(os.environ["KPERF_DATA"]) / "session-cluster")
    state = cluster.start()
    SESSION["cluster"] = cluster
    os.environ["KPERF_BOOTSTRAP"] = cluster.bootstrap
    # Not kperf's default cluster folder, so kperf sees a cluster of the user's: it reads the brokers' own view
    # from the exporters named here, as it would a user's.
    os.environ[METRICS_ENV] = ",".join(state.metrics_urls)
    return cluster.bootstrap


WHOLE_STUDY_TEST = "test_smoke_study_runs_its_experiments_and_capacity_and_writes_a_report"


@pytest.hookimpl(trylast=True)  # after -k, -m and --deselect: only a whole-study test that will run counts
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run each notebook once a session: one the whole-study test executes (papermill, in the smoke form nbval would
    run, its records then checked) is not run again by nbval; run alone, nbval runs it. The capacity notebook is one:
    that test's --workload is examples/smoke.yaml, what the notebook measures when given none."""
    if not any(item.name == WHOLE_STUDY_TEST for item in items):
        return
    from kperf.study.runs import CAPACITY
    from tests.helpers import STUDIED

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
        os.environ.pop("KPERF_BOOTSTRAP", None)
        os.environ.pop(METRICS_ENV, None)
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

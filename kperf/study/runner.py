"""The study: experiment notebooks, then the report notebook, executed by papermill into a run folder.

A run folder, ``data/runs/<run id>/``, holds everything a run produced:
``study.json`` (what was asked: experiments, profile, overrides),
``environment.json`` (host, versions, broker settings), the executed
notebooks with their injected parameters (the provenance), the result records
under ``results/``, ``kperf.log`` and ``report.html``. Everything is checked
before the folder is made; a killed study continues with ``resume``, measuring
only the units not yet recorded.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
from tqdm import tqdm

from kperf import __version__
from kperf.drivers.load_hosts.checks import use_scheduler
from kperf.drivers.load_hosts.scheduler import WORKERS_ENV
from kperf.errors import KperfError, MeasurementFailed, UnitsFailed
from kperf.kafka import release
from kperf.kafka.target import Target, connect
from kperf.paths import notebooks_dir
from kperf.processes import STUDY_PID
from kperf.results import ResultStore
from kperf.study import environment, kernel, logs, notebooks, plan, profiles, runs, sweep, validation
from kperf.study.notebooks import execute
from kperf.study.runs import CAPACITY, STUDY_FILE, latest_run, new_run_dir

ENVIRONMENT_FILE = "environment.json"  # where it ran (as every record's env.* columns)
PROGRESS_POLL_S = 0.5


def notebook_complete(run_dir: Path, name: str) -> bool:
    """Whether papermill finished executing ``name`` into ``run_dir`` (it stamps an end time)."""
    path = run_dir / "notebooks" / f"{name}.ipynb"
    if not path.is_file():
        return False
    try:
        meta = nbformat.read(path, as_version=4).metadata.get("papermill", {})
    except Exception:  # a notebook cut short by a kill may not even parse
        return False
    return bool(meta.get("end_time")) and not meta.get("exception")


def run(
    names: Sequence[str] = (),
    profile: str | None = None,
    bootstrap: str | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    workload: Path | None = None,
    checks: Sequence[Callable[[Target], None]] = (),
) -> Path:
    """Run the named experiments (default: the profile's whole study) into a new run folder, then the report.

    Without ``bootstrap`` the local cluster is used: a running one is reused,
    otherwise one is started for the study and stopped after it. With a
    ``workload`` file, the capacity notebook measures it after the experiments
    and the report opens with its verdict; ``checks`` (e.g. that file against
    the live brokers) run with the experiments' own, before any load.
    """
    names = plan.check_experiments(names, profile)
    profile = profiles.resolve_profile(profile)
    overrides = {k: dict(v) for k, v in (overrides or {}).items()}
    settings = plan.resolve(names, profile, overrides)
    use_scheduler(plan.study_workers(settings))
    with connect(bootstrap) as target:
        _validate(settings, target)
        for check in checks:
            check(target)
        run_dir = new_run_dir()
        asked = {"experiments": names, "profile": profile, "overrides": overrides, "bootstrap": bootstrap,
                 "workload": str(workload.resolve()) if workload is not None else None,
                 "workers": os.environ.get(WORKERS_ENV),
                 "kperf": __version__, "started": datetime.now().isoformat(timespec="seconds")}
        write_json(run_dir / STUDY_FILE, asked)
        write_json(run_dir / ENVIRONMENT_FILE, environment.collect(target))
        return _execute(run_dir, names, profile, overrides, settings, target.bootstrap, workload)


def write_json(path: Path, content: Mapping[str, Any]) -> None:
    """``content`` as ``path``, atomically."""
    runs.write_text(path, json.dumps(content, indent=2))


def resume(run_dir: Path | None = None, bootstrap: str | None = None) -> Path:
    """Continue the study of ``run_dir`` (default: the latest) with its own settings: only what is missing runs."""
    run_dir = Path(run_dir) if run_dir is not None else latest_run(with_results=False)
    try:
        asked = json.loads((run_dir / STUDY_FILE).read_text())
    except FileNotFoundError:
        raise KperfError(f"{run_dir} is not a study's run folder (no {STUDY_FILE})") from None
    names, profile, overrides = asked["experiments"], asked["profile"], asked["overrides"]
    settings = plan.resolve(names, profile, overrides)
    check_same_release(run_dir)
    if not os.environ.get(WORKERS_ENV):  # the same load hosts, unless told otherwise
        use_scheduler(asked.get("workers"))
    workload = Path(asked["workload"]) if asked.get("workload") else None
    with connect(bootstrap or asked["bootstrap"]) as target:
        _validate(settings, target)
        return _execute(run_dir, names, profile, overrides, settings, target.bootstrap, workload)


def check_same_release(run_dir: Path) -> None:
    """Refuse to add records of another Kafka release to a run (the stock tools, kperf's own brokers)."""
    environment_file = run_dir / ENVIRONMENT_FILE
    recorded = json.loads(environment_file.read_text()).get("kafka_release") if environment_file.is_file() else None
    current = release.current_version()
    if recorded is not None and recorded != current:
        raise KperfError(f"{run_dir} was measured with Kafka {recorded}, not {current}: resume it with "
                         f"--kafka-version {recorded}")


def _validate(settings: Mapping[str, Mapping[str, Any]], target: Target) -> None:
    """Every experiment's checks against the cluster, all before any load (each notebook repeats its own)."""
    for name, values in settings.items():
        validation.validate(name, values, target)


def _execute(
    run_dir: Path,
    names: list[str],
    profile: str,
    overrides: Mapping[str, Mapping[str, Any]],
    settings: Mapping[str, Mapping[str, Any]],
    bootstrap: str,
    workload: Path | None = None,
) -> Path:
    """Execute each experiment notebook with work left, the capacity notebook for a ``workload`` not yet measured,
    then the report notebook."""
    log = logs.to_run_folder(run_dir)
    log.info("study: %s profile, experiments %s, against %s", profile, ", ".join(names), bootstrap)
    print(f"kperf: run folder {run_dir}", file=sys.stderr)
    os.environ[STUDY_PID] = str(os.getpid())  # the kernel dies with this process (see processes.die_with_study)
    with kernel.shared(notebooks_dir()) as shared:  # one for every notebook of the study (kperf.study.kernel)
        _experiments(run_dir, names, profile, overrides, settings, bootstrap, log, shared)
        capacity_failed = None
        if workload is not None and not notebook_complete(run_dir, CAPACITY):
            log.info("study: measuring the workload %s", workload)
            folder = run_dir / CAPACITY
            if folder.is_dir():  # an interrupted capacity run: measured again whole, as its search depends on every trial
                shutil.rmtree(folder)
            try:
                notebooks.render(CAPACITY, folder, {"workload": str(workload), "bootstrap": bootstrap, "into": str(folder)},
                                 run_dir, progress=False, kernel=shared)
            except MeasurementFailed as exc:  # the experiments' report is still written; the study then fails with it
                log.warning("study: the workload's measurement failed: %s", exc)
                capacity_failed = exc
        # The report fits every experiment and saves the fits (fits.csv) as it draws them: the analysis notebook, which
        # draws the same fits alone, is the user's (it took 18 s of a smoke study's 9.5 min, for figures the report has).
        log.info("study: experiments done, fitting and writing the report")
        html = notebooks.render_report(run_dir, shared)
    log.info("study: report %s", html)
    if capacity_failed is not None:
        raise MeasurementFailed(f"{capacity_failed} (the report is written: {html})", capacity_failed.cause)
    return html


def _experiments(run_dir: Path, names: list[str], profile: str, overrides: Mapping[str, Mapping[str, Any]],
                 settings: Mapping[str, Mapping[str, Any]], bootstrap: str, log: logging.Logger,
                 shared: kernel.Kernel) -> None:
    """Execute each experiment notebook with work left, the cluster warmed by the first with units to measure.

    A notebook whose units failed fails in its last cell (:func:`kperf.study.failures.raise_if_failed`), as it does
    under nbval or in JupyterLab: the study passes no flag to change that (the executed copy shows what a user would
    see); it recognises that one failure (:class:`~kperf.errors.UnitsFailed`, raised once every cell before it ran)
    and goes on, since those units are recorded as failed and :func:`kperf.study.failures.of_run` names them when
    the study ends (exit 3). Each planned unit is recorded, failed or not, so a study's notebook never measures
    nothing. Any other failure still stops the study."""
    totals = {name: len(plan.units(name, settings[name])) for name in names}
    warmed = False
    with _progress(run_dir, totals) as follow:
        for i, name in enumerate(names, 1):
            left = totals[name] - len(sweep.recorded(run_dir, name))
            if left <= 0 and notebook_complete(run_dir, name):
                log.info("study: %s already complete", name)
                continue
            params: dict[str, Any] = {"bootstrap": bootstrap, "run_dir": str(run_dir), "profile": profile,
                                      **profiles.overrides_for(name, overrides)}
            if warmed or left <= 0:
                params["warm_up_s"] = 0
            warmed = warmed or left > 0
            log.info("study: [%d/%d] %s, %d units to measure", i, len(names), name, max(left, 0))
            follow(name)
            try:
                execute(name, run_dir, params, progress=False, kernel=shared)
            except UnitsFailed:  # recorded as failed: the study goes on, and names them as it ends
                log.info("study: %s has failed units (each logged above); going on", name)


@contextmanager
def _progress(run_dir: Path, totals: Mapping[str, int]) -> Iterator[Callable[[str], None]]:
    """Progress bars on stderr, overall and for the running experiment, from the records in the run folder.

    The measuring happens in notebook kernels; the records they write are the
    progress, so the bars follow the results folder (a poll every half second).
    """
    bars = _Bars(ResultStore.of_run(run_dir), totals)
    bars.refresh()
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(PROGRESS_POLL_S):
            bars.refresh()

    thread = threading.Thread(target=poll, name="kperf-progress", daemon=True)
    thread.start()
    try:
        yield bars.follow
    finally:
        stop.set()
        thread.join()
        bars.close()


class _Bars:
    """The overall bar and the running experiment's, moved to the records counted in a results folder."""

    def __init__(self, store: ResultStore, totals: Mapping[str, int]) -> None:
        self.store, self.totals = store, totals
        self.overall = tqdm(total=sum(totals.values()), desc="study", unit="unit", position=0, file=sys.stderr)
        self.current: dict[str, Any] = {}

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = dict.fromkeys(self.totals, 0)
        for path in self.store.directory.glob("*.parquet"):
            experiment = path.name.rsplit("-", 1)[0]
            if experiment in found:
                found[experiment] += 1
        return found

    def refresh(self) -> None:
        """Move the bars to the counts on disk (drawing only on a change: logs stay readable)."""
        found, totals = self.counts(), self.totals
        bars = [(self.overall, sum(min(found[n], totals[n]) for n in totals))]
        if self.current:
            bars.append((self.current["bar"], min(found[self.current["name"]], totals[self.current["name"]])))
        for bar, done in bars:
            if done != bar.n:
                bar.update(done - bar.n)

    def follow(self, name: str) -> None:
        """Show the experiment ``name`` as the running one."""
        if self.current:
            self.current["bar"].close()
        self.current.update(name=name, bar=tqdm(total=self.totals[name], desc=name, unit="unit", position=1, leave=False,
                                                file=sys.stderr))
        self.refresh()

    def close(self) -> None:
        self.refresh()
        if self.current:
            self.current["bar"].close()
        self.overall.close()

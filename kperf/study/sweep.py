"""Running an experiment: its plan of measured units (see :mod:`kperf.study.plan`), resumable, each unit
recorded as soon as it ends.

Before measuring, the run
folder's records are read: units already recorded are skipped, which is what
makes a killed study resumable without measuring anything twice. A unit whose
measurement failed (:class:`~kperf.errors.MeasurementFailed`; once more first
when a wait ran out) is recorded as a failed unit and the sweep goes on; after
a few failures of one client with one cause the rest of its units are not
tried (:mod:`kperf.study.breaker`). Failed units count as not recorded: a
resumed run measures them again.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from kperf import drivers, precision, validity, warmth
from kperf.drivers.load_hosts.checks import use_scheduler
from kperf.drivers.point import measure_point, roles
from kperf.errors import MeasurementFailed
from kperf.kafka import topics
from kperf.kafka.target import Target
from kperf.load import Workload
from kperf.processes import die_with_study
from kperf.results import FAILED, Measurement, Result, ResultStore, succeeded
from kperf.study import calibration, environment, failures, logs, plan, runs, validation
from kperf.study.breaker import Breaker
from kperf.study.experiment import Point, Settings

WARM_UP_MAX_RUNS = 30  # a bound, should the rate never settle


def recorded(run_dir: Path, experiment: str) -> set[tuple[str, str, int]]:
    """Keys of the units of ``experiment`` recorded in ``run_dir`` and not failed (a failed one is measured again)."""
    table = ResultStore.of_run(run_dir).load(experiment)
    if table.empty:
        return set()
    failed = {(u.point, u.client, u.repeat) for u in failures.failed_units(table)}
    return {(p, c, int(r)) for p, c, r in table[["point", "param.client", "repeat"]].itertuples(index=False)} - failed


def warm_up_load(brokers: int) -> Workload:
    """The warm-up's load: unthrottled, replicated, acks=all, so every broker's produce and
    replication paths run hot whatever the experiment then measures."""
    replicas = min(3, brokers)
    return Workload(687, 100_000, partitions=replicas, replication_factor=replicas, producer_config={"acks": "all"})


def warm_up(target: Target, seconds: float, topic_prefix: str) -> None:
    """Put unrecorded load on the cluster for at least ``seconds``, then until its rate stops rising
    (:func:`kperf.warmth.settled` on each run's seconds per record).

    Freshly started brokers get faster for the first 20-30 s of load (their
    JIT compiling the hot paths, most likely): measured on this project's CI machine, a
    fresh 3-broker cluster went from 48k to 160k records/s over 8 runs, while
    a new client against the warmed cluster started at 150k. Cold runs can
    agree with each other, so settling alone does not prove warmth; the
    minimum load comes first. The load is replicated and unthrottled so every
    broker's produce and replication paths run; even so, on the 2-core CI
    machine the first repeat of an experiment still often ran at half the rate
    of the second (see docs/profiles.md), so warm-up is no cure for noise. Nor
    does it warm every path: a paced producer of small batches to 15 partitions
    found the brokers as cold after it as after a start (kperf/warmth.py).
    """
    load = warm_up_load(target.brokers)
    deadline = time.monotonic() + seconds
    costs: list[float] = []
    for _ in range(WARM_UP_MAX_RUNS):
        (measured,) = measure_point(target, load, drivers.get(drivers.UNMEASURED), topic_prefix)
        rate = measured.records_per_s
        costs.append(1 / rate if rate > 0 else math.nan)
        if time.monotonic() >= deadline and warmth.settled(costs):
            return


def imprecise(records: pd.DataFrame, units: list[plan.Unit], settings: Settings) -> list[plan.Unit]:
    """The next repeat of each point and client whose rate is not yet known to ``settings["precision"]`` (any of
    its roles) and that has repeats left (``extra_repeats`` beyond the planned ones), in the plan's order."""
    valid = succeeded(records)  # a failed point is not imprecise: --resume measures it again
    if valid.empty:
        return []
    reached = precision.precisions(valid).groupby(["point", "param.client"])
    short = reached["precision"].apply(lambda p: not (p <= settings["precision"]).all())  # NaN: no interval, short
    tried = records.groupby(["point", "param.client"])["repeat"]  # failed repeats too: their numbers are taken
    allowed = tried.nunique() < settings["repeats"] + settings["extra_repeats"]
    wanted, next_repeat = {key for key, s in short.items() if s and allowed[key]}, tried.max() + 1
    first = {(u.point.name, u.client): u for u in units if u.repeat == 0}
    return [plan.Unit(u.point, u.client, int(next_repeat[key])) for key, u in first.items() if key in wanted]


def run(experiment: str, target: Target, run_dir: Path | str | None, settings: Settings) -> pd.DataFrame:
    """Measure every pending unit of ``experiment`` into ``run_dir`` (None: a new run folder) and return its records.

    Everything is checked before the folder is made or any load starts.
    """
    die_with_study()
    use_scheduler(settings.get("workers"))
    validation.validate(experiment, settings, target)
    run_dir = runs.run_folder(run_dir)
    print(f"kperf: run folder {run_dir}")
    sweep = _Sweep(experiment, target, run_dir, settings)
    todo = sweep.pending()
    with tqdm(total=len(sweep.units), initial=len(sweep.units) - len(todo), desc=experiment, unit="unit") as bar:
        for unit in todo:
            sweep.record(unit, bar)
        sweep.repeat_imprecise(bar)
    return sweep.store.load(experiment)


class _Sweep:
    """One experiment's units measured into one run folder, each recorded as it ends."""

    def __init__(self, experiment: str, target: Target, run_dir: Path, settings: Settings) -> None:
        self.experiment, self.target, self.run_dir, self.settings = experiment, target, run_dir, settings
        self.log = logs.to_run_folder(run_dir)
        self.store = ResultStore.of_run(run_dir)
        self.units = plan.units(experiment, settings)
        self.prefix = f"{run_dir.name}-{experiment}"
        self.breaker = Breaker()
        self.sizes: dict[tuple[str, str], Point] = {}  # each point and client's size, once measured (calibrated)

    def pending(self) -> list[plan.Unit]:
        """The units not yet recorded, with what an interrupted run left deleted and the cluster warmed for them."""
        done = recorded(self.run_dir, self.experiment)
        self.sizes.update(self.calibrated())
        todo = [u for u in self.units if u.key not in done]
        if failed := self.store.remove_failed(self.experiment):  # before measuring them again: never two records
            self.log.info("%s: %d failed unit(s) to measure again", self.experiment, failed)
        left = topics.delete_temporary(self.target.bootstrap, self.prefix)  # planned units or extra repeats may follow
        if left:
            self.log.info("%s: deleted %d topic(s) an interrupted run left: %s", self.experiment, len(left), ", ".join(left))
        if todo:
            self.log.info("%s: %d of %d units to measure against %s", self.experiment, len(todo), len(self.units),
                          self.target.bootstrap)
            if self.settings["warm_up_s"] > 0:
                try:
                    warm_up(self.target, self.settings["warm_up_s"], self.prefix)
                except MeasurementFailed as exc:
                    self.warn("%s: the warm-up failed, measuring unwarmed: %s", self.experiment, exc)
        self.env = environment.collect(self.target)
        self.chosen = {client: drivers.get(client) for client in self.settings["clients"]}
        return todo

    def record(self, unit: plan.Unit, bar: tqdm) -> float:
        """Measure and record ``unit`` (a failed unit too), sized to give a rate (:mod:`kperf.study.calibration`);
        the seconds it took."""
        started = time.monotonic()
        unit, results = self.long_enough(unit)
        rows = [r.row() for r in results]
        self.judged(unit.client, results, rows)
        self.store.append(*results)
        took = time.monotonic() - started
        if reasons := [f"{row['role']}: {row[FAILED]}" for row in rows if row[FAILED]]:
            self.warn("%s: %s [%s, repeat %d] failed: %s", self.experiment, unit.point.name, unit.client, unit.repeat,
                      "; ".join(reasons))
        else:
            self.log.info("%s: %s [%s, repeat %d] recorded in %.1f s: %s", self.experiment, unit.point.name,
                          unit.client, unit.repeat, took, "; ".join(f"{r.measurement.role} "
                                                                    f"{r.measurement.records_per_s:,.0f} records/s"
                                                                    for r in results))
        bar.update()
        return took

    def long_enough(self, unit: plan.Unit) -> tuple[plan.Unit, list[Result]]:
        """``unit`` measured at its calibrated size, and again larger while it ran too briefly to give a rate (at
        most ROUNDS more times); the unit as last measured, and its records."""
        planned, unit = unit.point, self.sized(unit)
        results = self.results(unit)
        before: list[dict[str, Any]] = []
        for _ in range(calibration.ROUNDS):
            rows = [r.row() for r in results]
            if (bigger := calibration.grown(unit.point, planned, rows, before)) is None:
                break
            before = rows
            self.sizes[(unit.point.name, unit.client)] = bigger
            unit = self.sized(unit)
            self.log.info("%s: %s [%s] ran too briefly to give a rate (%s): measuring it with %s records", self.experiment,
                          unit.point.name, unit.client, "; ".join(row[FAILED] for row in rows if row[FAILED]),
                          f"{unit.point.workload.records:,}")
            results = self.results(unit)
        if unit.point is not planned:  # its later repeats measured at this size
            self.sizes[(unit.point.name, unit.client)] = unit.point
        return unit, results

    def calibrated(self) -> dict[tuple[str, str], Point]:
        """The points an interrupted run of this experiment measured with more records than planned (calibrated)."""
        table = self.store.load(self.experiment)
        if table.empty or "param.records" not in table:
            return {}
        grown = table.groupby(["point", "param.client"])["param.records"].max()
        planned = {(u.point.name, u.client): u.point for u in self.units if u.repeat == 0}
        return {key: calibration.scaled(point, grown[key] / point.workload.records) for key, point in planned.items()
                if key in grown and grown[key] > point.workload.records}

    def results(self, unit: plan.Unit) -> list[Result]:
        """``unit`` measured, as its records."""
        params = {**unit.point.params, "client": unit.client, "precision": self.settings["precision"]}
        return [Result(self.run_dir.name, self.experiment, unit.point.name, unit.repeat, params, m, self.env)
                for m in self.measure(unit)]

    def sized(self, unit: plan.Unit) -> plan.Unit:
        """``unit`` with its point as calibrated by an earlier repeat (of this run or the one resumed), else as planned.
        Never guessed from another point: one experiment's points run at unlike speeds (a gzip point at a fifteenth of
        an uncompressed one here), and a guess too large cost a minute a unit, where one too small costs a short run."""
        point = self.sizes.get((unit.point.name, unit.client))
        return unit if point is None else plan.Unit(point, unit.client, unit.repeat)

    def measure(self, unit: plan.Unit) -> list[Measurement]:
        """What ``unit`` measured; when it failed, a failed record of each of its roles with the reason (one per
        role, as a unit that ran has, so every role's table holds the point)."""
        failed_roles = roles(unit.point.workload, self.chosen[unit.client])
        if (not_tried := self.breaker.open(unit.client)) is not None:
            return [Measurement.failed(role, unit.client, not_tried) for role in failed_roles]
        try:
            return self.tried(unit)
        except MeasurementFailed as exc:
            self.breaker.failed(unit.client, exc.cause)
            return [Measurement.failed(role, unit.client, str(exc)) for role in failed_roles]

    def judged(self, client: str, results: list[Result], rows: list[dict[str, Any]]) -> None:
        """Tell the breaker how a unit of ``client`` went, once measured (a failure that raised it knows already):
        a record that read or wrote nothing, or less than asked, is a failure of the cluster to serve the client;
        any other record shows it served it (a run too short for a rate is a matter of size)."""
        if any(r.measurement.failure for r in results):
            return
        causes = [c for row in rows if (c := validity.cause(row)) in validity.CLUSTER_FAILURES]
        if causes:
            self.breaker.failed(client, causes[0])
        else:
            self.breaker.ran(client)

    def tried(self, unit: plan.Unit) -> list[Measurement]:
        """``unit``'s point measured, once more when a wait ran out (a slow moment of the cluster, perhaps)."""
        driver = self.chosen[unit.client]
        try:
            return measure_point(self.target, unit.point.workload, driver, self.prefix)
        except MeasurementFailed as exc:
            if not exc.timed_out:
                raise
            self.warn("%s: %s [%s, repeat %d] timed out, trying once more: %s", self.experiment, unit.point.name,
                      unit.client, unit.repeat, exc)
        return measure_point(self.target, unit.point.workload, driver, self.prefix)

    def warn(self, message: str, *args: object) -> None:
        """One line in the run's log and on stderr (in a study, the notebook's output; the study lists every failed
        unit again when it ends)."""
        self.log.warning(message, *args)
        print(f"kperf: {message % args}", file=sys.stderr)

    def repeat_imprecise(self, bar: tqdm) -> None:
        """One more repeat of each point short of the precision target, round after round, within the budget."""
        settings = self.settings
        spent = 0.0  # of budget_s, in this call: a resumed run may spend it again, and the last unit may overrun it
        while spent < settings["budget_s"] and (extra := imprecise(self.store.load(self.experiment), self.units, settings)):
            self.log.info("%s: %d point(s) short of the precision target %g: one more repeat each, %.0f s of budget left",
                          self.experiment, len(extra), settings["precision"], settings["budget_s"] - spent)
            bar.total += len(extra)
            for unit in extra:
                if spent >= settings["budget_s"]:
                    break
                spent += self.record(unit, bar)

"""What an experiment is, and the registry where kperf finds every one of them.

An experiment asks one question by varying one thing (the published studies'
method, see docs/published.md). It is one module of
:mod:`kperf.experiments` defining one :class:`Experiment`: its parameters with
types and ranges, its values under each profile, its grid of points, its
analysis and its figure. Profiles, plans, the study and the report find
experiments only through :func:`get` and :func:`registered`.

A point is one workload (:class:`~kperf.load.Workload`) with the
parameters it is recorded under: Kafka's names for client and topic settings
(``batch.size``, ``compression.type``), kperf's own for the rest (``records``,
``producers``). Nothing here imports a driver, pandas or a plot library, so
plans and bad-input errors answer at once.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from kperf.dask_address import ADDRESS
from kperf.errors import KperfError, closest
from kperf.load import CLIENTS, JOIN_TIMEOUT_S, WINDOW_S, Workload
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd

Settings = Mapping[str, Any]
PACKAGE = "kperf.experiments"  # every module in it registers one experiment
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
ACKS = ("0", "1", "all")
PAYLOADS = ("random", "text")
PROFILES = ("smoke", "quick", "seed")  # described in kperf.study.profiles


@dataclass(frozen=True)
class Param:
    """What a parameter accepts: a number or text (``kind``), or a list of them (``many``)."""

    kind: type  # int, float or str
    doc: str
    many: bool = False
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False  # the minimum itself is refused: the value must be above it
    choices: tuple[str, ...] | None = None
    unthrottled: bool = False  # -1 also allowed (a target rate: no cap)
    form: tuple[re.Pattern[str], str] | None = None  # text that must match the pattern, described by the example
    empty: bool = False  # a list that may be empty: a grid's optional part, left out

    def parse(self, name: str, value: Any) -> Any:
        """``value`` checked and normalized (a scalar given for a list becomes a one-item list)."""
        if self.many:
            items = value if isinstance(value, list | tuple) else [value]
            if not items and not self.empty:
                raise KperfError(f"parameter {name!r} needs at least one value")
            return [self._one(name, v) for v in items]
        return self._one(name, value)

    def _one(self, name: str, value: Any) -> Any:
        if self.kind is str:
            # acks: 1 in YAML is the number 1; Kafka's setting is the same either way.
            if isinstance(value, int) and not isinstance(value, bool) and self.choices == ACKS:
                value = "all" if value == -1 else str(value)
            if not isinstance(value, str):
                raise KperfError(f"parameter {name!r} must be text, got {value!r}")
            if self.form is not None and value and not self.form[0].fullmatch(value):  # "": not given
                raise KperfError(f"parameter {name!r} must look like {self.form[1]}, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int | float):
            raise KperfError(f"parameter {name!r} must be a number, got {value!r}")
        elif self.kind is int:
            if value != int(value):
                raise KperfError(f"parameter {name!r} must be a whole number, got {value!r}")
            value = int(value)
        elif not math.isfinite(value):
            raise KperfError(f"parameter {name!r} must be finite, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise KperfError(f"parameter {name!r}: unknown value {value!r}, choose from {', '.join(self.choices)}")
        low = self.minimum is not None and (value <= self.minimum if self.above else value < self.minimum)
        if low and not (self.unthrottled and value == -1):
            allowed = f"{'above' if self.above else 'at least'} {self.minimum:g}" + (
                " (or -1: unthrottled)" if self.unthrottled else "")
            raise KperfError(f"parameter {name!r} must be {allowed}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise KperfError(f"parameter {name!r} must be at most {self.maximum:g}, got {value!r}")
        return value


# Parameters several experiments share: an experiment names those it has with :func:`common`.
COMMON = {
    "clients": Param(str, "python (confluent-kafka), java (Kafka's stock perf tools) or both", many=True, choices=CLIENTS),
    "repeats": Param(int, "measurements of each point, interleaved", minimum=1),
    "warm_up_s": Param(float, "unrecorded load before the first point, at least this long", minimum=0),
    "precision": Param(float, "target half-width of each point's 95% interval, relative to its rate (0.05: 5%)",
                       minimum=0, above=True, maximum=1),
    "extra_repeats": Param(int, "repeats kperf may add to a point that misses the precision target", minimum=0),
    "budget_s": Param(float, "seconds of measuring the experiment may spend on extra repeats", minimum=0),
    "window_s": Param(float, "seconds per window of each point's time series (no longer than a point)", minimum=0,
                      above=True),
    "join_timeout_s": Param(float, "seconds a consumer group may take to form (subscribe to first assignment) before "
                                   "its unit fails", minimum=0, above=True),
    "workers": Param(str, "a Dask scheduler whose workers run the load (docs/workers.md); \"\" (the profiles'): "
                          "$KPERF_WORKERS, else this host", form=(ADDRESS, "tcp://host:8786")),
    "record_size": Param(int, "payload bytes per record", minimum=1),
    "records": Param(int, "records per point", minimum=1),
    "partitions": Param(int, "partitions of each point's topic", minimum=1),
    "replication_factor": Param(int, "replicas of each point's topic", minimum=1),
    "acks": Param(str, "producer acks", choices=ACKS),
    "batch_size": Param(int, "producer batch.size (bytes)", minimum=1),
    "linger_ms": Param(int, "producer linger.ms", minimum=0),
}
EVERY_EXPERIMENT = ("clients", "repeats", "warm_up_s", "precision", "extra_repeats", "budget_s", "window_s",
                    "join_timeout_s", "workers")


def common(*names: str) -> dict[str, Param]:
    """The shared parameters every experiment has, and ``names`` of the others."""
    return {n: COMMON[n] for n in (*EVERY_EXPERIMENT, *names)}


@dataclass(frozen=True)
class Point:
    """One grid point: a stable name (unique in its experiment), its recorded parameters, its load."""

    name: str
    params: Mapping[str, Any]
    workload: Workload
    clients: tuple[str, ...] = ()  # the clients that can measure it; (): every client the study names

    def runs_on(self, client: str) -> bool:
        return not self.clients or client in self.clients


@dataclass(frozen=True)
class Panel:
    """One panel of an experiment's figure: which rows (role), what against what, and which parameters
    tell the lines apart (client, and what else the grid crosses)."""

    role: str  # "producer", "consumer", or "latency" (rows with end-to-end latency: either client)
    x: str
    y: str
    series: tuple[str, ...] = ("param.client",)
    log_x: bool = False
    categorical: bool = False
    where: tuple[tuple[str, object], ...] = ()  # only the rows whose columns hold these values: one part of a grid


def no_rules(settings: Settings) -> None:
    """An experiment whose parameters need no check beyond each one's type and range."""


@dataclass(frozen=True)
class Experiment:
    """One question kperf answers: everything about it, in one place."""

    name: str  # notebooks/<name>.ipynb runs it; its records carry experiment=<name>
    title: str  # the report's heading
    order: int  # the study runs experiments by it, lowest first
    params: Mapping[str, Param]
    profiles: Mapping[str, Mapping[str, Any]]  # per profile, its own values over the profile's shared ones
    grid: Callable[[Settings], list[Point]]
    analyze: Callable[[pd.DataFrame], Finding]  # its records -> what they answer
    panels: tuple[Panel, ...]
    rules: Callable[[Settings], None] = no_rules  # consistency between parameters; raises KperfError
    question: str = ""  # what it answers, in the words of the report's answer table
    measure: tuple[str, str] = ("records_per_s", "highest")  # the column its answer is the best point of, and which end
    answer_where: tuple[tuple[str, object], ...] = ()  # the rows that answer its question (one part of a grid)
    # The profiles whose whole study (kperf study naming no experiment) runs it: one that would overrun a profile's
    # time leaves it out there, and still runs under it when named.
    whole_study: tuple[str, ...] = PROFILES

    def __post_init__(self) -> None:
        missing = set(PROFILES) - set(self.profiles)
        if missing:
            raise KperfError(f"experiment {self.name!r} gives no values for profile(s) {', '.join(sorted(missing))}")
        unknown = set(self.whole_study) - set(PROFILES)
        if unknown:
            raise KperfError(f"experiment {self.name!r}: whole_study names unknown profile(s) "
                             f"{', '.join(sorted(unknown))}")

    def points(self, settings: Settings) -> list[Point]:
        """The grid's points, each measured with the settings' time-series window and its consumers' join bound
        (every experiment has both; the bound is no parameter of the point: it changes no valid measurement)."""
        window, join = settings.get("window_s", WINDOW_S), settings.get("join_timeout_s", JOIN_TIMEOUT_S)
        return [replace(p, params={**p.params, "window_s": window},
                        workload=replace(p.workload, window_s=window, join_timeout_s=join))
                for p in self.grid(settings)]


_registry: dict[str, Experiment] = {}


def register(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to the registry (each module of :mod:`kperf.experiments` calls this once)."""
    if experiment.name in _registry:
        raise KperfError(f"experiment {experiment.name!r} is registered twice")
    _registry[experiment.name] = experiment
    return experiment


@cache
def _discover() -> None:
    """Import every experiment module: by name, as plugins are found, since they sit above this layer."""
    package = importlib.import_module(PACKAGE)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{PACKAGE}.{module.name}")


def registered() -> list[Experiment]:
    """Every experiment, in the study's order."""
    _discover()
    return sorted(_registry.values(), key=lambda e: e.order)


def names() -> list[str]:
    return [e.name for e in registered()]


def get(name: str) -> Experiment:
    """The experiment called ``name``; an error naming the known ones otherwise."""
    _discover()
    if name not in _registry:
        raise KperfError(f"unknown experiment {name!r}{closest(name, names())}: choose from {', '.join(names())}")
    return _registry[name]


def workload(s: Settings, producer: Mapping[str, Any] | None = None, **varied: Any) -> Workload:
    """The experiment's fixed load from its settings, with ``varied`` fields and ``producer`` client settings
    (Kafka names) on top of the fixed ``batch.size``, ``linger.ms`` and ``acks``."""
    fixed_producer = {"batch.size": s.get("batch_size"), "linger.ms": s.get("linger_ms"), "acks": s.get("acks")}
    config = {k: v for k, v in {**fixed_producer, **(producer or {})}.items() if v is not None}
    fields_ = {
        "record_size": s.get("record_size"),
        "records": s.get("records"),
        "partitions": s.get("partitions"),
        "replication_factor": s.get("replication_factor"),
    }
    return Workload(**{**{k: v for k, v in fields_.items() if v is not None}, **varied}, producer_config=config)


def point(name: str, load: Workload, *, clients: tuple[str, ...] = (), **params: Any) -> Point:
    """A point recorded with its workload's shape and client settings, plus ``params``; measured by ``clients``
    only, when given (a setting one client has no option for), else by every client the study names."""
    recorded = {
        "records": load.records,
        "record_size": load.record_size,
        "rate": load.rate,
        "partitions": load.partitions,
        "replication_factor": load.replication_factor,
        "producers": load.producers,
        "consumers": load.consumers,
        **load.producer_config,
        **load.consumer_config,
        **load.topic_config,
        **params,
    }
    return Point(name, recorded, load, clients)


def paced_records(s: Settings, rate: float) -> int:
    """Records a producer paced at ``rate`` sends in the point's ``duration_s``."""
    return max(1, round(rate * s["duration_s"]))


def min_insync(s: Settings, replication_factor: int) -> dict[str, str]:
    """The topic setting min.insync.replicas, capped at the point's replication factor."""
    return {"min.insync.replicas": str(min(s["min_insync_replicas"], replication_factor))}

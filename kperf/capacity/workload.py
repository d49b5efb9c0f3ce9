"""The workload file: a user's traffic and its SLOs, in YAML, checked before any load (docs/workload.md).

Its shape is a JSON Schema (:data:`SCHEMA`), checked by jsonschema; what a
schema cannot say (exactly one way of giving the rate, weights summing to 1,
replication within the live brokers) is checked after it. Every error is one
line naming the file, the line PyYAML read the field from, and the field.

A workload is one or more *streams*, each a topic with its producers, records,
keys, rate and consumer groups: one from the file's top-level ``topic``, or
one per item of its ``topics`` list (each item's fields over the file's own,
which act as defaults). Every phase runs the streams together, each at its
share of the workload's rate.
"""

from __future__ import annotations

import math
import shlex
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from kperf import validity
from kperf.errors import KperfError, closest
from kperf.load import (
    ACK_MODES,
    FAULT_KINDS,
    GROUP_PROTOCOLS,
    ISOLATION_LEVELS,
    JOIN_TIMEOUT_S,
    Fault,
    Sharing,
    Transactions,
)

SECONDS_PER_DAY = 86_400
MIB = 2**20
LATENCY_PERCENTILES = {50.0: "p50", 95.0: "p95", 99.0: "p99", 99.9: "p999"}  # what kperf's histograms summarize
WEIGHT_TOLERANCE = 1e-6
SIZE_FORMS = ("size", "sizes", "percentiles", "sample_file")  # a record's size: one, weights, percentiles, a sample
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
# The warm-up's rounds: as long as the runs kperf.warmth's rule was checked on, and at most twice the load a freshly
# started local cluster took to settle under S1 here (6 rounds, 2026-11-28).
WARM_UP_S = 20.0
WARM_UP_MAX_S = 240.0

FieldPath = tuple[str | int, ...]  # a field's keys and indexes from the file's top, e.g. ("topics", 0, "rate")
Failure = Callable[[FieldPath, str], KperfError]  # a field's path and what is wrong -> the error to raise

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}
_COMMAND = {"oneOf": [{"type": "string", "minLength": 1},
                      {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}]}
_FAULT = {
    "type": "object", "additionalProperties": False, "required": ["kind", "at_s", "for_s", "duration_s"],
    "properties": {"enabled": {"type": "boolean"}, "kind": {"enum": list(FAULT_KINDS)},
                   "at_s": {"type": "number", "minimum": 0}, "for_s": _POSITIVE, "duration_s": _POSITIVE,
                   "start": _COMMAND, "stop": _COMMAND, "latency_ms": _POSITIVE, "bandwidth_kib_s": _POSITIVE,
                   "loss_pct": _POSITIVE},
}
_SETTINGS = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}
_LATENCY_SLO = {
    "type": "object", "additionalProperties": False, "required": ["percentile", "max_ms"],
    "properties": {"percentile": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100}, "max_ms": _POSITIVE},
}
# retention_hours: how long the topic keeps its records, for `kperf plan`'s disk (a capacity run's topics are its own).
_TOPIC_LAYOUT = {"partitions": _COUNT, "replication_factor": _COUNT, "min_insync_replicas": _COUNT,
                 "retention_hours": _POSITIVE}
_PRODUCER = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "acks": {"enum": ["0", "1", "all", 0, 1, -1]},
        "batch_size": _COUNT,
        "linger_ms": {"type": "number", "minimum": 0},
        "compression": {"enum": CODECS},
        "idempotence": {"type": "boolean"},
        "transactions": {"type": "object", "additionalProperties": False,  # exactly-once: one of the two
                         "properties": {"records": _COUNT, "ms": _POSITIVE}},
        "processes": _COUNT,
        "settings": _SETTINGS,
    },
}
_RECORD = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "size": _COUNT,
        "sizes": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["bytes", "weight"],
            "properties": {"bytes": _COUNT, "weight": _POSITIVE},
        }},
        "percentiles": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["percentile", "bytes"],
            "properties": {"percentile": {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
                           "bytes": _COUNT},
        }},
        "sample_file": {"type": "string", "minLength": 1},
        "payload": {"enum": ["random", "text"]},
    },
}
_KEYS = {
    "type": "object", "additionalProperties": False, "required": ["count"],
    "properties": {"count": _COUNT, "zipf_s": {"type": "number", "minimum": 0}},
}
_RATE = {
    "type": "object", "additionalProperties": False,
    "properties": {"records_per_s": _POSITIVE, "mib_per_s": _POSITIVE, "per_day": _POSITIVE,
                   "peak_factor": {"type": "number", "minimum": 1}},
}
_SHARE = {  # a share group (KIP-932): how its members answer, and the group's own settings
    "share": {"type": "boolean"}, "ack": {"enum": list(ACK_MODES)},
    "release": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
    "reject": {"type": "number", "minimum": 0, "exclusiveMaximum": 1}, "group_settings": _SETTINGS,
}
_CONSUMERS = {"type": "array", "items": {
    "type": "object", "additionalProperties": False, "required": ["group"],
    "properties": {"group": {"type": "string", "minLength": 1}, "consumers": _COUNT, "settings": _SETTINGS,
                   "protocol": {"enum": list(GROUP_PROTOCOLS)}, "isolation": {"enum": list(ISOLATION_LEVELS)}, **_SHARE,
                   # read-process-write: the group processes every record into a second topic, exactly once
                   "process": {"type": "object", "additionalProperties": False,
                               "properties": {"records": _COUNT, "ms": _POSITIVE}}},
}}
# A consumer group's named fields and the librdkafka settings they are (a share group has neither).
GROUP_FIELDS = {"protocol": "group.protocol", "isolation": "isolation.level"}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["duration_s"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "topic": {"type": "object", "additionalProperties": False, "properties": _TOPIC_LAYOUT},
        "topics": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "rate"],
            "properties": {"name": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,40}$"}, **_TOPIC_LAYOUT,
                           "producer": _PRODUCER, "record": _RECORD, "keys": _KEYS, "rate": _RATE, "consumers": _CONSUMERS},
        }},
        "producer": _PRODUCER,
        "record": _RECORD,
        "keys": _KEYS,
        "rate": _RATE,
        "consumers": _CONSUMERS,
        "duration_s": _POSITIVE,
        "window_s": _POSITIVE,
        "join_timeout_s": _POSITIVE,
        "warm_up_s": {"type": "number", "minimum": 0},
        "warm_up_max_s": {"type": "number", "minimum": 0},
        "slo": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "produce_latency": _LATENCY_SLO,
                "end_to_end_latency": _LATENCY_SLO,
                "consumer_lag": {"type": "object", "additionalProperties": False, "required": ["max_records"],
                                 "properties": {"max_records": _COUNT}},
                "no_acked_loss": {"type": "boolean"},
            },
        },
        "headroom": {
            "type": "object", "additionalProperties": False,
            "properties": {"enabled": {"type": "boolean"}, "trial_s": _POSITIVE, "max_trials": _COUNT,
                           "max_factor": {"type": "number", "exclusiveMinimum": 1},
                           "resolution": {"type": "number", "exclusiveMinimum": 1}, "repeats": _COUNT},
        },
        # Replaced by faults; kept here only so that a file naming it gets the pointer to faults, not "unexpected".
        "broker_failure": {"type": "object"},
        "faults": {"type": "array", "minItems": 1, "items": _FAULT},
        "catch_up": {
            "type": "object", "additionalProperties": False, "required": ["timeout_s"],
            "properties": {"enabled": {"type": "boolean"}, "backlog_s": _POSITIVE, "backlog_records": _COUNT,
                           "timeout_s": _POSITIVE},
        },
    },
}


@dataclass(frozen=True)
class LatencySlo:
    percentile: float
    max_ms: float

    @property
    def stat(self) -> str:
        """The column of kperf's latency summary this percentile is (``p99``)."""
        return LATENCY_PERCENTILES[self.percentile]


@dataclass(frozen=True)
class Slos:
    produce_latency: LatencySlo | None = None  # from the intended send time
    end_to_end_latency: LatencySlo | None = None  # intended send time to consumption, worst group
    consumer_lag_records: int | None = None  # worst group, over the windows after it began reading
    no_acked_loss: bool = True  # the default when the workload has consumer groups (they read records back)


@dataclass(frozen=True)
class Group:
    name: str
    consumers: int = 1
    settings: Mapping[str, Any] = field(default_factory=dict)
    share: Sharing | None = None  # a share group's members (``share: true``), not a consumer group's
    processed: Transactions | None = None  # read-process-write: a processor writing every record it reads to a second
    # topic in transactions of this rule, which a read_committed consumer reads (kperf.drivers.read_process_write)

    @property
    def processes(self) -> int:
        """Its load processes: its consumers, or a processor and the consumer reading what it writes."""
        return 2 if self.processed is not None else self.consumers


@dataclass(frozen=True)
class Headroom:
    enabled: bool = True
    trial_s: float = 10.0
    max_trials: int = 12
    max_factor: float = 16.0  # the search looks no further than target x this
    resolution: float = 1.25  # it stops once the limit's interval is this narrow (high / low)
    repeats: int = 3  # trials at most per decision


@dataclass(frozen=True)
class CatchUp:
    timeout_s: float
    enabled: bool = True
    backlog_s: float | None = None  # of target traffic ...
    backlog_records: int | None = None  # ... or this many records, sent as fast as the producers can


@dataclass(frozen=True)
class FaultPhase:
    """A run of ``duration_s`` at the target rate with ``fault`` in it (kperf.drivers.faults): the SLOs judged while
    a broker is down, paused, or whatever the user's commands do."""

    fault: Fault
    duration_s: float
    enabled: bool = True


def mean_size(sizes: tuple[tuple[int, float], ...], record_size: int) -> float:
    """The mean record size of a size distribution ((bytes, weight) pairs), or ``record_size`` without one."""
    return sum(b * w for b, w in sizes) if sizes else float(record_size)


@dataclass(frozen=True)
class Stream:
    """One topic of a workload: its layout, its producers and records, its rate, and the groups reading it."""

    name: str  # the topics item's name; "" for a file's single top-level topic
    rate: float  # records/s over its producers, at the peak
    record_size: int  # the largest record
    sizes: tuple[tuple[int, float], ...] = ()  # (bytes, weight) of a size distribution; () for one size
    payload: str = "random"
    keys: int = 0  # 0: no key
    zipf_s: float = 0.0  # key skew; 0: uniform
    partitions: int = 1
    replication_factor: int = 1
    min_insync_replicas: int | None = None
    producer_config: Mapping[str, Any] = field(default_factory=dict)
    producers: int = 1
    groups: tuple[Group, ...] = ()
    transactions: Transactions | None = None  # its producers are transactional
    peak_factor: float = 1.0  # the peak (``rate``) over the day's mean: ``rate.per_day``'s; 1 for a rate given as the peak
    retention_hours: float | None = None  # how long its records are kept (None: not said)

    @property
    def mean_record_size(self) -> float:
        return mean_size(self.sizes, self.record_size)

    @property
    def daily_bytes(self) -> float:
        """The bytes its producers send in a day (at the day's mean rate; the peak all day when no mean is given)."""
        return self.rate / self.peak_factor * SECONDS_PER_DAY * self.mean_record_size

    @property
    def topic_config(self) -> dict[str, str]:
        return {} if self.min_insync_replicas is None else {"min.insync.replicas": str(self.min_insync_replicas)}

    @property
    def processes(self) -> int:
        """Its load processes at once: producers and every group's consumers."""
        return self.producers + sum(g.processes for g in self.groups)

    def describe(self) -> str:
        size = f"{self.mean_record_size:,.0f} B mean" if self.sizes else f"{self.record_size:,} B"
        groups = ", ".join(f"{g.name} x{g.consumers}" for g in self.groups) or "no consumers"
        return (f"{self.rate:,.0f} records/s of {size} ({self.rate * self.mean_record_size / MIB:,.1f} MiB/s) to "
                f"{self.partitions} partition(s), rf {self.replication_factor}; consumer groups: {groups}")


@dataclass(frozen=True)
class CapacityWorkload:
    """A validated workload file: what kperf sends and reads (its streams) and what it promises (the SLOs)."""

    name: str
    streams: tuple[Stream, ...]
    duration_s: float
    slos: Slos = field(default_factory=Slos)
    headroom: Headroom = field(default_factory=Headroom)
    catch_up: CatchUp | None = None
    faults: tuple[FaultPhase, ...] = ()
    window_s: float = 1.0
    join_timeout_s: float = JOIN_TIMEOUT_S  # each trial's consumer groups must form within this
    warm_up_s: float = WARM_UP_S  # each round of unrecorded load before the first phase (0: none)
    warm_up_max_s: float = WARM_UP_MAX_S  # rounds go on until the brokers are warm, at most this long in all
    description: str = ""

    @property
    def rate(self) -> float:
        """Records/s over every stream, at the peak: the rate the search scales (each stream keeps its share)."""
        return sum(s.rate for s in self.streams)

    @property
    def mean_record_size(self) -> float:
        return sum(s.rate * s.mean_record_size for s in self.streams) / self.rate

    @property
    def processes(self) -> int:
        """The load processes a trial runs at once."""
        return sum(s.processes for s in self.streams)

    def share(self, stream: Stream) -> float:
        return stream.rate / self.rate

    def describe(self) -> str:
        """One line: what the workload is."""
        if len(self.streams) == 1:
            return self.streams[0].describe()
        return (f"{self.rate:,.0f} records/s ({self.rate * self.mean_record_size / MIB:,.1f} MiB/s) to "
                f"{len(self.streams)} topics: " + "; ".join(f"{s.name}: {s.describe()}" for s in self.streams))


def load(path: Path, live_brokers: int | None = None) -> CapacityWorkload:
    """Read and check ``path`` (against a cluster of ``live_brokers``, when given); a one-line error naming the
    file, line and field for anything wrong."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise KperfError(f"cannot read workload file {path}: {exc.strerror}") from None
    return parse(text, str(path), live_brokers)


def parse(text: str, source: str = "<workload>", live_brokers: int | None = None) -> CapacityWorkload:
    """The workload in ``text`` (YAML), checked; ``source`` names it in errors."""
    import jsonschema  # loaded when a workload is read, not for every kperf command

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise KperfError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    lines = _lines(node) if node is not None else {}

    def fail(path: FieldPath, message: str) -> KperfError:
        found = path
        while found and found not in lines:
            found = found[:-1]
        line = lines.get(found, 1)
        name = ".".join(map(str, path)) or "the file"
        return KperfError(f"{source}:{line}: {name}: {message}")

    if not isinstance(data, dict):
        raise fail((), "a workload file is a mapping of fields (see docs/workload.md)")
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data))
    if error is not None:
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            allowed = sorted(error.schema.get("properties", {}))
            unknown = sorted(set(error.instance) - set(allowed))
            raise fail((*path, unknown[0]), f"unknown field{closest(unknown[0], allowed)}; expected one of: {', '.join(allowed)}")
        if error.validator == "required":
            raise fail(path, f"{error.message} (see docs/workload.md)")
        raise fail(path, _plain(error))
    base = Path(source).parent if Path(source).is_file() else None  # a sample file is found beside the workload's
    return _build(data, fail, live_brokers, base)


def _plain(error: Any) -> str:
    """jsonschema's message for a value, in the terms of the file."""
    value, check = error.validator_value, error.validator
    checks = {"type": f"must be of type {value}", "exclusiveMinimum": f"must be above {value}",
              "exclusiveMaximum": f"must be below {value}", "minimum": f"must be at least {value}",
              "minItems": "must not be empty", "minLength": "must not be empty",
              "pattern": "must be a topic name: letters, digits, '.', '_' or '-', 40 at most"}  # the schema's one pattern
    if check == "enum":
        choices = list(dict.fromkeys(map(str, value)))  # acks: "1" and 1 are one choice to a reader
        return f"{error.instance!r} must be one of {', '.join(choices)}{closest(str(error.instance), choices)}"
    return f"{error.instance!r} {checks.get(check, error.message)}"


def _lines(node: yaml.Node, path: FieldPath = ()) -> dict[FieldPath, int]:
    """Each field's path -> the (1-based) line it is on."""
    found = {path: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            found.update(_lines(value, (*path, key.value)))
            found[(*path, key.value)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            found.update(_lines(item, (*path, i)))
    return found


def from_percentiles(points: list[tuple[float, int]], fail: Callable[[str], KperfError]) -> tuple[tuple[int, float], ...]:
    """A size distribution from (percentile, bytes) points: the records below the first percentile at its size,
    those between two at the middle of their sizes, those above the last at its size (give 100: the largest)."""
    points = sorted(points)
    percentiles, sizes = [p for p, _ in points], [b for _, b in points]
    if len(set(percentiles)) < len(percentiles):
        raise fail("a percentile is given twice")
    if sizes != sorted(sizes):
        raise fail("sizes must not fall as the percentile rises")
    masses: list[tuple[float, float]] = [(sizes[0], percentiles[0])]
    masses += [((low + high) / 2, p - q) for (q, low), (p, high) in zip(points, points[1:])]
    masses.append((sizes[-1], 100 - percentiles[-1]))
    weights: dict[int, float] = {}
    for size, mass in masses:
        if mass > 0:
            weights[round(size)] = weights.get(round(size), 0.0) + mass / 100
    return tuple(sorted(weights.items()))


def from_sample(path: Path, fail: Callable[[str], KperfError]) -> tuple[tuple[int, float], ...]:
    """A size distribution from a file of record sizes (bytes, one a line, e.g. from your topic's records)."""
    try:
        lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        if not line.isdigit() or int(line) < 1:
            raise fail(f"{path}:{number}: {line!r} is not a record size in bytes (a whole number, at least 1)")
    if not lines:
        raise fail(f"{path} holds no record size")
    return tuple((size, count / len(lines)) for size, count in sorted(Counter(map(int, lines)).items()))


def _sizes(record: Mapping[str, Any], at: FieldPath, fail: Failure, base: Path | None) -> tuple[int, tuple[tuple[int, float], ...]]:
    """A record's largest size and its distribution (() for one size), from whichever form ``record`` gives."""
    given = [k for k in SIZE_FORMS if k in record]
    if len(given) != 1:
        raise fail(at, f"give exactly one of {', '.join(SIZE_FORMS)}")
    sizes: tuple[tuple[int, float], ...] = ()
    if "sizes" in record:
        sizes = tuple((int(s["bytes"]), float(s["weight"])) for s in record["sizes"])
        total = sum(w for _, w in sizes)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            raise fail((*at, "sizes"), f"the weights sum to {total:g}, not 1")
    elif "percentiles" in record:
        sizes = from_percentiles([(float(p["percentile"]), int(p["bytes"])) for p in record["percentiles"]],
                                 partial(fail, (*at, "percentiles")))
    elif "sample_file" in record:
        sizes = from_sample(base / record["sample_file"] if base is not None else Path(record["sample_file"]),
                            partial(fail, (*at, "sample_file")))
    return (max(b for b, _ in sizes) if sizes else int(record["size"])), sizes


def _rate(given: Mapping[str, Any], at: FieldPath, mean_size: float, fail: Failure) -> float:
    """Records/s at the peak, from whichever way ``given`` states it."""
    ways = [k for k in ("records_per_s", "mib_per_s", "per_day") if k in given]
    if len(ways) != 1:
        raise fail(at, "give exactly one of records_per_s, mib_per_s or per_day")
    if "peak_factor" in given and ways[0] != "per_day":
        raise fail((*at, "peak_factor"), "applies to per_day only (the other rates are the peak already)")
    way = ways[0]
    rate = {"records_per_s": lambda v: v, "mib_per_s": lambda v: v * MIB / mean_size,
            "per_day": lambda v: v / SECONDS_PER_DAY * given.get("peak_factor", 1.0)}[way](float(given[way]))
    if not math.isfinite(rate):
        raise fail(at, "is not a finite number")
    return rate


def _producer_config(producer: Mapping[str, Any], at: FieldPath, fail: Failure) -> dict[str, Any]:
    """The producer fields as librdkafka settings (``settings`` as given, each named field under its own name)."""
    config = {k: str(v).lower() if isinstance(v, bool) else v for k, v in producer.get("settings", {}).items()}
    for key, name in (("acks", "acks"), ("batch_size", "batch.size"), ("linger_ms", "linger.ms"),
                      ("compression", "compression.type"), ("idempotence", "enable.idempotence")):
        if key in producer:
            if name in config:
                raise fail((*at, "settings", name), f"given twice: also as producer.{key}")
            value = producer[key]
            config[name] = str(value).lower() if isinstance(value, bool) else str(value)
    _client_settings(config, "producer", at, fail)
    return config


def _client_settings(config: Mapping[str, Any], role: str, at: FieldPath, fail: Failure) -> None:
    """Refuse settings librdkafka rejects here, where the file, line and field can be named (no connection: the
    client is only built)."""
    if not config:
        return
    from kperf.kafka import clients  # confluent-kafka: loaded when a file has settings to check

    try:
        clients.check_config(config, role)
    except KperfError as exc:
        raise fail(at, str(exc)) from None


def _stream(data: Mapping[str, Any], item: Mapping[str, Any] | None, at: FieldPath, fail: Failure,
            live_brokers: int | None, base: Path | None) -> Stream:
    """One stream: a ``topics`` item (at ``at``) over the file's own fields, or (``item`` None) the file's top level."""

    def field_of(name: str) -> tuple[Any, FieldPath]:
        """A stream field and where it was given: the item's own, else the file's."""
        if item is not None and name in item:
            return item[name], (*at, name)
        return data.get(name), (name,)

    record, record_at = field_of("record")
    if record is None:
        raise fail(at if item is not None else (), "'record' is a required property (see docs/workload.md)")
    rate_given, rate_at = field_of("rate")
    if rate_given is None:
        raise fail((), "'rate' is a required property (see docs/workload.md)")
    record_size, sizes = _sizes(record, record_at, fail, base)
    rate = _rate(rate_given, rate_at, mean_size(sizes, record_size), fail)
    layout = item if item is not None else data.get("topic", {})
    partitions, rf, isr = _layout(layout, at if item is not None else ("topic",), live_brokers, fail)
    # The item's producer fields over the file's (its settings over the file's settings).
    own, top = (item or {}).get("producer", {}), data.get("producer", {})
    producer = {**top, **own, "settings": {**top.get("settings", {}), **own.get("settings", {})}}
    producer_at = (*at, "producer") if "producer" in (item or {}) else ("producer",)
    config = _producer_config(producer, producer_at, fail)
    keys, _ = field_of("keys")
    return Stream(
        name=str(item["name"]) if item is not None else "", rate=rate, record_size=record_size, sizes=sizes,
        payload=record.get("payload", "random"), keys=int((keys or {}).get("count", 0)),
        zipf_s=float((keys or {}).get("zipf_s", 0.0)), partitions=partitions, replication_factor=rf,
        min_insync_replicas=isr, producer_config=config, producers=int(producer.get("processes", 1)),
        groups=_groups(*field_of("consumers"), fail), transactions=_transactions(producer, config, producer_at, fail),
        peak_factor=float(rate_given.get("peak_factor", 1.0)), retention_hours=layout.get("retention_hours"),
    )


def _transactions(producer: Mapping[str, Any], config: Mapping[str, Any], at: FieldPath,
                  fail: Failure) -> Transactions | None:
    """A producer's ``transactions``: records or milliseconds per transaction, none aborted (a workload's transactions
    all commit), with the settings a transactional producer allows."""
    given = producer.get("transactions")
    if given is None:
        return None
    rule = Transactions(int(given.get("records", 0)), float(given.get("ms", 0.0)))
    if config.get("transactional.id") is not None or str(config.get("enable.idempotence", "true")).lower() == "false":
        raise fail((*at, "transactions"), "a transactional producer is idempotent and kperf names its transactional.id: "
                   "leave idempotence: false and transactional.id out")
    try:
        rule.check()
    except KperfError as exc:
        raise fail((*at, "transactions"), str(exc)) from None
    return rule


def _layout(layout: Mapping[str, Any], at: FieldPath, live_brokers: int | None, fail: Failure) -> tuple[int, int, int | None]:
    """A topic's partitions, replication factor and min.insync.replicas, the last two within what can be written."""
    partitions, rf = int(layout.get("partitions", 1)), int(layout.get("replication_factor", 1))
    if live_brokers is not None and rf > live_brokers:
        raise fail((*at, "replication_factor"), f"{rf} is above the cluster's {live_brokers} live broker(s)")
    isr = layout.get("min_insync_replicas")
    if isr is not None and isr > rf:
        raise fail((*at, "min_insync_replicas"), f"{isr} is above the replication factor {rf}: no write could succeed")
    return partitions, rf, isr


def _groups(consumers: list[Mapping[str, Any]] | None, at: FieldPath, fail: Failure) -> tuple[Group, ...]:
    """A stream's consumer groups, each named once, with settings librdkafka accepts; a share group's answers and
    group settings as kperf can set them."""
    groups = tuple(Group(g["group"], int(g.get("consumers", 1)), _group_settings(g, (*at, i), fail),
                         _sharing(g, (*at, i), fail), _processed(g, (*at, i), fail))
                   for i, g in enumerate(consumers or []))
    for i, group in enumerate(groups):
        _client_settings(group.settings, "consumer" if group.share is None else "share", (*at, i, "settings"), fail)
    names = [g.name for g in groups]
    if len(set(names)) != len(names):
        raise fail(at, "two groups have the same name")
    return groups


def _group_settings(group: Mapping[str, Any], at: FieldPath, fail: Failure) -> dict[str, Any]:
    """A group's ``settings`` with its named fields (``protocol``, ``isolation``) as the settings they are."""
    settings = dict(group.get("settings", {}))
    for key, name in GROUP_FIELDS.items():
        if key not in group:
            continue
        if group.get("share"):
            raise fail((*at, key), "is a consumer group's: a share group has no such setting")
        if name in settings:
            raise fail((*at, "settings", name), f"given twice: also as {key}")
        settings[name] = group[key]
    return settings


def _processed(group: Mapping[str, Any], at: FieldPath, fail: Failure) -> Transactions | None:
    """A group's ``process``: the transactions of its processor (one member: a consumer group's, reading
    read_committed), checked."""
    given = group.get("process")
    if given is None:
        return None
    if group.get("share"):
        raise fail((*at, "process"), "is a consumer group's: a share group cannot commit offsets in a transaction")
    if int(group.get("consumers", 1)) != 1:
        raise fail((*at, "consumers"), "a processing group is one processor: leave consumers out (or 1)")
    rule = Transactions(int(given.get("records", 0)), float(given.get("ms", 0.0)))
    try:
        rule.check()
    except KperfError as exc:
        raise fail((*at, "process"), str(exc)) from None
    return rule


def _sharing(group: Mapping[str, Any], at: FieldPath, fail: Failure) -> Sharing | None:
    """A group's ``share: true`` and what goes with it, checked; its share fields without it are refused."""
    given = [k for k in _SHARE if k != "share" and k in group]
    if not group.get("share"):
        if given:
            raise fail((*at, given[0]), "is a share group's: add share: true")
        return None
    sharing = Sharing(group.get("ack", "implicit"), float(group.get("release", 0)), float(group.get("reject", 0)),
                      dict(group.get("group_settings", {})))
    from kperf.kafka import share_groups  # its checks: loaded when a file has a share group

    try:
        sharing.check()
        share_groups.check(sharing.settings)
    except KperfError as exc:
        raise fail(at, str(exc)) from None
    return sharing


def _streams(data: Mapping[str, Any], fail: Failure, live_brokers: int | None, base: Path | None) -> tuple[Stream, ...]:
    """The file's streams: one per ``topics`` item, else its top-level topic alone."""
    if "topics" not in data:
        return (_stream(data, None, (), fail, live_brokers, base),)
    for clash in ("topic", "rate"):
        if clash in data:
            raise fail((clash,), "with topics, each topic gives its own " + ("layout" if clash == "topic" else "rate"))
    streams = tuple(_stream(data, item, ("topics", i), fail, live_brokers, base) for i, item in enumerate(data["topics"]))
    names = [s.name for s in streams]
    if len(set(names)) != len(names):
        raise fail(("topics",), "two topics have the same name")
    return streams


def _build(data: dict[str, Any], fail: Failure, live_brokers: int | None, base: Path | None) -> CapacityWorkload:
    """The checked dict as a workload, after the checks a schema cannot make."""
    streams = _streams(data, fail, live_brokers, base)
    grouped = any(s.groups for s in streams)
    slos = _slos(data.get("slo", {}), grouped, fail)
    catch_up = _catch_up(data, grouped, fail)
    faults = _faults(data, streams, fail)
    window_s = float(data.get("window_s", 1.0))
    need, why = validity.min_span_s(window_s), f"a rate needs (1 s, or two windows of {window_s:g} s)"
    if data["duration_s"] < need:
        raise fail(("duration_s",), f"{data['duration_s']:g} s is shorter than the {need:g} s {why}")
    headroom = Headroom(**data.get("headroom", {}))
    if headroom.trial_s < need:
        raise fail(("headroom", "trial_s"), f"{headroom.trial_s:g} s is shorter than the {need:g} s {why}")
    join_timeout_s = float(data.get("join_timeout_s", JOIN_TIMEOUT_S))
    if not math.isfinite(join_timeout_s):
        raise fail(("join_timeout_s",), "must be a finite number of seconds")
    for key in ("warm_up_s", "warm_up_max_s"):
        if not math.isfinite(float(data.get(key, 0))):
            raise fail((key,), "must be a finite number of seconds")
    return CapacityWorkload(
        name=str(data.get("name", "workload")), streams=streams, duration_s=float(data["duration_s"]),
        slos=slos, headroom=headroom, catch_up=catch_up, faults=faults, window_s=window_s,
        join_timeout_s=join_timeout_s, warm_up_s=float(data.get("warm_up_s", WARM_UP_S)),
        warm_up_max_s=float(data.get("warm_up_max_s", WARM_UP_MAX_S)),
        description=str(data.get("description", "")),
    )


def _slos(slo: Mapping[str, Any], grouped: bool, fail: Failure) -> Slos:
    """The SLOs: latencies at a percentile kperf's histograms summarize; those that read records need a group."""
    latency = {}
    for key in ("produce_latency", "end_to_end_latency"):
        if key in slo:
            percentile = float(slo[key]["percentile"])
            if percentile not in LATENCY_PERCENTILES:
                raise fail(("slo", key, "percentile"), f"{percentile:g}: kperf's latency histograms summarize "
                           f"{', '.join(f'{p:g}' for p in LATENCY_PERCENTILES)}; choose one of them")
            latency[key] = LatencySlo(percentile, float(slo[key]["max_ms"]))
    for key in ("end_to_end_latency", "consumer_lag", "no_acked_loss"):
        if not grouped and slo.get(key):
            raise fail(("slo", key), "needs at least one consumer group (consumers) to read the records")
    return Slos(latency.get("produce_latency"), latency.get("end_to_end_latency"),
                slo.get("consumer_lag", {}).get("max_records"), bool(slo.get("no_acked_loss", grouped)))


def _catch_up(data: Mapping[str, Any], grouped: bool, fail: Failure) -> CatchUp | None:
    """The catch-up phase, if the file asks for one: a backlog of one kind, and groups to catch up with it."""
    if "catch_up" not in data:
        return None
    given = data["catch_up"]
    if ("backlog_s" in given) == ("backlog_records" in given):
        raise fail(("catch_up",), "give either backlog_s or backlog_records, not both or neither")
    if not grouped:
        raise fail(("catch_up",), "a catch-up needs at least one consumer group (consumers)")
    return CatchUp(float(given["timeout_s"]), bool(given.get("enabled", True)), given.get("backlog_s"),
                   given.get("backlog_records"))


def _faults(data: Mapping[str, Any], streams: tuple[Stream, ...], fail: Failure) -> tuple[FaultPhase, ...]:
    """The fault phases the file asks for, each inside its run, on a first topic with a replica."""
    if "broker_failure" in data:
        raise fail(("broker_failure",), "is now a list of faults: faults: [{kind: kill, at_s: KILL_AT, for_s: "
                   "RESTART_AT - KILL_AT, duration_s: DURATION}] (docs/workload.md)")
    phases = []
    for i, item in enumerate(data.get("faults", ())):
        start, stop = (tuple(shlex.split(item[key]) if isinstance(item[key], str) else item[key]) if key in item else ()
                       for key in ("start", "stop"))
        fault = Fault(float(item["at_s"]), float(item["at_s"] + item["for_s"]), item["kind"], start, stop,
                      float(item.get("latency_ms", 0.0)), float(item.get("bandwidth_kib_s", 0.0)),
                      float(item.get("loss_pct", 0.0)))
        try:
            fault.check(float(item["duration_s"]))
        except KperfError as exc:
            raise fail(("faults", i), str(exc)) from None
        if streams[0].replication_factor < 2 and fault.kind in ("kill", "pause"):
            where = "topics.0.replication_factor (the first topic's, which it runs on)" if "topics" in data else \
                "topic.replication_factor"
            raise fail(("faults", i), f"needs {where} 2 or more: a killed or paused broker needs a replica")
        phases.append(FaultPhase(fault, float(item["duration_s"]), bool(item.get("enabled", True))))
    return tuple(phases)



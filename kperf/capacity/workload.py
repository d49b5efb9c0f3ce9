"""The workload file: a user's traffic and its SLOs, in YAML, checked before any load (docs/workload.md).

Its shape is a JSON Schema (:data:`SCHEMA`), checked by jsonschema; what a
schema cannot say (exactly one way of giving the rate, weights summing to 1,
replication within the live brokers) is checked after it. Every error is one
line naming the file, the line PyYAML read the field from, and the field.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from kperf.errors import KperfError

SECONDS_PER_DAY = 86_400
MIB = 2**20
LATENCY_PERCENTILES = {50.0: "p50", 95.0: "p95", 99.0: "p99", 99.9: "p999"}  # what kperf's histograms summarize
WEIGHT_TOLERANCE = 1e-6
SIZE_FORMS = ("size", "sizes", "percentiles", "sample_file")  # a record's size: one, weights, percentiles, a sample
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

Failure = Callable[[tuple[str | int, ...], str], KperfError]  # a field's path and what is wrong -> the error to raise

_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}
_SETTINGS = {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}}
_LATENCY_SLO = {
    "type": "object", "additionalProperties": False, "required": ["percentile", "max_ms"],
    "properties": {"percentile": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100}, "max_ms": _POSITIVE},
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rate", "duration_s", "record"],
    "properties": {
        "name": {"type": "string"},
        "description": {"type": "string"},
        "topic": {
            "type": "object", "additionalProperties": False,
            "properties": {"partitions": _COUNT, "replication_factor": _COUNT, "min_insync_replicas": _COUNT},
        },
        "producer": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "acks": {"enum": ["0", "1", "all", 0, 1, -1]},
                "batch_size": _COUNT,
                "linger_ms": {"type": "number", "minimum": 0},
                "compression": {"enum": CODECS},
                "idempotence": {"type": "boolean"},
                "processes": _COUNT,
                "settings": _SETTINGS,
            },
        },
        "record": {
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
        },
        "keys": {
            "type": "object", "additionalProperties": False, "required": ["count"],
            "properties": {"count": _COUNT, "zipf_s": {"type": "number", "minimum": 0}},
        },
        "rate": {
            "type": "object", "additionalProperties": False,
            "properties": {"records_per_s": _POSITIVE, "mib_per_s": _POSITIVE, "per_day": _POSITIVE,
                           "peak_factor": {"type": "number", "minimum": 1}},
        },
        "consumers": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["group"],
            "properties": {"group": {"type": "string", "minLength": 1}, "consumers": _COUNT, "settings": _SETTINGS},
        }},
        "duration_s": _POSITIVE,
        "window_s": _POSITIVE,
        "warm_up_s": {"type": "number", "minimum": 0},
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
        "broker_failure": {
            "type": "object", "additionalProperties": False, "required": ["kill_at_s", "restart_at_s", "duration_s"],
            "properties": {"enabled": {"type": "boolean"}, "kill_at_s": _POSITIVE, "restart_at_s": _POSITIVE,
                           "duration_s": _POSITIVE},
        },
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
class BrokerFailure:
    """The leader of partition 0 killed (SIGKILL) at ``kill_at_s`` and restarted at ``restart_at_s`` of a
    ``duration_s`` run at the target rate (the fault experiment's driver)."""

    kill_at_s: float
    restart_at_s: float
    duration_s: float
    enabled: bool = True


@dataclass(frozen=True)
class CapacityWorkload:
    """A validated workload file: what kperf sends, reads and promises (the SLOs)."""

    name: str
    rate: float  # records/s over all producers, at the peak
    duration_s: float
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
    slos: Slos = field(default_factory=Slos)
    headroom: Headroom = field(default_factory=Headroom)
    catch_up: CatchUp | None = None
    broker_failure: BrokerFailure | None = None
    window_s: float = 1.0
    warm_up_s: float = 10.0  # unrecorded load before the first phase
    description: str = ""

    @property
    def mean_record_size(self) -> float:
        return sum(b * w for b, w in self.sizes) if self.sizes else float(self.record_size)

    @property
    def topic_config(self) -> dict[str, str]:
        return {} if self.min_insync_replicas is None else {"min.insync.replicas": str(self.min_insync_replicas)}

    def describe(self) -> str:
        """One line: what the workload is."""
        size = f"{self.mean_record_size:,.0f} B mean" if self.sizes else f"{self.record_size:,} B"
        groups = ", ".join(f"{g.name} x{g.consumers}" for g in self.groups) or "no consumers"
        return (f"{self.rate:,.0f} records/s of {size} ({self.rate * self.mean_record_size / MIB:,.1f} MiB/s) to "
                f"{self.partitions} partition(s), rf {self.replication_factor}; consumer groups: {groups}")


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

    def fail(path: tuple[str | int, ...], message: str) -> KperfError:
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
            raise fail((*path, unknown[0]), f"unknown field (expected one of: {', '.join(allowed)})")
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
              "minItems": "must not be empty", "minLength": "must not be empty"}
    if check == "enum":
        return f"{error.instance!r} must be one of {', '.join(map(str, value))}"
    return f"{error.instance!r} {checks.get(check, error.message)}"


def _lines(node: yaml.Node, path: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], int]:
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


def _build(data: dict[str, Any], fail: Failure, live_brokers: int | None, base: Path | None) -> CapacityWorkload:
    """The checked dict as a workload, after the checks a schema cannot make."""
    record = data["record"]
    given = [k for k in SIZE_FORMS if k in record]
    if len(given) != 1:
        raise fail(("record",), f"give exactly one of {', '.join(SIZE_FORMS)}")
    sizes: tuple[tuple[int, float], ...] = ()
    if "sizes" in record:
        sizes = tuple((int(s["bytes"]), float(s["weight"])) for s in record["sizes"])
        total = sum(w for _, w in sizes)
        if abs(total - 1) > WEIGHT_TOLERANCE:
            raise fail(("record", "sizes"), f"the weights sum to {total:g}, not 1")
    elif "percentiles" in record:
        sizes = from_percentiles([(float(p["percentile"]), int(p["bytes"])) for p in record["percentiles"]],
                                 partial(fail, ("record", "percentiles")))
    elif "sample_file" in record:
        sizes = from_sample(base / record["sample_file"] if base is not None else Path(record["sample_file"]),
                            partial(fail, ("record", "sample_file")))
    record_size = max(b for b, _ in sizes) if sizes else int(record["size"])
    mean_size = sum(b * w for b, w in sizes) if sizes else record_size

    rate_given = data["rate"]
    ways = [k for k in ("records_per_s", "mib_per_s", "per_day") if k in rate_given]
    if len(ways) != 1:
        raise fail(("rate",), "give exactly one of records_per_s, mib_per_s or per_day")
    if "peak_factor" in rate_given and ways[0] != "per_day":
        raise fail(("rate", "peak_factor"), "applies to per_day only (the other rates are the peak already)")
    way = ways[0]
    rate = {"records_per_s": lambda v: v, "mib_per_s": lambda v: v * MIB / mean_size,
            "per_day": lambda v: v / SECONDS_PER_DAY * rate_given.get("peak_factor", 1.0)}[way](float(rate_given[way]))

    topic = data.get("topic", {})
    partitions, rf = int(topic.get("partitions", 1)), int(topic.get("replication_factor", 1))
    if live_brokers is not None and rf > live_brokers:
        raise fail(("topic", "replication_factor"), f"{rf} is above the cluster's {live_brokers} live broker(s)")
    isr = topic.get("min_insync_replicas")
    if isr is not None and isr > rf:
        raise fail(("topic", "min_insync_replicas"), f"{isr} is above the replication factor {rf}: no write could succeed")

    producer = data.get("producer", {})
    config = {k: str(v).lower() if isinstance(v, bool) else v for k, v in producer.get("settings", {}).items()}
    for key, name in (("acks", "acks"), ("batch_size", "batch.size"), ("linger_ms", "linger.ms"),
                      ("compression", "compression.type"), ("idempotence", "enable.idempotence")):
        if key in producer:
            if name in config:
                raise fail(("producer", "settings", name), f"given twice: also as producer.{key}")
            value = producer[key]
            config[name] = str(value).lower() if isinstance(value, bool) else str(value)

    slo = data.get("slo", {})
    latency = {}
    for key in ("produce_latency", "end_to_end_latency"):
        if key in slo:
            percentile = float(slo[key]["percentile"])
            if percentile not in LATENCY_PERCENTILES:
                raise fail(("slo", key, "percentile"), f"{percentile:g}: kperf's latency histograms summarize "
                           f"{', '.join(f'{p:g}' for p in LATENCY_PERCENTILES)}; choose one of them")
            latency[key] = LatencySlo(percentile, float(slo[key]["max_ms"]))
    groups = tuple(Group(g["group"], int(g.get("consumers", 1)), dict(g.get("settings", {})))
                   for g in data.get("consumers", []))
    names = [g.name for g in groups]
    if len(set(names)) != len(names):
        raise fail(("consumers",), "two groups have the same name")
    for key in ("end_to_end_latency", "consumer_lag", "no_acked_loss"):
        if not groups and slo.get(key):
            raise fail(("slo", key), "needs at least one consumer group (consumers) to read the records")

    catch_up = None
    if "catch_up" in data:
        given = data["catch_up"]
        if ("backlog_s" in given) == ("backlog_records" in given):
            raise fail(("catch_up",), "give either backlog_s or backlog_records, not both or neither")
        if not groups:
            raise fail(("catch_up",), "a catch-up needs at least one consumer group (consumers)")
        catch_up = CatchUp(float(given["timeout_s"]), bool(given.get("enabled", True)), given.get("backlog_s"),
                           given.get("backlog_records"))
    failure = None
    if "broker_failure" in data:
        failure = BrokerFailure(**data["broker_failure"])
        if not failure.kill_at_s < failure.restart_at_s < failure.duration_s:
            raise fail(("broker_failure",), f"kill_at_s < restart_at_s < duration_s must hold, got {failure.kill_at_s:g}, "
                       f"{failure.restart_at_s:g} and {failure.duration_s:g}")
        if rf < 2:
            raise fail(("broker_failure",), "needs topic.replication_factor 2 or more: a killed broker needs a replica")
    window_s = float(data.get("window_s", 1.0))
    if window_s > data["duration_s"]:
        raise fail(("window_s",), f"{window_s:g} s is longer than duration_s")
    headroom = Headroom(**data.get("headroom", {}))
    if headroom.trial_s < window_s:
        raise fail(("headroom", "trial_s"), f"{headroom.trial_s:g} s is shorter than a window ({window_s:g} s)")
    keys = data.get("keys", {})
    if not math.isfinite(rate):
        raise fail(("rate",), "is not a finite number")
    return CapacityWorkload(
        name=str(data.get("name", "workload")), rate=rate, duration_s=float(data["duration_s"]), record_size=record_size,
        sizes=sizes, payload=record.get("payload", "random"), keys=int(keys.get("count", 0)),
        zipf_s=float(keys.get("zipf_s", 0.0)), partitions=partitions, replication_factor=rf, min_insync_replicas=isr,
        producer_config=config, producers=int(producer.get("processes", 1)), groups=groups,
        slos=Slos(latency.get("produce_latency"), latency.get("end_to_end_latency"),
                  slo.get("consumer_lag", {}).get("max_records"), bool(slo.get("no_acked_loss", bool(groups)))),
        headroom=headroom, catch_up=catch_up, broker_failure=failure, window_s=window_s,
        warm_up_s=float(data.get("warm_up_s", 10.0)), description=str(data.get("description", "")),
    )


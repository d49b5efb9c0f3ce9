"""Scales of the study and every experiment's parameters, checked by name, type and range.

* ``smoke``: seconds per experiment; CI and nbval run it;
* ``quick``: the default; the whole study in under 20 minutes on a 2-core
  machine with a local 3-broker cluster;
* ``seed``: the grids and record counts of the published studies (S1-S5 in the
  README's "Published studies"), for a real cluster.

A notebook asks for its experiment's settings under a profile, overriding any
of them; ``KPERF_PROFILE`` sets the profile when the notebook leaves it None.
Overrides come from keyword arguments, ``--set`` on the command line or a YAML
file; all go through :func:`check`, so a wrong name, type or value is refused
before any load starts, naming the parameter.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kperf.errors import KperfError

DEFAULT_PROFILE = "quick"
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
ACKS = ("0", "1", "all")
CLIENTS = ("python", "java")
PAYLOADS = ("random", "text")


@dataclass(frozen=True)
class Param:
    """What a parameter accepts: a number or text (``kind``), or a list of them (``many``)."""

    kind: type  # int, float or str
    doc: str
    many: bool = False
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    unthrottled: bool = False  # -1 also allowed (a target rate: no cap)

    def parse(self, name: str, value: Any) -> Any:
        """``value`` checked and normalized (a scalar given for a list becomes a one-item list)."""
        if self.many:
            items = value if isinstance(value, list | tuple) else [value]
            if not items:
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
        if self.minimum is not None and value < self.minimum and not (self.unthrottled and value == -1):
            allowed = f"at least {self.minimum:g}" + (" (or -1: unthrottled)" if self.unthrottled else "")
            raise KperfError(f"parameter {name!r} must be {allowed}, got {value!r}")
        return value


# Parameters several experiments share.
COMMON = {
    "clients": Param(str, "python (confluent-kafka), java (Kafka's stock perf tools) or both", many=True, choices=CLIENTS),
    "repeats": Param(int, "measurements of each point, interleaved", minimum=1),
    "warm_up_s": Param(float, "unrecorded load before the first point, at least this long", minimum=0),
    "record_size": Param(int, "payload bytes per record", minimum=1),
    "records": Param(int, "records per point", minimum=1),
    "partitions": Param(int, "partitions of each point's topic", minimum=1),
    "replication_factor": Param(int, "replicas of each point's topic", minimum=1),
    "acks": Param(str, "producer acks", choices=ACKS),
    "batch_size": Param(int, "producer batch.size (bytes)", minimum=1),
    "linger_ms": Param(int, "producer linger.ms", minimum=0),
}


def _with(*names: str, **own: Param) -> dict[str, Param]:
    return {**{n: COMMON[n] for n in names}, **own}


SCHEMA: dict[str, dict[str, Param]] = {
    "batch": _with(
        "clients", "repeats", "warm_up_s", "records", "record_size", "partitions", "replication_factor", "acks",
        batch_sizes=Param(int, "producer batch.size grid (bytes)", many=True, minimum=1),
        linger_ms=Param(int, "producer linger.ms grid", many=True, minimum=0),
        throughputs=Param(float, "producer rate caps (records/s); -1: unthrottled", many=True, minimum=1, unthrottled=True),
    ),
    "throughput": _with(
        "clients", "repeats", "warm_up_s", "record_size", "partitions", "replication_factor", "acks", "batch_size",
        "linger_ms",
        rates=Param(float, "offered loads (records/s)", many=True, minimum=1),
        duration_s=Param(float, "seconds of load per point", minimum=0.1),
    ),
    "partitions": _with(
        "clients", "repeats", "warm_up_s", "records", "record_size", "replication_factor", "acks", "batch_size",
        "linger_ms",
        partition_counts=Param(int, "partition-count grid", many=True, minimum=1),
        producers=Param(int, "producer processes per point", minimum=1),
        rate=Param(float, "total producer rate cap (records/s); -1: unthrottled", minimum=1, unthrottled=True),
    ),
    "threads": _with(
        "clients", "repeats", "warm_up_s", "records", "record_size", "partitions", "replication_factor", "acks",
        "batch_size", "linger_ms",
        producer_counts=Param(int, "producer-process grid", many=True, minimum=1),
        consumer_counts=Param(int, "consumer-process grid (one group)", many=True, minimum=1),
    ),
    "codecs": _with(
        "clients", "repeats", "warm_up_s", "records", "record_size", "partitions", "replication_factor", "acks",
        "batch_size", "linger_ms",
        codecs=Param(str, "compression.type grid", many=True, choices=CODECS),
        payload=Param(str, "random (incompressible) or text (JSON-like, compressible)", choices=PAYLOADS),
    ),
    "replication": _with(
        "clients", "repeats", "warm_up_s", "records", "record_size", "partitions", "batch_size", "linger_ms",
        replication_factors=Param(int, "replication-factor grid", many=True, minimum=1),
        acks_values=Param(str, "producer acks grid", many=True, choices=ACKS),
        min_insync_replicas=Param(int, "topic min.insync.replicas (capped at each point's replication factor)", minimum=1),
    ),
    "message_size": _with(
        "clients", "repeats", "warm_up_s", "records", "partitions", "replication_factor", "acks", "batch_size",
        "linger_ms",
        record_sizes=Param(int, "record-size grid (bytes)", many=True, minimum=1),
        max_mib=Param(float, "at most this many MiB per point (fewer records for big sizes)", minimum=0.001),
    ),
    "end_to_end": _with(
        "clients", "repeats", "warm_up_s", "record_size", "partitions", "replication_factor", "acks", "batch_size",
        "linger_ms",
        rates=Param(float, "producer rates (records/s) while the consumer reads", many=True, minimum=1),
        duration_s=Param(float, "seconds of load per point", minimum=0.1),
        round_trips=Param(int, "records sent one at a time by Kafka's EndToEndLatency (java client)", minimum=1),
    ),
    "faults": _with(
        "clients", "repeats", "warm_up_s", "record_size", "partitions", "replication_factor", "batch_size",
        "linger_ms",
        acks_values=Param(str, "producer acks grid (all: with an idempotent producer)", many=True, choices=ACKS),
        min_insync_replicas=Param(int, "topic min.insync.replicas (capped at the replication factor)", minimum=1),
        rate=Param(float, "steady producer rate (records/s)", minimum=1),
        duration_s=Param(float, "seconds of load per point", minimum=1),
        kill_at_s=Param(float, "seconds into the load when the leader of partition 0 is killed (SIGKILL)", minimum=0),
        restart_at_s=Param(float, "seconds into the load when that broker is started again", minimum=0),
    ),
}
EXPERIMENTS = tuple(SCHEMA)  # notebooks/<name>.ipynb each; the study runs them in this order


def _profile(base: Mapping[str, Any], **experiments: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A profile: ``base`` values for every experiment that has the parameter, then each one's own."""
    return {
        name: {**{k: v for k, v in base.items() if k in SCHEMA[name]}, **experiments[name]}
        for name in EXPERIMENTS
    }


PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    # Seconds per experiment: every code path once (both clients), nothing stable.
    "smoke": _profile(
        {"clients": ["python", "java"], "repeats": 1, "warm_up_s": 0, "record_size": 687, "records": 10_000,
         "partitions": 1, "replication_factor": 1, "acks": "all", "batch_size": 65536, "linger_ms": 5},
        batch={"batch_sizes": [8192, 131072], "linger_ms": [5], "throughputs": [-1, 20_000]},
        throughput={"rates": [5_000, 20_000], "duration_s": 1.0},
        partitions={"partition_counts": [1, 3], "replication_factor": 3, "producers": 1, "rate": -1},
        threads={"producer_counts": [1, 2], "consumer_counts": [1, 2], "partitions": 2, "clients": ["python"]},
        codecs={"codecs": ["none", "lz4"], "payload": "text"},
        replication={"replication_factors": [1, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2},
        message_size={"record_sizes": [100, 10_000], "max_mib": 16},
        end_to_end={"rates": [2_000], "duration_s": 2.0, "round_trips": 200},
        # Kafka fences a dead broker after broker.session.timeout.ms (9 s): restart after that.
        faults={"clients": ["python"], "acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 3,
                "replication_factor": 3, "rate": 1_000, "duration_s": 18.0, "kill_at_s": 4.0, "restart_at_s": 15.0},
    ),
    # The default: ~20 minutes on a 2-core machine running 3 brokers and the clients.
    "quick": _profile(
        {"clients": ["python"], "repeats": 2, "warm_up_s": 45, "record_size": 687, "records": 150_000,
         "partitions": 1, "replication_factor": 1, "acks": "all", "batch_size": 65536, "linger_ms": 5},
        batch={"batch_sizes": [4096, 16384, 65536, 262144], "linger_ms": [0, 10], "throughputs": [-1, 30_000],
               "records": 100_000},
        throughput={"rates": [10_000, 25_000, 50_000, 75_000, 100_000, 150_000, 200_000], "duration_s": 4.0,
                    "clients": ["python", "java"]},
        partitions={"partition_counts": [1, 3, 6, 9, 12, 15, 18], "replication_factor": 3, "producers": 1, "rate": -1},
        threads={"producer_counts": [1, 2, 4], "consumer_counts": [1, 2, 4], "partitions": 6, "replication_factor": 3,
                 "records": 200_000},
        codecs={"codecs": list(CODECS), "payload": "text", "records": 100_000},
        replication={"replication_factors": [1, 2, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2,
                     "partitions": 3},
        message_size={"record_sizes": [10, 100, 300, 1000, 3000, 10_000], "max_mib": 64, "records": 200_000},
        end_to_end={"rates": [1_000, 10_000, 40_000], "duration_s": 6.0, "round_trips": 2_000,
                    "clients": ["python", "java"]},
        faults={"acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 3, "replication_factor": 3,
                "rate": 2_000, "duration_s": 30.0, "kill_at_s": 8.0, "restart_at_s": 20.0},
    ),
    # The published grids (S1-S5), both clients; each comment says which study and what differs.
    "seed": _profile(
        {"clients": ["python", "java"], "repeats": 3, "warm_up_s": 60, "record_size": 687, "records": 10_000_000,
         "partitions": 1, "replication_factor": 1, "acks": "1", "batch_size": 10_000, "linger_ms": 0},
        # S1.1: 1M records, capped at 30,000/s as published and uncapped; Kafka 2.3 defaults (acks 1, linger 0).
        batch={"batch_sizes": [5000, 10000, 20000, 40000, 60000, 80000], "linger_ms": [0],
               "throughputs": [30_000, -1], "records": 1_000_000},
        # S1.2 sent 10M records per target (17-100 s); kperf runs each target for 60 s.
        throughput={"rates": [100_000, 200_000, 250_000, 300_000, 350_000, 400_000, 500_000, 600_000],
                    "duration_s": 60.0},
        # S1.3: rf 3, target 300,000 records/s, 10M records (the table's count).
        partitions={"partition_counts": [3, 6, 9, 12, 15, 18, 21], "replication_factor": 3, "producers": 1,
                    "rate": 300_000},
        # S1.4 and S1.5: 15 partitions, rf 3; 10M records produced, and read back by 1..18 consumers.
        threads={"producer_counts": [1, 3, 6, 9, 15, 18], "consumer_counts": [1, 3, 6, 9, 12, 15, 18],
                 "partitions": 15, "replication_factor": 3, "clients": ["python"]},
        # S3: 1 KB records, one single-partition topic per codec; 60M records each.
        codecs={"codecs": list(CODECS), "payload": "text", "record_size": 1024, "records": 60_000_000},
        # S4 and Kreps: 100-byte records, 6 partitions, rf 1-3 with acks 1 and all.
        replication={"replication_factors": [1, 2, 3], "acks_values": ["1", "all"], "min_insync_replicas": 2,
                     "record_size": 100, "partitions": 6},
        # S4 (10-10,000 B) and S2 (128-2048 B) in one grid, 6 partitions.
        message_size={"record_sizes": [10, 100, 128, 512, 1024, 2048, 10_000], "max_mib": 4096, "partitions": 6},
        # S4's producer and consumer at once, 100-byte records, 6 partitions.
        end_to_end={"rates": [100_000, 500_000, 1_000_000], "duration_s": 60.0, "round_trips": 10_000,
                    "record_size": 100, "partitions": 6},
        # No published counterpart: kperf's own. rf 3, min.insync.replicas 2, one broker killed for a minute.
        faults={"clients": ["python"], "acks_values": ["all", "1"], "min_insync_replicas": 2, "partitions": 6,
                "replication_factor": 3, "rate": 10_000, "duration_s": 120.0, "kill_at_s": 30.0, "restart_at_s": 90.0},
    ),
}


def resolve_profile(profile: str | None) -> str:
    """``profile``, else $KPERF_PROFILE, else the default; an error for an unknown name."""
    name = profile or os.environ.get("KPERF_PROFILE") or DEFAULT_PROFILE
    if name not in PROFILES:
        raise KperfError(f"unknown profile {name!r}: choose one of {', '.join(PROFILES)}")
    return name


def check_experiment(experiment: str) -> None:
    if experiment not in SCHEMA:
        raise KperfError(f"unknown experiment {experiment!r}: choose from {', '.join(EXPERIMENTS)}")


def check(experiment: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` checked against ``experiment``'s parameters: names, types, ranges and consistency."""
    check_experiment(experiment)
    schema = SCHEMA[experiment]
    unknown = sorted(set(values) - set(schema))
    if unknown:
        raise KperfError(f"unknown parameter {unknown[0]!r} for experiment {experiment!r}: known are {', '.join(schema)}")
    checked = {name: schema[name].parse(f"{experiment}.{name}", value) for name, value in values.items()}
    if "java" in checked.get("clients", ()) and experiment == "threads":
        raise KperfError(
            "parameter 'clients' of experiment 'threads': the stock tools run one process per client, "
            "so the threads experiment measures the python client only"
        )
    if experiment == "partitions" and checked.get("producers", 1) > 1 and "java" in checked.get("clients", ()):
        raise KperfError("parameter 'producers' of experiment 'partitions': more than 1 needs clients [python]")
    if experiment == "faults":
        _check_fault(checked)
    return checked


def _check_fault(checked: Mapping[str, Any]) -> None:
    """A fault point needs the python client (it reads every record back), a replica to fail over to,
    and the kill and restart inside the load, in that order."""
    if "java" in checked.get("clients", ()):
        raise KperfError("parameter 'clients' of experiment 'faults': it judges loss by reading every record "
                         "back with its sequence number, so it runs the python client only")
    if checked.get("replication_factor", 2) < 2:
        raise KperfError("parameter 'faults.replication_factor' must be at least 2: a killed broker needs a replica")
    kill, restart, duration = (checked.get(k) for k in ("kill_at_s", "restart_at_s", "duration_s"))
    if kill is not None and restart is not None and duration is not None and not kill < restart < duration:
        raise KperfError(f"parameters 'faults.kill_at_s' < 'faults.restart_at_s' < 'faults.duration_s' must hold, "
                         f"got {kill:g}, {restart:g} and {duration:g}")


def parameters(experiment: str, profile: str | None = None, **overrides: Any) -> dict[str, Any]:
    """The settings of ``experiment`` under ``profile``, with the non-None ``overrides`` applied and checked."""
    check_experiment(experiment)
    settings = PROFILES[resolve_profile(profile)][experiment]
    given = {k: v for k, v in overrides.items() if v is not None}
    return check(experiment, {**settings, **given})


def overrides_for(experiment: str, overrides: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The overrides that apply to ``experiment``: its own section, over those given for all ("*")."""
    shared = {k: v for k, v in overrides.get("*", {}).items() if k in SCHEMA[experiment]}
    return {**shared, **overrides.get(experiment, {})}


def parse_overrides(yaml_file: Path | None = None, assignments: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Overrides by experiment ("*": every experiment with that parameter) from a YAML file, then ``--set``s.

    The YAML file maps experiment names to parameter mappings; parameters at its
    top level apply to every experiment. ``--set`` takes ``[EXPERIMENT.]NAME=VALUE``
    with VALUE in YAML syntax (``[1, 2]`` for a list).
    """
    overrides: dict[str, dict[str, Any]] = {}
    if yaml_file is not None:
        try:
            loaded = yaml.safe_load(Path(yaml_file).read_text()) or {}
        except OSError as exc:
            raise KperfError(f"{yaml_file}: cannot read: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise KperfError(f"{yaml_file}: not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(loaded, dict):
            raise KperfError(f"{yaml_file}: expected a mapping of experiments to parameters, got {type(loaded).__name__}")
        for key, value in loaded.items():
            if isinstance(value, dict):
                check_experiment(str(key))
                overrides.setdefault(str(key), {}).update(value)
            else:
                overrides.setdefault("*", {})[str(key)] = value
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        if not sep or not key.strip():
            raise KperfError(f"--set {assignment!r} is not [EXPERIMENT.]NAME=VALUE")
        experiment, _, name = key.strip().rpartition(".")
        if experiment:
            check_experiment(experiment)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            raise KperfError(f"--set {assignment!r}: the value is not valid YAML") from None
        overrides.setdefault(experiment or "*", {})[name] = value
    for name in overrides.get("*", {}):
        if not any(name in schema for schema in SCHEMA.values()):
            raise KperfError(f"unknown parameter {name!r}: no experiment has it")
    return overrides

"""One-off measurements from the command line (``kperf produce|consume|import``).

They use the same drivers and the same result record as the study, and every
one is kept: appended to ``data/adhoc/results`` as soon as it is measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kperf import environment, security, tools, topics
from kperf.consumer import ConsumerSpec, consume
from kperf.errors import KperfError
from kperf.paths import data_dir
from kperf.producer import ProducerSpec, produce
from kperf.results import Measurement, Result, ResultStore
from kperf.target import Target
from kperf.workloads import measured_with_resources

CLIENTS = ("python", "java")


def store() -> ResultStore:
    return ResultStore.of_run(data_dir() / "adhoc")


def spec_params(spec: ProducerSpec | ConsumerSpec) -> dict[str, Any]:
    """A driver spec as result parameters: client settings under their Kafka names, secrets masked."""
    fields = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(spec).items()}
    for internal in ("bootstrap", "config", "expected"):
        fields.pop(internal, None)
    return {**fields, **security.redact(spec.config)}


def keep(kind: str, point: str, params: Mapping[str, Any], measured: Measurement, env: Mapping[str, Any]) -> Result:
    """Record ``measured`` in the ad-hoc store and return its result."""
    result = Result(
        run_id="adhoc", experiment=kind, point=point, repeat=0, params=params, measurement=measured, environment=env
    )
    store().append(result)
    return result


OPTIONS = {  # spec field -> the command-line option that sets it
    "duration_s": "--duration",
    "payload": "--payload",
    "producers": "--producers",
    "warmup_records": "--warmup-records",
    "record_latency": "--no-latency",
    "consumers": "--consumers",
    "end_to_end": "--end-to-end",
}


def unsupported_by_java(spec: Any, defaults: Any, names: tuple[str, ...]) -> None:
    """Refuse options the stock tool has no equivalent for, rather than ignore them."""
    for name in names:
        if getattr(spec, name) != getattr(defaults, name):
            raise KperfError(f"{OPTIONS[name]} is not supported with --client java")


def run_produce(target: Target, spec: ProducerSpec, client: str, partitions: int | None = None) -> Result:
    """Produce with confluent-kafka or Kafka's ProducerPerformance, measured and recorded.

    The topic must exist (with ``partitions``, when given), whichever client runs.
    """
    check_client(client)
    spec.check(librdkafka=client == "python")
    topics.require(spec.bootstrap, spec.topic, partitions)
    if client == "java":
        default = ProducerSpec(spec.bootstrap, spec.topic, spec.record_size, records=spec.records)
        unsupported_by_java(spec, default, ("duration_s", "payload", "producers", "warmup_records", "record_latency"))
        assert spec.records is not None  # no duration, checked above
        records = spec.records

        def run() -> Measurement:
            return tools.java_produce(
                spec.bootstrap, spec.topic, records, spec.record_size, int(spec.rate), spec.config, spec.payload_file
            )
    else:

        def run() -> Measurement:
            return produce(spec)

    (measured,) = measured_with_resources(target, spec.topic, lambda: [run()])
    return keep("produce", spec.topic, spec_params(spec), measured, environment.collect(target))


def run_consume(target: Target, spec: ConsumerSpec, client: str, partitions: int | None = None) -> Result:
    """Consume with confluent-kafka or Kafka's ConsumerPerformance, measured and recorded.

    The topic must exist (with ``partitions``, when given), whichever client runs.
    """
    check_client(client)
    spec.check(librdkafka=client == "python")
    topics.require(spec.bootstrap, spec.topic, partitions)
    if client == "java":
        default = ConsumerSpec(spec.bootstrap, spec.topic, records=spec.records)
        unsupported_by_java(spec, default, ("duration_s", "consumers", "end_to_end"))
        if spec.records is None:
            raise KperfError("--records is required with --client java (ConsumerPerformance's --messages)")
        records = spec.records

        def run() -> Measurement:
            return tools.java_consume(spec.bootstrap, spec.topic, records, spec.config, spec.group or None)
    else:

        def run() -> Measurement:
            return consume(spec)

    (measured,) = measured_with_resources(target, spec.topic, lambda: [run()])
    return keep("consume", spec.topic, spec_params(spec), measured, environment.collect(target))


def import_files(paths: list[Path]) -> list[Result]:
    """Saved output of the stock tools as recorded results, one per measurement they hold."""
    measured = [(path, m) for path in paths for m in tools.import_file(path)]  # all read before any is kept
    return [keep("import", path.name, {"source": str(path)}, m, {"imported_from": str(path)}) for path, m in measured]


def check_client(client: str) -> None:
    if client not in CLIENTS:
        raise KperfError(f"unknown client {client!r}: choose {' or '.join(CLIENTS)}")

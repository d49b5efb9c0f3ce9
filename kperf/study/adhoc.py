"""One-off measurements from the command line (``kperf produce|consume|import``).

They use the same drivers and the same result record as the study, and every
one is kept: appended to ``data/adhoc/results`` as soon as it is measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from kperf import drivers
from kperf.drivers import disk_room, stock_tools_measurements
from kperf.drivers.observed import measured_with_resources
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.errors import MeasurementFailed
from kperf.kafka import features, security, topics
from kperf.kafka.target import Target
from kperf.paths import data_dir
from kperf.results import Measurement, Result, ResultStore
from kperf.study import environment


def store() -> ResultStore:
    return ResultStore.of_run(data_dir() / "adhoc")


def spec_params(spec: ProducerSpec | ConsumerSpec) -> dict[str, Any]:
    """A driver spec as result parameters: client settings under their Kafka names, secrets masked."""
    fields = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(spec).items()}
    for internal in ("bootstrap", "config", "expected", "share", "transactions", "written_by", "progress_s", "disk_folder"):
        fields.pop(internal, None)
    written = spec.transactions if isinstance(spec, ProducerSpec) else spec.written_by
    return {**fields, **security.redact(spec.config), **_sharing(spec), **(written.params() if written else {})}


def _sharing(spec: ProducerSpec | ConsumerSpec) -> dict[str, Any]:
    """A share consumer's acknowledgement, shares and its group's settings, as scalars."""
    share = spec.share if isinstance(spec, ConsumerSpec) else None  # (a ProducerSpec's share is a method)
    return {} if share is None else share.params()


def keep(kind: str, point: str, params: Mapping[str, Any], measured: Measurement, env: Mapping[str, Any]) -> Result:
    """Record ``measured`` in the ad-hoc store and return its result."""
    result = Result(
        run_id="adhoc", experiment=kind, point=point, repeat=0, params=params, measurement=measured, environment=env
    )
    store().append(result)
    return result


def run_produce(target: Target, spec: ProducerSpec, client: str, partitions: int | None = None) -> Result:
    """Produce with ``client``'s driver, measured and recorded. The topic must exist (with ``partitions``, when given);
    ``spec`` was checked by the driver's ``check_producer`` (``kperf produce`` does so before connecting)."""
    driver = drivers.get(client)
    driver.check_hosts()
    features.require(spec.bootstrap, features.for_producer(spec.config, client == "java", spec.transactions is not None))
    if target.local is not None and client == "python":  # a user's brokers' disks are not seen from here
        topics.require(spec.bootstrap, spec.topic, partitions)
        spec = replace(spec, disk_folder=str(target.local.directory))
        disk_room.require_room(spec.disk_folder, topics.disk_bound(spec.bootstrap, spec.topic, planned_bytes(spec)),
                               spec.topic)
    return _recorded(target, "produce", spec, partitions, lambda: driver.produce(spec), client)


def planned_bytes(spec: ProducerSpec) -> float:
    """The record bytes ``spec`` is to send (``math.inf`` for an unpaced run of a duration: not known before)."""
    if spec.records is not None:
        return spec.records * spec.record_size
    return spec.rate * (spec.duration_s or 0.0) * spec.record_size if spec.rate > 0 else math.inf


def run_consume(target: Target, spec: ConsumerSpec, client: str, partitions: int | None = None) -> Result:
    """Consume with ``client``'s driver, measured and recorded. The topic must exist (with ``partitions``, when given);
    ``spec`` was checked by the driver's ``check_consumer`` (``kperf consume`` does so before connecting)."""
    driver = drivers.get(client)
    driver.check_hosts()
    features.require(spec.bootstrap, features.for_consumer(spec.config, share=spec.share is not None))
    return _recorded(target, "consume", spec, partitions, lambda: driver.consume(spec), client)


def _recorded(target: Target, kind: str, spec: ProducerSpec | ConsumerSpec, partitions: int | None,
              run: Callable[[], Measurement], client: str) -> Result:
    """One run measured and kept; a run that raised MeasurementFailed is kept as a failed unit with its reason (no
    rate), then the error goes on to the command (its exit says so)."""
    topics.require(spec.bootstrap, spec.topic, partitions)
    try:
        (measured,) = measured_with_resources(target, [spec.topic], spec.window_s, lambda: [run()])
    except MeasurementFailed as exc:
        role = "producer" if isinstance(spec, ProducerSpec) else "consumer"
        keep(kind, spec.topic, spec_params(spec), Measurement.failed(role, client, str(exc)),
             environment.collect(target))
        raise
    return keep(kind, spec.topic, spec_params(spec), measured, environment.collect(target))


def import_files(paths: list[Path]) -> list[Result]:
    """Saved output of the stock tools as recorded results, one per measurement they hold."""
    measured = [(path, m) for path in paths for m in stock_tools_measurements.import_file(path)]  # all read before any is kept
    return [keep("import", path.name, {"source": str(path)}, m, {"imported_from": str(path)}) for path, m in measured]


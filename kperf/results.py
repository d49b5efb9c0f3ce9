"""Result records: one immutable record per measured point, kept in a tidy table.

Every record carries its parameters and environment, so a table of them can be
filtered and compared without any other file. The store writes one small
Parquet file per measured unit (a point's producer and consumer records together), atomically (temporary file, then rename), so a crash
at any moment leaves every earlier record readable and none half-written.

Throughput in bytes is reported in MiB/s (2**20 bytes), the unit Kafka's own
perf tools print as "MB/sec", so our figures compare with theirs directly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kperf.errors import KperfError

if TYPE_CHECKING:
    import pandas as pd

# The record format, written as every record's ``schema`` column. Changelog:
#   1: kperf 0.1 until 2026-11-23 (no ``schema`` column was written);
#   2: the ``schema`` column; ``env.kafka_release`` and ``env.lock_sha256``.
# A reader of version N reads every version up to N; older columns it lacks are empty.
SCHEMA_VERSION = 2
FIRST_SCHEMA = 1  # what a record without the column is
MIB = 2**20
LATENCY_STATS = ("avg", "p50", "p95", "p99", "p999", "max")


@dataclass(frozen=True)
class Verification:
    """What consuming everything back found, by producer id and sequence number."""

    expected: int
    missing: int
    duplicated: int

    @property
    def ok(self) -> bool:
        return self.missing == 0 and self.duplicated == 0


@dataclass(frozen=True)
class Measurement:
    """What one run of one load driver measured: the same shape for every driver.

    ``latency_ms`` maps a kind to its statistics (keys LATENCY_STATS): "ack"
    (send to acknowledgement), "intended" (intended send time to
    acknowledgement, for paced producers), "e2e" (produce to consume).
    ``measures`` holds what only some drivers report (rebalance_ms, fetch_ms,
    ...); ``resources`` what was sampled during the run (CPU %, RSS, bytes on disk).
    """

    role: str  # "producer", "consumer" or "end-to-end"
    client: str  # "python" (confluent-kafka) or "java" (Kafka's stock tools)
    records: int
    bytes: int
    seconds: float
    latency_ms: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    errors: Mapping[str, int] = field(default_factory=dict)  # by Kafka error name
    verification: Verification | None = None
    measures: Mapping[str, float] = field(default_factory=dict)
    resources: Mapping[str, float] = field(default_factory=dict)

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mib_per_s(self) -> float:
        return self.bytes / MIB / self.seconds if self.seconds > 0 else 0.0

    def row(self) -> dict[str, Any]:
        """The measured columns of a result row."""
        verification = self.verification
        return {
            "role": self.role,
            "client": self.client,
            "records": self.records,
            "bytes": self.bytes,
            "seconds": self.seconds,
            "records_per_s": self.records_per_s,
            "mib_per_s": self.mib_per_s,
            **{
                f"latency_{kind}_{stat}_ms": stats.get(stat)
                for kind, stats in self.latency_ms.items()
                for stat in LATENCY_STATS
            },
            "errors": sum(self.errors.values()),
            **{f"error.{kind}": count for kind, count in self.errors.items()},
            "verified": None if verification is None else verification.ok,
            "missing": None if verification is None else verification.missing,
            "duplicated": None if verification is None else verification.duplicated,
            **dict(self.measures),
            **{f"res.{k}": v for k, v in self.resources.items()},
        }


@dataclass(frozen=True)
class Result:
    """One measurement of one point (one repeat), with what was asked and where."""

    run_id: str
    experiment: str
    point: str  # stable name of the point within its experiment, e.g. "batch.size=16384"
    repeat: int
    params: Mapping[str, Any]
    measurement: Measurement
    environment: Mapping[str, Any]
    recorded_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="microseconds"))

    def row(self) -> dict[str, Any]:
        """The record as one flat table row: ``param.*`` and ``env.*`` columns beside the measures."""
        return {
            "schema": SCHEMA_VERSION,
            "run_id": self.run_id,
            "experiment": self.experiment,
            "point": self.point,
            "repeat": self.repeat,
            **{f"param.{k}": v for k, v in self.params.items()},
            **self.measurement.row(),
            "recorded_at": self.recorded_at,
            **{f"env.{k}": v for k, v in self.environment.items()},
        }


class ResultStore:
    """A folder of result records that reads back as one tidy DataFrame."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @classmethod
    def of_run(cls, run_dir: Path) -> ResultStore:
        """The store of a run folder (``<run>/results``)."""
        return cls(Path(run_dir) / "results")

    def append(self, *results: Result) -> Path:
        """Write ``results`` (one measured unit: a producer and its consumer, say) as one Parquet file, atomically."""
        import pandas as pd  # records are plain data; only the store needs pandas (a plan or --help must not)

        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{results[0].experiment}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = self.directory / f".{name}.tmp"
        pd.DataFrame([result.row() for result in results]).to_parquet(tmp, index=False)
        os.replace(tmp, self.directory / name)
        return self.directory / name

    def load(self, experiment: str | None = None) -> pd.DataFrame:
        """All records (of one ``experiment``), oldest first; an empty frame when there are none.

        Records of every schema version up to SCHEMA_VERSION are read (their
        ``schema`` column says which); a newer one is refused, naming it."""
        import pandas as pd

        pattern = f"{experiment}-*.parquet" if experiment else "*.parquet"
        frames = [_readable(pd.read_parquet(p), p) for p in sorted(self.directory.glob(pattern))]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True).sort_values("recorded_at", kind="stable", ignore_index=True)


def _readable(records: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``records`` with their schema version, or an error when this kperf is older than they are."""
    if "schema" not in records:
        return records.assign(schema=FIRST_SCHEMA)
    newest = int(records["schema"].max())
    if newest > SCHEMA_VERSION:
        raise KperfError(
            f"{path}: result records of schema version {newest}, newer than the {SCHEMA_VERSION} this kperf "
            "reads: use the kperf that wrote them"
        )
    return records


def with_derived(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` plus what is computed from its columns: the compression ratio (on the local cluster)."""
    if "res.topic_disk_bytes" not in results:
        return results
    rf = results.get("param.replication_factor", 1)
    on_disk = results["res.topic_disk_bytes"] / rf
    return results.assign(compression_ratio=(results["bytes"] / on_disk).where(on_disk > 0))

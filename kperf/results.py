"""Result records: one immutable record per measured point, kept in a tidy table.

Every record carries its parameters and environment, so a table of them can be
filtered and compared without any other file. The store writes one small
Parquet file per record, atomically (temporary file, then rename), so a crash
at any moment leaves every earlier record readable and none half-written.

Throughput in bytes is reported in MiB/s (2**20 bytes), the unit Kafka's own
perf tools print as "MB/sec", so our figures compare with theirs directly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

MIB = 2**20
LATENCY_STATS = ("avg", "p50", "p95", "p99", "p999", "max")


@dataclass(frozen=True)
class Result:
    """One measurement of one point (one repeat) by one client."""

    run_id: str
    experiment: str
    point: str  # stable name of the point within its experiment, e.g. "batch.size=16384"
    repeat: int
    client: str  # "python" (confluent-kafka) or "java" (Kafka's stock tools)
    params: Mapping[str, Any]
    records: int
    bytes: int
    seconds: float
    latency_ms: Mapping[str, float]  # send -> ack, keys LATENCY_STATS
    errors: int
    environment: Mapping[str, Any]
    recorded_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="microseconds"))

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mib_per_s(self) -> float:
        return self.bytes / MIB / self.seconds if self.seconds > 0 else 0.0

    def row(self) -> dict[str, Any]:
        """The record as one flat table row: ``param.*`` and ``env.*`` columns beside the measures."""
        return {
            "run_id": self.run_id,
            "experiment": self.experiment,
            "point": self.point,
            "repeat": self.repeat,
            "client": self.client,
            **{f"param.{k}": v for k, v in self.params.items()},
            "records": self.records,
            "bytes": self.bytes,
            "seconds": self.seconds,
            "records_per_s": self.records_per_s,
            "mib_per_s": self.mib_per_s,
            **{f"latency_{k}_ms": self.latency_ms.get(k) for k in LATENCY_STATS},
            "errors": self.errors,
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

    def append(self, result: Result) -> Path:
        """Write ``result`` as its own Parquet file, atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{result.experiment}-{uuid.uuid4().hex[:12]}.parquet"
        tmp = self.directory / f".{name}.tmp"
        pd.DataFrame([result.row()]).to_parquet(tmp, index=False)
        os.replace(tmp, self.directory / name)
        return self.directory / name

    def load(self, experiment: str | None = None) -> pd.DataFrame:
        """All records (of one ``experiment``), oldest first; an empty frame when there are none."""
        pattern = f"{experiment}-*.parquet" if experiment else "*.parquet"
        frames = [pd.read_parquet(p) for p in sorted(self.directory.glob(pattern))]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True).sort_values("recorded_at", kind="stable", ignore_index=True)

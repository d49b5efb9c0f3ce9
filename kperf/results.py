"""Result records: one immutable record per measured point, kept in a tidy table.

Every record carries its parameters and environment, so a table of them can be
filtered and compared without any other file. The store writes one small
Parquet file per measured unit (a point's producer and consumer records together), atomically (temporary file, then rename), so a crash
at any moment leaves every earlier record readable and none half-written.

Throughput in bytes is reported in MiB/s (2**20 bytes), the unit Kafka's own
perf tools print as "MB/sec", so our figures compare with theirs directly.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kperf import limits, validity
from kperf.achieved import ANY_STEADY, steady_else_whole
from kperf.errors import KperfError
from kperf.load import ISOLATION_LEVELS
from kperf.series import Series

if TYPE_CHECKING:
    import pandas as pd

# The record format, written as every record's ``schema`` column. Changelog:
#   1: kperf 0.1 until 2026-11-23 (no ``schema`` column was written);
#   2: the ``schema`` column; ``env.kafka_release`` and ``env.lock_sha256``.
#   3: ``series_file`` (the unit's time series, beside the records) and the steady state of the
#      series: ``steady_records_per_s`` with ``steady_low``/``steady_high`` (its 95% interval),
#      ``steady_windows``, ``steady_start_s`` and ``steady_end_s`` (Python drivers; the stock tools from schema 4);
#      ``limit`` and ``limit_evidence``: what held the point back (kperf.limits). Series carry each
#      window's latency p50, p99 and max where the driver records latency.
#   4: errors and resources window by window: the series' ``res.*`` columns (client and broker CPU, RSS, the brokers' disk
#      writes, the host's CPU, iowait, busiest disk and network interface) and the record's ``steady_res.*``
#      (their means over the steady windows), read by ``limit``; ``res.host_*``, ``res.disk_busy_pct``,
#      ``res.net_busy_pct`` and ``res.broker_disk_write_mib_per_s`` over the whole run; ``broker.*``: the brokers'
#      own view while the unit ran, where it was readable (kperf.kafka.broker_metrics.between).
#   5: where the load came from (Python drivers): ``env.load_hosts``, ``env.load_processes``, ``env.clock_offset_ms``
#      and, when Dask workers ran it (--workers), ``env.load_detail`` (per host, JSON) and ``res.load_host_busy_pct``
#      (``res.client_*`` are then the load processes' own figures, sampled on their hosts).
#   6: ``failed``: why the measurement is not valid (kperf.validity), its rates then empty and no ``limit``;
#      ``windows`` and ``windows_with_records`` (its series' windows, and those with records in them); the fault
#      experiment's failed sends, ``failed`` before, are ``failed_sends`` (renamed on reading older records).
#      ``env.api_versions`` and ``env.features``: what the cluster answers (kperf.kafka.features).
#   7: ``loop``: which hot loop of the Python client measured the record (kperf.drivers.loops: ``native`` or
#      ``python``; ``native:2,python:1`` when its load processes ran different ones); empty for the stock tools.
#      ``client_cpu_s``: the CPU time its load processes spent measuring (all their threads, the client library's too);
#      ``client_rss_peak_mib``: their peak memory, each its kernel's high-water mark (not a sample), summed.
#   8: ``broker.cpu_cores`` (the broker JVMs' own CPU, from their exporters) and
#      ``broker.replication_bytes_in_mib_per_s`` / ``broker.replication_bytes_out_mib_per_s`` (the followers' traffic).
# A reader of version N reads every version up to N; older columns it lacks are empty.
SCHEMA_VERSION = 8
FIRST_SCHEMA = 1  # what a record without the column is
MIB = 2**20
SERIES = "series"  # the folder of the records' time series, inside the store
LATENCY_STATS = ("avg", "p50", "p95", "p99", "p999", "max")
UNIT = ["experiment", "point", "param.client", "role"]  # the columns naming a measured unit, whose repeats they group
FAILED = "failed"  # the column saying why a record's measurement failed (kperf.validity); empty when it is valid
FAILED_SCHEMA = 6  # the first schema with it (before, the fault experiment's ``failed`` counted its failed sends)
FAILED_SENDS = "failed_sends"  # the fault experiment's sends that failed
CLIENT_CPU = "client_cpu_s"  # a measure: the load processes' CPU seconds while measuring (what a load host pays)
# A transactional producer's topic read back at each isolation level (kperf.drivers.aborted_reads): the records of
# aborted transactions read, and the records it was to read and did not (read_committed: the committed ones).
ABORTED_READ = {level: f"aborted_read_{level.removeprefix('read_')}" for level in ISOLATION_LEVELS}
MISSING = {level: f"missing_{level.removeprefix('read_')}" for level in ISOLATION_LEVELS}
CLIENT_RSS_PEAK = "client_rss_peak_mib"  # a measure: the load processes' peak memory (their high-water marks, summed)


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
    series: Series | None = None  # window by window, where the driver records it
    broker: Mapping[str, float] = field(default_factory=dict)  # the brokers' own view meanwhile ("broker.*" columns)
    load: Mapping[str, Any] = field(default_factory=dict)  # where the load came from ("env.load_*" columns)
    failure: str | None = None  # why the run failed, when it raised (its record is then a failed unit)
    loop: str = ""  # the Python client's hot loop that measured it (kperf.drivers.loops.label); "" for the stock tools

    @classmethod
    def failed(cls, role: str, client: str, reason: str) -> Measurement:
        """The record of a run that raised before it measured anything: a failed unit with its ``reason``."""
        return cls(role=role, client=client, records=0, bytes=0, seconds=0.0, failure=reason)

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
            "loop": self.loop or None,
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
            **dict(self.broker),
            **self.steady,
            **self.windows,
        }

    @property
    def windows(self) -> dict[str, int]:
        """How many windows its series has and in how many records came (:mod:`kperf.validity`'s batches rule);
        empty without a series."""
        if self.series is None:
            return {}
        return {"windows": len(self.series.records), "windows_with_records": sum(1 for n in self.series.records if n > 0)}

    @cached_property
    def steady(self) -> dict[str, float]:
        """The steady state of the series as the record's ``steady_*`` columns (:func:`kperf.steady.columns`),
        computed once, when first read; empty without a series."""
        if self.series is None:
            return {}
        from kperf.steady import columns  # numpy: only where a series was recorded, never for a plan

        return columns(self.series)

    def achieved_records_per_s(self, at_least: int = ANY_STEADY) -> float:
        """Records/s by the one rule of :mod:`kperf.achieved`: the steady rate where it stands (a steady state of
        at least ``at_least`` windows), else the whole run's."""
        return steady_else_whole(self.steady.get("steady_records_per_s", math.nan),
                                 self.steady.get("steady_windows", math.nan), self.records_per_s, at_least)

    def with_measures(self, measures: Mapping[str, float]) -> Measurement:
        """This measurement with ``measures`` beside its own (a capacity trial's SLO values, say) and its steady
        state carried over: the series is the same, so it is not computed again."""
        more = replace(self, measures={**self.measures, **measures})
        more.__dict__["steady"] = self.steady  # where the cached_property keeps it
        return more


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
        """The record as one flat table row: ``param.*`` and ``env.*`` columns beside the measures, and what
        limited the point (:mod:`kperf.limits`) with its evidence."""
        row = {
            "schema": SCHEMA_VERSION,
            "run_id": self.run_id,
            "experiment": self.experiment,
            "point": self.point,
            "repeat": self.repeat,
            **{f"param.{k}": v for k, v in self.params.items()},
            **self.measurement.row(),
            "recorded_at": self.recorded_at,
            **{f"env.{k}": v for k, v in {**self.environment, **self.measurement.load}.items()},
        }
        row[FAILED] = self.measurement.failure or validity.failure(row)
        if row[FAILED]:
            return validity.without_rates(row)
        row["limit"], row["limit_evidence"] = limits.limit(row)
        return row


class ResultStore:
    """A folder of result records that reads back as one tidy DataFrame."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    @classmethod
    def of_run(cls, run_dir: Path) -> ResultStore:
        """The store of a run folder (``<run>/results``)."""
        return cls(Path(run_dir) / "results")

    def append(self, *results: Result) -> Path:
        """Write ``results`` (one measured unit: a producer and its consumer, say) as one Parquet file, atomically,
        after their time series (``series/<record file>-<i>.parquet``): no record ever lacks its series."""
        import pandas as pd  # records are plain data; only the store needs pandas (a plan or --help must not)

        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{results[0].experiment}-{uuid.uuid4().hex[:12]}.parquet"
        rows = []
        for i, result in enumerate(results):
            row, series = result.row(), result.measurement.series
            if series is not None:
                table = pd.DataFrame({"start_s": series.starts_s, "seconds": series.seconds, "records": series.records,
                                      "bytes": series.bytes})
                if series.latency:
                    table = table.assign(latency=series.latency, latency_p50_ms=series.latency_p50_ms,
                                         latency_p99_ms=series.latency_p99_ms, latency_max_ms=series.latency_max_ms)
                if series.errors:
                    table = table.assign(errors=series.errors)
                table = table.assign(**{f"res.{key}": values for key, values in series.resources.items()})
                path = _write(table, self.directory / SERIES / f"{Path(name).stem}-{i}.parquet")
                row["series_file"] = path.relative_to(self.directory).as_posix()
            rows.append(row)
        return _write(pd.DataFrame(rows), self.directory / name)

    def series(self, record: Mapping[str, Any]) -> pd.DataFrame:
        """The time series of one loaded record (a row of :meth:`load`): window start (s from the unit's start),
        its length, records and bytes, records/s, and where recorded the window's latency (which, and its p50, p99
        and max in ms); an empty frame for a record without one."""
        import pandas as pd

        name = record.get("series_file")
        if not isinstance(name, str):
            return pd.DataFrame()
        windows = pd.read_parquet(self.directory / name)
        return windows.assign(records_per_s=windows["records"] / windows["seconds"])

    def load(self, experiment: str | None = None) -> pd.DataFrame:
        """All records (of one ``experiment``), oldest first; an empty frame when there are none.

        Records of every schema version up to SCHEMA_VERSION are read (their
        ``schema`` column says which); a newer one is refused, naming it."""
        import pandas as pd

        pattern = f"{experiment}-*.parquet" if experiment else "*.parquet"
        frames = [_readable(pd.read_parquet(p), p) for p in sorted(self.directory.glob(pattern))]
        if not frames:
            return pd.DataFrame()
        # (copy: one block per type; frames of many experiments' columns concatenate into hundreds of blocks, and every
        # column added to that is slow: pandas warns)
        return pd.concat(frames, ignore_index=True).sort_values("recorded_at", kind="stable", ignore_index=True).copy()

    def remove_failed(self, experiment: str) -> int:
        """Delete the files of ``experiment``'s failed units (a record of the unit failed), so that measuring them
        again leaves one record per unit; how many. Each unit is one file, deleted (atomically) before its series:
        an interruption at any moment leaves the unit recorded failed, or not recorded, never both."""
        import pandas as pd

        removed = 0
        for path in sorted(self.directory.glob(f"{experiment}-*.parquet")):
            unit = _readable(pd.read_parquet(path), path)  # older records: a fault's count of failed sends renamed
            if len(succeeded(unit)) < len(unit):
                path.unlink()
                for name in unit.get("series_file", pd.Series(dtype=object)).dropna():
                    (self.directory / name).unlink(missing_ok=True)
                removed += 1
        return removed


def _write(table: pd.DataFrame, path: Path) -> Path:
    """``table`` as Parquet at ``path``, atomically (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def _readable(records: pd.DataFrame, path: Path) -> pd.DataFrame:
    """``records`` with their schema version, or an error when this kperf is older than they are."""
    if "schema" not in records:
        records = records.assign(schema=FIRST_SCHEMA)
    newest = int(records["schema"].max())
    if newest > SCHEMA_VERSION:
        raise KperfError(
            f"{path}: result records of schema version {newest}, newer than the {SCHEMA_VERSION} this kperf "
            "reads: use the kperf that wrote them"
        )
    if newest < FAILED_SCHEMA and FAILED in records:  # the fault experiment's failed sends, before the failed column
        records = records.rename(columns={FAILED: FAILED_SENDS})
    return records


def succeeded(records: pd.DataFrame) -> pd.DataFrame:
    """The records whose measurement is valid: failed units (:data:`FAILED`) are left out of every fit, answer,
    advice and comparison, and listed apart with their reasons (:func:`failures`)."""
    return records if FAILED not in records else records[~_failed(records)]


def failures(records: pd.DataFrame) -> pd.DataFrame:
    """The records of failed units, whose :data:`FAILED` column says why: what :func:`succeeded` leaves out."""
    return records.iloc[0:0] if FAILED not in records else records[_failed(records)]


def _failed(records: pd.DataFrame) -> pd.Series:
    return records[FAILED].notna() & (records[FAILED] != "")


def with_derived(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` plus what is computed from its columns: the compression ratio (on the local cluster)."""
    if "res.topic_disk_bytes" not in results:
        return results
    rf = results.get("param.replication_factor", 1)
    on_disk = results["res.topic_disk_bytes"] / rf
    return results.assign(compression_ratio=(results["bytes"] / on_disk).where(on_disk > 0))

"""What the measured cluster spent per unit of load, fitted from a run's records: the constants a plan multiplies.

Each cost is a :class:`~kperf.sizing.linear.LinearCost` over the points that can
speak for it, with the points it used and its goodness:

- broker CPU (cores) per MiB/s and per million records/s written to replicas
  (a record at replication factor 3 is written three times), by codec, from
  producer records; and per MiB/s and million records/s read, from consumer
  records;
- disk (MiB/s written by the broker processes) per MiB/s and per thousand records/s written to replicas, by codec;
- network into the brokers (clients' bytes and replication's) per MiB/s written
  to replicas, and out of them (to followers) per MiB/s replicated, by codec;
  to consumers per MiB/s read;
- log bytes kept on disk per byte sent, per replica, by codec (the topic's size
  on disk over the bytes sent times the replication factor), as a share of the
  bytes plus an overhead per record;
- kperf's own client CPU (cores) per million records/s, producing and consuming;
- the per-partition ceiling of a producer and of a consumer (MiB/s at one partition).

Only records that measured writes or reads alone speak for a broker cost
(:data:`ALONE`: their producers and consumers never run at once), only valid
ones, and never one limited by the load generator (it measured kperf, not the
brokers). Broker CPU is the broker processes' as kperf sampled them (a local
cluster, where brokers and clients share the host), else the brokers' JVMs' own
(their exporters): without either, the cost is missing, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kperf import broker_columns, disturbance, limits
from kperf.analysis.stats import median_interval
from kperf.errors import KperfError
from kperf.results import CLIENT_CPU, MIB, succeeded, with_derived
from kperf.sizing.costs import (
    CLIENT_CONSUME,
    CLIENT_PRODUCE,
    CLIENT_WORKLOAD,
    CONSUMER_FETCHES,
    CPU_READ,
    CPU_WORKLOAD,
    CPU_WRITE,
    DISK_WRITE,
    FOLLOWER_FETCHES,
    HOST_WORKLOAD,
    IDLE,
    KRECORDS,
    KRECORDS_WRITTEN,
    LOG_BYTES,
    LOOP_WORKLOAD,
    NETWORK_IN,
    NETWORK_OUT_READ,
    NETWORK_OUT_REPLICATION,
    NO_CODEC,
    PER_BYTE,
    PER_RECORD,
    PRODUCE_REQUESTS,
    READ,
    RECORDS,
    REPLICATED,
    WRITTEN,
    Ceiling,
    Cost,
    Costs,
)
from kperf.sizing.linear import fit

# The experiments whose producer and consumer run in turn (a consumer reads a topic filled before it): their broker
# figures are the writes' alone, or the reads' alone.
ALONE = ("batch", "message_size", "replication", "partitions", "codecs", "threads", "throughput")
WORKLOAD_RUN = "capacity"  # a capacity run's records' experiment: the workload itself, at each trial's rate
WORKLOAD_PHASES = ("sustain", "headroom")  # kperf.capacity.run's phases that run the workload as it is


def points(records: pd.DataFrame) -> pd.DataFrame:
    """The records that speak for a broker cost, one row each, with the figures the fits read, all over the whole
    unit (the brokers' request counts are read around it): achieved MiB/s and records/s, the replication factor,
    codec, record size, the brokers' requests, and each resource used."""
    valid = with_derived(succeeded(records))
    if valid.empty or "experiment" not in valid:
        return pd.DataFrame()
    alone = valid[valid["experiment"].isin(ALONE) & valid["role"].isin(["producer", "consumer"])]
    return pd.DataFrame([_point(row) for row in alone.to_dict("records")])


def _point(row: Mapping[str, object]) -> dict[str, object]:
    rate = _number(row, "records_per_s")
    size = _number(row, "bytes") / _number(row, "records") if _number(row, "records") > 0 else math.nan
    rf = _number(row, "param.replication_factor")
    return {
        "experiment": row["experiment"], "role": row["role"], "limit": row.get("limit") or "",
        "codec": _codec(row.get("param.compression.type")), "rf": rf if math.isfinite(rf) else 1.0,
        "record_size": size, "partitions": _number(row, "param.partitions"), "paced": _number(row, "param.rate") > 0,
        "records_per_s": rate, "mib_per_s": rate * size / MIB,
        "broker_cores": broker_cores(row),
        "produce_krequests": _number(row, broker_columns.served_per_s(broker_columns.PRODUCE)) / 1000,
        "follower_kfetches": _number(row, broker_columns.served_per_s(broker_columns.FETCH)) / 1000,
        "consumer_kfetches": _number(row, broker_columns.served_per_s(broker_columns.FETCH_CONSUMER)) / 1000,
        "disk_mib_per_s": _number(row, "res.broker_disk_write_mib_per_s"),
        "net_in_mib_per_s": _number(row, broker_columns.BYTES_IN_MIB_PER_S) + _number(
            row, broker_columns.REPLICATION_BYTES_IN_MIB_PER_S),
        "net_out_replication_mib_per_s": _number(row, broker_columns.REPLICATION_BYTES_OUT_MIB_PER_S),
        "net_out_read_mib_per_s": _number(row, broker_columns.BYTES_OUT_MIB_PER_S),
        "log_bytes_per_byte": 1 / _number(row, "compression_ratio") if _number(row, "compression_ratio") > 0 else math.nan,
        "client_cores": _number(row, CLIENT_CPU) / _number(row, "seconds") if _number(row, "seconds") > 0 else math.nan,
    }


def workload_points(records: pd.DataFrame) -> pd.DataFrame:
    """A capacity run's trials, one row each (its first topic's producer record): the workload's records/s
    achieved and the brokers' cores meanwhile (its producers, consumers and replication together). A trial whose
    host used CPU beyond the brokers and the clients (:mod:`kperf.disturbance`: another tenant, a linked cluster's
    proxy) is left out: its host figures are not the workload's."""
    valid = succeeded(records)
    if valid.empty or "experiment" not in valid:
        return pd.DataFrame()
    trials = valid[(valid["experiment"] == WORKLOAD_RUN) & (valid["role"] == "producer")]
    if "param.phase" in trials:  # the workload as it runs (a catch-up's backlog, a fault, are not its steady cost)
        trials = trials[trials["param.phase"].isin(WORKLOAD_PHASES)]
    if "param.stream" in trials:
        trials = trials[trials["param.stream"].fillna("") == trials["param.stream"].fillna("").min()]
    # Every load process of a trial (its producers' and groups' records), for what a load host pays for it.
    clients = valid[valid["experiment"] == WORKLOAD_RUN].assign(
        cores=lambda t: pd.to_numeric(t.get(CLIENT_CPU), errors="coerce") / t["seconds"]).groupby(
        ["point", "repeat"])["cores"].sum(min_count=1)
    rows = []
    for row in trials.to_dict("records"):
        if disturbance.disturbance(row):
            continue
        share = _number(row, "param.stream_rate") / _number(row, "param.rate")
        achieved = _number(row, "records_per_s") / (share if share > 0 else 1.0)
        rows.append({"experiment": WORKLOAD_RUN, "workload": str(row.get("param.workload") or ""),
                     "records_per_s": achieved,
                     "broker_cores": broker_cores(row),
                     "client_cores": float(clients.get((row["point"], row["repeat"]), math.nan)),
                     "loop_cores": limits.resource(row, "client_cpu_pct_busiest") / 100,
                     "host_cores": limits.resource(row, "host_cpu_pct") / 100,
                     "rf": _number(row, "param.replication_factor"), "record_size": _number(row, "param.record_size")})
    return pd.DataFrame(rows)


# Each fitted cost: (name, role, by codec, unit, the figure fitted, its features (each from a point)).
Feature = Callable[[pd.DataFrame], pd.Series]
_ONE: Feature = lambda p: pd.Series(1.0, index=p.index)  # noqa: E731 (a feature like the others)
_WRITTEN: Feature = lambda p: p["mib_per_s"] * p["rf"]  # noqa: E731
_READ: Feature = lambda p: p["mib_per_s"]  # noqa: E731
_KRECORDS: Feature = lambda p: p["records_per_s"] / 1000  # noqa: E731


@dataclass(frozen=True)
class Spec:
    """How one cost is fitted: on which role's points, by codec or not, the figure and its features."""

    name: str
    role: str
    by_codec: bool
    unit: str
    figure: str
    features: Mapping[str, Feature]
    broker: bool = True  # a broker's cost: points limited by the load generator are left out
    least: int = 1  # the features a fit keeps at the least (the first ones: those it means nothing without)
    records_alone: bool = False  # a property of the records (their bytes on disk), whatever limited the rate

    @property
    def unrecorded(self) -> str:
        """Why no point has this cost's figure."""
        if self.broker:
            return (f"no {self.role} record has the brokers' {self.figure.replace('_', ' ')} and the features it is "
                    "fitted on (kperf samples the brokers on its own cluster; a user's cluster's exporters tell CPU, "
                    "requests and network, not disk)")
        return f"no {self.role} record has its load processes' CPU ({CLIENT_CPU}: records of schema 7 on)"


SPECS = (
    # A broker's CPU: its own idle use (the measured cluster's brokers), each MiB every replica writes, and each
    # request: the producers' and the followers' fetches (batching and replication set how many a MiB takes).
    Spec(CPU_WRITE, "producer", True, "cores", "broker_cores", {
        IDLE: _ONE, WRITTEN: _WRITTEN, PRODUCE_REQUESTS: lambda p: p["produce_krequests"],
        FOLLOWER_FETCHES: lambda p: p["follower_kfetches"]}, least=2),
    Spec(CPU_READ, "consumer", False, "cores", "broker_cores", {
        IDLE: _ONE, READ: _READ, CONSUMER_FETCHES: lambda p: p["consumer_kfetches"]}, least=2),
    # The disk: each MiB every replica writes, and each record (its headers and its share of a batch's).
    Spec(DISK_WRITE, "producer", True, "MiB/s", "disk_mib_per_s", {
        WRITTEN: _WRITTEN, KRECORDS_WRITTEN: lambda p: p["records_per_s"] * p["rf"] / 1000}),
    Spec(NETWORK_IN, "producer", True, "MiB/s", "net_in_mib_per_s", {WRITTEN: _WRITTEN}),
    Spec(NETWORK_OUT_REPLICATION, "producer", True, "MiB/s", "net_out_replication_mib_per_s",
         {REPLICATED: lambda p: p["mib_per_s"] * (p["rf"] - 1)}),
    Spec(NETWORK_OUT_READ, "consumer", False, "MiB/s", "net_out_read_mib_per_s", {READ: _READ}),
    Spec(LOG_BYTES, "producer", True, "bytes per byte sent", "log_bytes_per_byte",
         {PER_BYTE: _ONE, PER_RECORD: lambda p: 1 / p["record_size"]}, records_alone=True),
    Spec(CLIENT_PRODUCE, "producer", False, "cores", "client_cores", {RECORDS: lambda p: p["records_per_s"] / 1e6},
          broker=False),
    Spec(CLIENT_CONSUME, "consumer", False, "cores", "client_cores", {RECORDS: lambda p: p["records_per_s"] / 1e6},
          broker=False),
)


# The brokers' CPU as a capacity run measured the workload itself: producers, groups, replication and the requests
# its settings make, at each trial's rate.
WORKLOAD_SPECS = (
    Spec(CPU_WORKLOAD, "producer", False, "cores", "broker_cores", {IDLE: _ONE, KRECORDS: _KRECORDS}, least=2),
    Spec(CLIENT_WORKLOAD, "producer", False, "cores", "client_cores", {IDLE: _ONE, KRECORDS: _KRECORDS}, broker=False,
         least=2),
    Spec(LOOP_WORKLOAD, "producer", False, "cores", "loop_cores", {IDLE: _ONE, KRECORDS: _KRECORDS}, broker=False,
         least=2),
    Spec(HOST_WORKLOAD, "producer", False, "cores", "host_cores", {IDLE: _ONE, KRECORDS: _KRECORDS}, broker=False,
         least=2),
)


def fitted(records: pd.DataFrame, run: str) -> Costs:
    """Every cost the run's ``records`` can give, and, for each they cannot, why (one line each)."""
    table = points(records)
    found: dict[tuple[str, str], Cost] = {}
    missing: dict[tuple[str, str], str] = {}
    if table.empty:
        raise KperfError(f"run {run} holds no valid producer or consumer record of {', '.join(ALONE)}: nothing to fit costs on")
    for spec in SPECS:
        mine = speaking(table, spec)
        codecs = sorted(set(table.loc[table["role"] == spec.role, "codec"])) if spec.by_codec else [""]
        for codec in codecs:
            group = mine[mine["codec"] == codec] if spec.by_codec else mine
            key = (spec.name, codec)
            try:
                if group.empty:
                    raise KperfError(f"every {spec.role} point{' with compression.type ' + codec if codec else ''} was "
                                     "limited by the load generator (it measured kperf, not the brokers)")
                found[key] = fit_spec(spec, group, codec)
            except KperfError as exc:
                missing[key] = str(exc)
    producers = table[table["role"] == "producer"]
    trials_table = workload_points(records)
    for workload, trials in trials_table.groupby("workload") if not trials_table.empty else []:
        for spec in WORKLOAD_SPECS:
            try:
                found[(spec.name, str(workload))] = fit_spec(spec, trials, str(workload))
            except KperfError as exc:
                missing[(spec.name, str(workload))] = str(exc)
    return Costs(found, _ceilings(table), missing, run, tuple(sorted(set(producers["codec"]))),
                 tuple(sorted({int(rf) for rf in producers["rf"]})))


def speaking(table: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """The points of ``table`` (:func:`points`) that may speak for ``spec``'s cost."""
    mine = table[table["role"] == spec.role]
    if spec.records_alone:
        return mine
    if spec.broker:
        return mine[mine["limit"] != limits.LOAD_GENERATOR]
    return mine[~mine["paced"]]  # a paced client waits between records: what it spent is not what a record costs


def fit_spec(spec: Spec, group: pd.DataFrame, variant: str) -> Cost:
    """``spec``'s cost fitted on the points of ``group`` that recorded its figure and its features."""
    names = list(spec.features)
    told = np.column_stack([group[spec.figure].to_numpy(dtype=float)]
                           + [spec.features[n](group).to_numpy(dtype=float) for n in names])
    usable = group[np.isfinite(told).all(axis=1)]
    if usable.empty:
        raise KperfError(spec.unrecorded)
    x = np.column_stack([spec.features[n](usable).to_numpy(dtype=float) for n in names])
    y = usable[spec.figure].to_numpy(dtype=float)
    # Where the points cannot tell every feature apart (one record size, so a record's overhead is one constant;
    # replication factor 1 alone, so no follower fetches), the last features are left out until they can.
    while True:
        try:
            model = fit(names, x[:, :len(names)], y)
            break
        except KperfError:
            if len(names) <= spec.least:
                raise
            names = names[:-1]
    sizes, rfs = usable["record_size"], usable["rf"]
    return Cost(spec.name, variant, spec.unit, model, tuple(sorted(set(usable["experiment"]))),
                (int(sizes.min()), int(sizes.max())), (int(rfs.min()), int(rfs.max())))


def _ceilings(table: pd.DataFrame) -> dict[str, Ceiling]:
    """Per role, what one partition carried (unpaced points at one partition)."""
    found = {}
    for role in ("producer", "consumer"):
        one = table[(table["role"] == role) & (table["partitions"] == 1) & ~table["paced"]
                    & np.isfinite(table["mib_per_s"].astype(float))]
        if one.empty:
            continue
        values = one["mib_per_s"].to_numpy(dtype=float)
        low, high, _ = median_interval(values)
        found[role] = Ceiling(role, float(np.median(values)), low, high, len(values),
                              bool((one["limit"] == limits.LOAD_GENERATOR).any()))
    return found


def broker_cores(row: Mapping[str, object]) -> float:
    """The brokers' cores over a unit: kperf's samples of their processes, else their JVMs' own (the exporters)."""
    sampled = _number(row, "res.broker_cpu_pct") / 100
    return sampled if math.isfinite(sampled) else _number(row, broker_columns.CPU_CORES)


def _codec(value: object) -> str:
    """A record's compression.type: none where the point left it unset."""
    return str(value) if isinstance(value, str) and value else NO_CODEC


def _number(row: Mapping[str, object], key: str) -> float:
    value = row.get(key)
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number

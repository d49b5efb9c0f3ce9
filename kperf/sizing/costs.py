"""A run's measured costs, as :mod:`kperf.sizing.fitting` fits them and a plan reads them: their names, each
cost with the points it used, the per-partition ceilings, and what is missing and why. Plain records: a plan from
cached costs (:mod:`kperf.sizing.cache`) loads no numerical library."""


from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kperf.errors import KperfError
from kperf.sizing.linear import LinearCost

NO_CODEC = "none"
# Feature names, shared by the fits and the plan that fills them from a workload.
WRITTEN, REPLICATED, READ = "MiB/s written to replicas", "MiB/s replicated to followers", "MiB/s read"
IDLE = "the measured brokers idle"
PRODUCE_REQUESTS, FOLLOWER_FETCHES = "thousand produce requests/s", "thousand follower fetches/s"
CONSUMER_FETCHES = "thousand consumer fetches/s"
RECORDS, KRECORDS = "million records/s", "thousand records/s of the workload"
KRECORDS_WRITTEN = "thousand records/s written to replicas"  # a record's overhead on disk: headers, batches, index
PER_BYTE, PER_RECORD = "each byte sent", "1 / record bytes"  # log bytes per byte: a share of the bytes, and a record's overhead
# The costs' names: a plan asks for them by these.
CPU_WRITE, CPU_READ = "broker CPU, writing", "broker CPU, reading"
CPU_WORKLOAD = "broker CPU, this workload"  # by workload name: its capacity trials, requests and all
CLIENT_WORKLOAD = "load host CPU, this workload"  # its load processes in those trials
LOOP_WORKLOAD = "busiest load process CPU, this workload"  # the one of them nearest its one core's limit
HOST_WORKLOAD = "host CPU, this workload"  # the whole host's, as kperf's host-CPU limit rule reads it
DISK_WRITE, LOG_BYTES = "disk written", "log bytes kept"
NETWORK_IN, NETWORK_OUT_REPLICATION, NETWORK_OUT_READ = "network in", "network out to followers", "network out to consumers"
CLIENT_PRODUCE, CLIENT_CONSUME = "load host CPU, producing", "load host CPU, consuming"


@dataclass(frozen=True)
class Cost:
    """One fitted cost: ``model`` predicts ``unit`` of ``name`` from its features, fitted on these experiments'
    points, at these record sizes and replication factors (beyond them a prediction extrapolates)."""

    name: str
    variant: str  # what it holds for: the producers' compression.type, a workload's name, or "" for every one
    unit: str
    model: LinearCost
    experiments: tuple[str, ...]
    record_sizes: tuple[int, int]  # (smallest, largest) measured
    replication_factors: tuple[int, int]


@dataclass(frozen=True)
class Ceiling:
    """The most one partition carried (MiB/s): the median of the points at one partition, with its interval;
    ``at_least`` when the load generator limited them (the partition can carry more)."""

    role: str
    mib_per_s: float
    low: float
    high: float
    points: int
    at_least: bool


@dataclass(frozen=True)
class Costs:
    """A run's fitted costs by (name, variant), its per-partition ceilings by role, and why a cost is missing."""

    fitted: Mapping[tuple[str, str], Cost]
    ceilings: Mapping[str, Ceiling]
    missing: Mapping[tuple[str, str], str]  # (name, variant) -> why it could not be fitted
    run: str

    def get(self, name: str, variant: str = "") -> Cost:
        """The cost ``name`` for ``variant`` (a codec, a workload), or a one-line error naming it and why it is
        missing."""
        key = (name, variant)
        if key in self.fitted:
            return self.fitted[key]
        why = self.missing.get(key, "no measurement of it")
        raise KperfError(f"run {self.run} cannot give the cost '{name}'{' for ' + variant if variant else ''}: {why}")

    codecs: tuple[str, ...] = ()  # the producers' codecs the run measured
    replication_factors: tuple[int, ...] = ()  # and their replication factors

    def check(self, codec: str, replication_factor: int) -> None:
        """Refuse, in one line, a topic the run cannot speak for: a codec it never measured, or a replication
        factor when it measured one other alone (how the cost grows with it is then unknown)."""
        if codec not in self.codecs:
            raise KperfError(f"run {self.run} measured no producer with compression.type {codec} (it measured "
                             f"{', '.join(self.codecs) or 'no producer'}): no cost of writing {codec} records")
        if len(self.replication_factors) == 1 and replication_factor not in self.replication_factors:
            raise KperfError(f"run {self.run} measured replication factor {self.replication_factors[0]} alone: "
                             f"it cannot tell what replication factor {replication_factor} costs")

"""Brokers, disk, partitions and load hosts for a target workload, from a run's fitted costs: pure arithmetic.

For each resource, the workload's use is predicted from the measured costs
(:mod:`kperf.sizing.costs`) and divided by what one broker offers at the target
utilisation; the brokers needed are the most any resource asks (the binding
one), and at least the replication factor. With one broker down the rest must
carry everything: one broker more than the binding resource asks. Each count
comes with the interval of its cost's prediction, and is flagged as
extrapolation when the workload lies outside what was measured (its bytes,
records, record size or replication factor).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kperf import limits
from kperf.errors import KperfError
from kperf.sizing import costs as c
from kperf.sizing import peers
from kperf.sizing.broker import Broker
from kperf.sizing.costs import Costs
from kperf.sizing.linear import Prediction

MIB = 2**20
GIB = 2**30
UTILISATION = peers.MSK_CPU_TARGET  # the share of a broker's cores, disk and network a plan fills
DISK_FILL = 0.85  # the share of a broker's disk its logs may fill (MSK alarms at 85%)
LOAD_HOST_BUSY = limits.BUSY  # the share of a load host's cores kperf's loops may use before they limit what they measure


@dataclass(frozen=True)
class Topic:
    """One topic of the target workload, as a plan needs it."""

    name: str
    records_per_s: float  # at the peak
    record_bytes: float  # mean
    replication_factor: int
    partitions: int
    groups: int  # consumer groups reading every record
    codec: str  # the producers' compression.type
    daily_bytes: float  # sent in a day
    retention_hours: float | None = None

    @property
    def mib_per_s(self) -> float:
        return self.records_per_s * self.record_bytes / MIB


@dataclass(frozen=True)
class Need:
    """What one resource asks: the use (its unit) with its interval, the brokers it needs, and how."""

    resource: str
    use: float
    low: float
    high: float
    unit: str
    per_broker: float | None  # what one broker offers of it (None: not given)
    brokers: float | None  # use / per_broker (None: not answered)
    brokers_low: float | None
    brokers_high: float | None
    formula: str
    extrapolated: bool
    note: str = ""


@dataclass(frozen=True)
class Sizing:
    """The answer: each resource's need, the brokers (binding resource, interval), degraded, disk, partitions,
    replicas per broker, load hosts, and the peers' rules beside it."""

    broker: Broker
    needs: tuple[Need, ...]
    brokers: int
    brokers_low: int
    brokers_high: int
    binding: str
    degraded: int
    degraded_low: int
    degraded_high: int
    disk_gib_per_broker: float | None
    partitions: tuple[tuple[str, int, int | None, str], ...]  # (topic, planned, needed, formula and flag)
    replicas_per_broker: float
    replicas_cap: int
    load_hosts: int
    load_host_cores: float
    load_cores: float
    peers: tuple[peers.Answer, ...]
    run: str

    @property
    def extrapolated(self) -> tuple[str, ...]:
        return tuple(n.resource for n in self.needs if n.extrapolated)


def size(topics: tuple[Topic, ...], costs: Costs, broker: Broker, host_cores: float,
         utilisation: float = UTILISATION, workload: str = "") -> Sizing:
    """The plan for ``topics`` on brokers like ``broker``, from ``costs``: a topic the run cannot speak for (a codec
    or replication factor it never measured) is refused in one line; a resource whose cost the run lacks is left
    unanswered, saying why."""
    for topic in topics:
        costs.check(topic.codec, topic.replication_factor)
    cpu = _cpu(topics, costs, workload)
    disk = _sum(topics, costs, lambda t: [
        (c.DISK_WRITE, t.codec, [t.mib_per_s * t.replication_factor, t.records_per_s * t.replication_factor / 1000], 1)])
    net_in = _sum(topics, costs, lambda t: [(c.NETWORK_IN, t.codec, [t.mib_per_s * t.replication_factor], 1)])
    net_out = _sum(topics, costs, lambda t: [
        (c.NETWORK_OUT_REPLICATION, t.codec, [t.mib_per_s * (t.replication_factor - 1)], 1),
        (c.NETWORK_OUT_READ, "", [t.mib_per_s], t.groups)])
    clients = _clients(topics, costs, workload)
    # A NIC is full duplex: the busier direction binds; either one unknown leaves the network unanswered.
    network, direction = net_in, "in"
    if isinstance(net_out, str) or (isinstance(net_in, Prediction) and net_out.value > net_in.value):
        network, direction = net_out, "out"
    if isinstance(net_in, str):
        network = net_in
    needs = (
        _need("CPU", cpu, "cores", broker.cores * utilisation, "cores",
              f"predicted broker cores / ({broker.cores:g} cores x {utilisation:.0%})"),
        _need("disk throughput", disk, "MiB/s", _times(broker.disk_mib_s, utilisation), "disk_mib_s",
              f"predicted disk MiB/s written / (disk_mib_s x {utilisation:.0%})"),
        _need("network", network, "MiB/s", _times(broker.network_mib_s, utilisation), "network_gbit_s",
              f"the busier direction ({direction}) / (network x {utilisation:.0%})"),
        _need("disk space", _kept(topics, costs), "GiB", _times(broker.disk_gib, DISK_FILL), "disk_gib",
              f"a day's bytes x retention x rf x log bytes per byte / (disk_gib x {DISK_FILL:.0%})"),
    )
    answered = [n for n in needs if n.brokers is not None]
    rf = max(t.replication_factor for t in topics)
    binding = max(answered, key=lambda n: n.brokers or 0.0, default=None)
    need = binding.brokers or 0.0 if binding is not None else 0.0
    count = max(_whole(need), rf)
    # An interval a fit cannot give (no freedom left: as many points as costs) is the count itself.
    low_need = max((_told(n.brokers_low, n.brokers or 0.0) for n in answered), default=0.0)
    high_need = max((_told(n.brokers_high, n.brokers or 0.0) for n in answered), default=0.0)
    low, high = max(_whole(low_need), rf), max(_whole(high_need), rf)
    space = needs[-1]
    replicas = sum(t.partitions * t.replication_factor for t in topics)
    load_cores = clients.value if isinstance(clients, Prediction) else math.nan
    return Sizing(
        broker=broker, needs=needs, brokers=count, brokers_low=low, brokers_high=high,
        binding=binding.resource if binding is not None and _whole(need) >= rf else "the replication factor",
        degraded=_degraded(need, rf), degraded_low=_degraded(low_need, rf), degraded_high=_degraded(high_need, rf),
        disk_gib_per_broker=None if math.isnan(space.use) else space.use / count,
        partitions=tuple(_partitions(t, costs) for t in topics),
        replicas_per_broker=replicas / count, replicas_cap=peers.msk_partitions_per_broker(broker.cores),
        load_hosts=max(1, _whole(load_cores / (host_cores * LOAD_HOST_BUSY)))
        if math.isfinite(load_cores) and host_cores > 0 else 0,
        load_host_cores=host_cores, load_cores=load_cores,
        peers=_peers(topics, broker), run=costs.run,
    )


def _clients(topics: tuple[Topic, ...], costs: Costs, workload: str) -> Prediction | str:
    """kperf's load processes' cores for the workload: from its own capacity trials where given (its paced loops,
    its groups, at its settings), else from unpaced points' cost per record."""
    try:
        cost = costs.get(c.CLIENT_WORKLOAD, workload)
    except KperfError:
        return _sum(topics, costs, lambda t: [(c.CLIENT_PRODUCE, "", [t.records_per_s / 1e6], 1),
                                              (c.CLIENT_CONSUME, "", [t.records_per_s / 1e6], t.groups)])
    predicted = cost.model.predict([1.0, sum(t.records_per_s for t in topics) / 1000])
    return Prediction(predicted.value, predicted.low, predicted.high, predicted.extrapolated or _unlike(cost, topics))


def _degraded(need: float, rf: int) -> int:
    """Brokers such that, one down, the others carry ``need`` brokers' worth (one at least) and a topic's replicas."""
    return max(max(_whole(need), 1) + 1, rf)


def _told(bound: float | None, otherwise: float) -> float:
    return bound if bound is not None and math.isfinite(bound) else otherwise


_whole = peers.whole


Term = tuple[str, str, list[float], float]  # (cost, codec, its features, times: groups reading, or GiB kept)


def _sum(topics: tuple[Topic, ...], costs: Costs, terms: Callable[[Topic], list[Term]]) -> Prediction | str:
    """The predicted use summed over topics and their terms, interval bounds summed (each cost's own fit); or why
    a cost it needs is missing."""
    value = low = high = 0.0
    outside = False
    fits: list[str] = []
    for topic in topics:
        for name, codec, x, times in terms(topic):
            if times == 0 or not any(x):  # nothing of it asked (no group reads; rf 1 replicates nothing)
                continue
            try:
                cost = costs.get(name, codec)
            except KperfError as exc:
                return str(exc)
            goodness = "" if math.isnan(cost.model.r2) else f", R² {cost.model.r2:.2f}"
            fits.append(f"{cost.model.points} points of {', '.join(cost.experiments)}{goodness}")
            predicted = cost.model.predict(x[: len(cost.model.features)])  # a fit that fell back to the first feature
            value, low, high = value + times * predicted.value, low + times * predicted.low, high + times * predicted.high
            outside = outside or predicted.extrapolated or not (
                cost.record_sizes[0] <= topic.record_bytes <= cost.record_sizes[1]
                and cost.replication_factors[0] <= topic.replication_factor <= cost.replication_factors[1])
    return Prediction(value, low, high, outside, "; ".join(dict.fromkeys(fits)))


def _cpu(topics: tuple[Topic, ...], costs: Costs, workload: str) -> Prediction | str:
    """The brokers' cores for the whole workload at its peak, from its own capacity trials: its CPU rests on the
    requests its settings make (batching, the followers' fetches), which only a run of it measures."""
    try:
        cost = costs.get(c.CPU_WORKLOAD, workload)
    except KperfError:
        return (f"the brokers' CPU rests on the requests this workload's settings make (its batching, its followers' "
                f"fetches): give --from a capacity run of workload {workload!r} too (kperf capacity, or kperf study "
                "--workload)")
    rate = sum(t.records_per_s for t in topics)
    predicted = cost.model.predict([1.0, rate / 1000])
    return Prediction(predicted.value, predicted.low, predicted.high, predicted.extrapolated or _unlike(cost, topics),
                      f"{cost.model.points} trials of its capacity run (R² {cost.model.r2:.2f})")


def _unlike(cost: c.Cost, topics: tuple[Topic, ...]) -> bool:
    """Whether ``topics`` lie outside the record sizes or replication factors ``cost`` was measured at (a workload
    file edited since its capacity run, under the same name)."""
    return not all(cost.record_sizes[0] <= round(t.record_bytes) <= cost.record_sizes[1]
                   and cost.replication_factors[0] <= t.replication_factor <= cost.replication_factors[1] for t in topics)


def _times(figure: float | None, share: float) -> float | None:
    return None if figure is None else figure * share


def _need(resource: str, use: Prediction | str | None, unit: str, per_broker: float | None, figure: str,
          formula: str) -> Need:
    """What ``resource`` asks, in brokers offering ``per_broker`` each; unanswered when the use or the broker's
    ``figure`` is unknown."""
    if use is None:
        return Need(resource, math.nan, math.nan, math.nan, unit, per_broker, None, None, None, formula, False,
                    "the workload gives no retention_hours")
    if isinstance(use, str):
        return Need(resource, math.nan, math.nan, math.nan, unit, per_broker, None, None, None, formula, False, use)
    how = f"{formula}; fitted on {use.basis}"
    if per_broker is None:
        return Need(resource, use.value, use.low, use.high, unit, None, None, None, None, how, use.extrapolated,
                    f"the broker's {figure} is not given")
    return Need(resource, use.value, use.low, use.high, unit, per_broker, use.value / per_broker,
                use.low / per_broker, use.high / per_broker, how, use.extrapolated)


def _kept(topics: tuple[Topic, ...], costs: Costs) -> Prediction | str | None:
    """The bytes the cluster keeps (GiB): a day's bytes x retention x replication factor x log bytes per byte;
    None when a topic's retention is not said."""
    if any(t.retention_hours is None for t in topics):
        return None
    return _sum(topics, costs, lambda t: [(c.LOG_BYTES, t.codec, [1.0, 1 / t.record_bytes],
                                           t.daily_bytes * (t.retention_hours or 0) / 24 * t.replication_factor / GIB)])


def _partitions(topic: Topic, costs: Costs) -> tuple[str, int, int | None, str]:
    """The topic's partitions against max(T / p, T / c), p and c the measured per-partition ceilings."""
    producer, consumer = costs.ceilings.get("producer"), costs.ceilings.get("consumer")
    if producer is None or consumer is None:
        return topic.name, topic.partitions, None, "the run measured no point at one partition"
    needed = peers.partitions_needed(topic.mib_per_s, producer.mib_per_s, consumer.mib_per_s)
    flag = " (at most: the load generator limited a partition's ceiling)" if producer.at_least or consumer.at_least else ""
    return (topic.name, topic.partitions, needed,
            f"max(T / p, T / c) with p = {producer.mib_per_s:.1f} and c = {consumer.mib_per_s:.1f} MiB/s a partition{flag};"
            f" {peers.PARTITIONS_RULE}")


def _peers(topics: tuple[Topic, ...], broker: Broker) -> tuple[peers.Answer, ...]:
    """The peers' rules for the same workload (those whose broker figures are given)."""
    produce = sum(t.mib_per_s for t in topics) * MIB / 1e6
    consume = sum(t.mib_per_s * t.groups for t in topics) * MIB / 1e6
    retention = max((t.retention_hours or 0) for t in topics) * 3600
    asked = peers.Asked(produce, consume / produce if produce else 0.0, max(t.replication_factor for t in topics),
                        sum(t.partitions for t in topics), retention, broker.cores,
                        broker.disk_mib_s * MIB / 1e6 if broker.disk_mib_s else math.nan,
                        (broker.network_mib_s or math.nan) * MIB / 1e6, sum(t.daily_bytes for t in topics) / 1e6,
                        broker.disk_gib * GIB / 1e9 if broker.disk_gib else math.nan)
    answers = [peers.google(asked)]
    if broker.disk_mib_s and broker.network_gbit_s:
        answers = [peers.msk(asked), *answers, peers.redpanda(asked)]
    return tuple(answers)

"""The managed services' published sizing rules, with their own constants, for a plan to show beside kperf's.

Each rule is written as its source gives it (units too: these guides count MB/s,
10**6 bytes), takes the workload as they ask it, and answers with the formula
behind each number. None of them knows the user's hardware, Kafka release,
record size or codec: that is what kperf's measured costs replace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MSK_RIGHT_SIZING = ("https://aws.amazon.com/blogs/big-data/best-practices-for-right-sizing-your-apache-kafka-clusters-"
                    "to-optimize-performance-and-cost/")
MSK_BEST_PRACTICES = "https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html"
GOOGLE_SIZING = "https://cloud.google.com/managed-service-for-apache-kafka/docs/plan-cluster-size"
REDPANDA_SIZING = "https://docs.redpanda.com/current/deploy/redpanda/manual/sizing/"
PARTITIONS_RULE = "https://www.confluent.io/blog/how-choose-number-topics-partitions-kafka-cluster/"

MSK_STORAGE_MARGIN = 0.2  # "Add 20% headroom"
MSK_ZONES = 3  # brokers are spread evenly over the zones: a multiple of them
MSK_CPU_TARGET = 0.60  # "maintain the total CPU utilization for your brokers ... under 60%"
# Recommended partition replicas per broker (leaders and followers) by MSK instance size, as its best practices
# tabulate them: (vCPUs up to, replicas). kperf maps a broker to the row of its cores.
MSK_PARTITIONS_PER_BROKER = ((2, 1000), (4, 1000), (8, 2000), (math.inf, 4000))
GOOGLE_MB_PER_VCPU = 20.0  # "The estimated capacity of a single vCPU in a single zone is 20 MBps"
GOOGLE_READ_WEIGHT = 4.0  # "read bandwidth is 4 times more efficient to process than write bandwidth"
GOOGLE_UTILISATION = 0.5  # "start with a utilization target of 50%"
GOOGLE_MIN_VCPU = 3
GOOGLE_MAX_VCPU_PER_BROKER = 15
GOOGLE_GIB_PER_VCPU = 4
REDPANDA_MB_PER_CORE = 100.0  # "A general recommendation is to have 100 MB/sec for each core"
REDPANDA_GB_PER_CORE = 2.0  # "a minimum of 2 GB memory for each CPU core"
REDPANDA_MB_PER_REPLICA = 2.0  # "a minimum of 2 MB of memory for each topic partition replica"


@dataclass(frozen=True)
class Line:
    """One number of a rule's answer, and the formula that gives it."""

    what: str
    value: float
    unit: str
    formula: str


@dataclass(frozen=True)
class Answer:
    """A rule's brokers for the workload (None where the rule gives no count), its lines, and its source."""

    rule: str
    brokers: int | None
    lines: tuple[Line, ...]
    source: str


@dataclass(frozen=True)
class Asked:
    """The workload as the guides ask it: MB/s produced at peak, consumer groups reading all of it, the
    replication factor, partitions, retention, and the broker's figures the rules divide by."""

    produce_mb_s: float
    groups: float  # consumer groups reading everything (bytes-weighted over topics)
    replication_factor: int
    partitions: int
    retention_s: float
    broker_cores: float
    broker_disk_mb_s: float
    broker_network_mb_s: float
    daily_mb: float = 0.0  # MB produced in a day
    broker_disk_gb: float = math.nan  # a broker's storage

    @property
    def stored_gb(self) -> float:
        """AWS's storage rule: ingress x retention x RF, plus 20% headroom."""
        return storage_bytes(self.daily_mb * 1e6, self.retention_s / 86_400, self.replication_factor,
                             margin=MSK_STORAGE_MARGIN) / 1e9

    @property
    def consume_mb_s(self) -> float:
        return self.produce_mb_s * self.groups


def whole(count: float) -> int:
    """The whole units that hold ``count`` (a float's last digits do not add one)."""
    return math.ceil(round(count, 9))


def round_up_to(count: float, multiple: int) -> int:
    """The smallest multiple of ``multiple`` at least ``count`` (and at least one of it)."""
    return max(multiple, multiple * whole(count / multiple))


def msk_write_io(produce_mb_s: float, replication_factor: int) -> float:
    """MSK: a cluster's writes to storage, "ingress x RF"."""
    return produce_mb_s * replication_factor


def msk_partitions_per_broker(cores: float) -> int:
    """MSK's recommended partition replicas per broker for an instance of ``cores`` vCPUs."""
    return next(cap for up_to, cap in MSK_PARTITIONS_PER_BROKER if cores <= up_to)


def msk(asked: Asked) -> Answer:
    """AWS MSK, Equation 1 of its right-sizing post: the cluster's throughput is bounded by each broker's storage
    throughput times brokers / r and its network throughput times brokers / (consumer groups + r - 1); brokers a
    multiple of the zones; partition replicas per broker under the best practices' cap."""
    r = asked.replication_factor
    storage = msk_write_io(asked.produce_mb_s, r) / asked.broker_disk_mb_s
    network = asked.produce_mb_s * (asked.groups + r - 1) / asked.broker_network_mb_s
    space = asked.stored_gb / asked.broker_disk_gb if asked.retention_s and asked.broker_disk_gb > 0 else 0.0
    brokers = round_up_to(max(storage, network, space, r), MSK_ZONES)
    cap = msk_partitions_per_broker(asked.broker_cores)
    replicas = asked.partitions * r / brokers
    return Answer("AWS MSK", brokers, (
        Line("brokers for storage throughput", storage, "brokers", "ingress x r / storage MB/s per broker"),
        Line("brokers for network throughput", network, "brokers",
             "ingress x (consumer groups + r - 1) / network MB/s per broker"),
        Line("brokers for storage size", space, "brokers",
             "ingress x retention x r + 20% / storage GB per broker (AWS's MSK sizing guide)"),
        Line("partition replicas per broker", replicas, f"of {cap} recommended", "partitions x r / brokers"),
    ), MSK_RIGHT_SIZING + " ; " + MSK_BEST_PRACTICES)


def google_write_equivalent(produce_mb_s: float, consume_mb_s: float, replicas: int) -> float:
    """Google: write bandwidth (produce x replicas) plus a quarter of the read bandwidth (consume plus produce x
    (replicas - 1), the followers' fetches)."""
    write = produce_mb_s * replicas
    read = consume_mb_s + produce_mb_s * (replicas - 1)
    return write + read / GOOGLE_READ_WEIGHT


def google_vcpus(write_equivalent_mb_s: float, utilisation: float = GOOGLE_UTILISATION) -> int:
    """Google: ceiling(write-equivalent / 20 MBps / utilisation), at least 3 vCPUs."""
    return max(GOOGLE_MIN_VCPU, whole(write_equivalent_mb_s / GOOGLE_MB_PER_VCPU / utilisation))


def google(asked: Asked) -> Answer:
    """Google Cloud's Managed Service for Apache Kafka: vCPUs from the write-equivalent rate, 4 GiB each; brokers
    as those vCPUs over the broker's cores (at most 15 a broker)."""
    equivalent = google_write_equivalent(asked.produce_mb_s, asked.consume_mb_s, asked.replication_factor)
    vcpus = google_vcpus(equivalent)
    brokers = math.ceil(vcpus / min(asked.broker_cores, GOOGLE_MAX_VCPU_PER_BROKER))
    return Answer("Google Managed Kafka", max(brokers, asked.replication_factor), (
        Line("write-equivalent rate", equivalent, "MB/s",
             "produce x replicas + (consume + produce x (replicas - 1)) / 4"),
        Line("vCPUs", vcpus, "vCPUs", "ceiling(write-equivalent / 20 MBps / 50%), at least 3"),
        Line("memory", vcpus * GOOGLE_GIB_PER_VCPU, "GiB", "4 GiB per vCPU"),
    ), GOOGLE_SIZING)


def redpanda_network(produce_mb_s: float, consume_mb_s: float, replication_factor: int) -> float:
    """Redpanda: the cluster's network, as its worked examples compute it: writes x RF + reads."""
    return produce_mb_s * replication_factor + consume_mb_s


def redpanda_memory_gb(partitions: int, replication_factor: int, brokers: int, cores: float) -> float:
    """Redpanda: a broker's memory, 2 GB per core and 2 MB per partition replica it holds."""
    return REDPANDA_GB_PER_CORE * cores + partitions * replication_factor * REDPANDA_MB_PER_REPLICA / 1000 / brokers


def redpanda(asked: Asked, tolerated: int = 1) -> Answer:
    """Redpanda's sizing guidelines: cores at 100 MB/s of writes each, the network for writes x RF + reads, then
    ``tolerated`` brokers more, so the cluster carries the full load with them down."""
    cores = asked.produce_mb_s / REDPANDA_MB_PER_CORE
    network = redpanda_network(asked.produce_mb_s, asked.consume_mb_s, asked.replication_factor)
    carrying = max(cores / asked.broker_cores, network / asked.broker_network_mb_s, asked.replication_factor)
    brokers = whole(carrying) + tolerated
    return Answer("Redpanda", brokers, (
        Line("cores", cores, "cores", "writes / 100 MB/s per core"),
        Line("network", network, "MB/s", "writes x RF + reads"),
        Line("memory per broker", redpanda_memory_gb(asked.partitions, asked.replication_factor, brokers,
                                                     asked.broker_cores), "GB",
             "2 GB per core + 2 MB per partition replica"),
    ), REDPANDA_SIZING)


def partitions_needed(target_mb_s: float, producer_mb_s: float, consumer_mb_s: float) -> int:
    """max(t / p, t / c): enough partitions for the target at one partition's producer and consumer throughput."""
    return whole(max(target_mb_s / producer_mb_s, target_mb_s / consumer_mb_s))


def storage_bytes(daily_bytes: float, retention_days: float, replication_factor: int, compression: float = 1.0,
                  margin: float = 0.0) -> float:
    """Daily volume x retention x RF / compression ratio, plus a margin (0.2: a fifth more)."""
    return daily_bytes * retention_days * replication_factor / compression * (1 + margin)

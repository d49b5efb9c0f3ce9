"""Share groups (KIP-932, "queues for Kafka"): share consumers 1..N on a topic of P partitions, N past P, beside a
consumer group of each count up to P (where it stops scaling); then, at one count, what answering costs: explicit
acceptance, a share of records released (delivered again) or rejected (archived), the group's record lock and
in-flight limit, and the consumers' ``max.poll.records``; and, at that count, the end-to-end latency of a share
group reading a paced producer as it sends, beside a consumer group's. No published study measured it: kperf's own.

The scaling and pricing points read a topic filled beforehand; the latency points read while a producer sends at
each of ``latency_rates`` for ``duration_s``. Each reads in a share group kperf makes, sets (from the earliest
offset, and the point's settings) and deletes (:mod:`kperf.kafka.share_groups`). The Java tool
(ShareConsumerPerformance) accepts every record implicitly and times none, so the explicit and latency points are
the Python client's alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kperf.errors import KperfError
from kperf.load import Sharing
from kperf.study.experiment import (
    Experiment,
    Panel,
    Param,
    Point,
    Settings,
    common,
    paced_records,
    point,
    register,
    workload,
)
from kperf.study.finding import Finding

if TYPE_CHECKING:
    import pandas as pd

LOCK = "share.record.lock.duration.ms"
LOCKS = "share.partition.max.record.locks"
POLL = "max.poll.records"
SCALING, PRICING, LATENCY = "scaling", "pricing", "latency"  # param.part: the three parts of the grid (param.priced:
# a pricing point, or the scaling one at the pricing count, implicit acceptance, which the pricing points are
# compared with)


def grid(s: Settings) -> list[Point]:
    return [*_scaling(s), *_pricing(s), *_latency(s)]


def _shared(s: Settings, part: str, consumers: int, sharing: Sharing, consumer: dict[str, Any] | None = None) -> Point:
    """A share group's point: ``consumers`` members answering as ``sharing`` says, its settings recorded."""
    answer = _answer(sharing, consumer or {})
    return point(f"{part}: share {answer}, consumers={consumers}",
                 workload(s, consumers=consumers, measure_producer=False, share=sharing, consumer_config=consumer or {}),
                 clients=("python",) if sharing.mode == "explicit" else (), part=part,
                 priced=part == PRICING or consumers == s["priced_consumers"], group_type="share", answer=answer,
                 **sharing.params())


def _answer(sharing: Sharing, consumer: dict[str, Any]) -> str:
    """A pricing point's label: its mode and whatever it changes from the defaults."""
    changed = [f"release {sharing.release:g}" if sharing.release else "", f"reject {sharing.reject:g}" if sharing.reject else "",
               *(f"{k.removeprefix('share.')}={v}" for k, v in sharing.group_settings.items()),
               *(f"{k}={v}" for k, v in consumer.items())]
    return ", ".join([sharing.mode, *filter(None, changed)])


def _scaling(s: Settings) -> list[Point]:
    """Share consumers at each count, and a consumer group at each count up to the partitions (ConsumerPerformance:
    one consumer; ShareConsumerPerformance runs any number of members in its one process)."""
    shared = [_shared(s, SCALING, c, Sharing()) for c in s["consumer_counts"]]
    grouped = [point(f"{SCALING}: consumer group, consumers={c}", workload(s, consumers=c, measure_producer=False),
                     clients=() if c == 1 else ("python",), part=SCALING, priced=False, group_type="consumer")
               for c in s["consumer_counts"] if c <= s["partitions"]]
    return shared + grouped


def _pricing(s: Settings) -> list[Point]:
    """At ``priced_consumers``: implicit acceptance (unless the scaling part measures it there) and explicit, then
    each release and reject share (explicit), each lock duration and in-flight limit (implicit), each
    ``max.poll.records``."""
    c = s["priced_consumers"]
    sharings = [*([] if c in s["consumer_counts"] else [Sharing()]), Sharing("explicit"),
                *(Sharing("explicit", release=r) for r in s["release_shares"] if r),
                *(Sharing("explicit", reject=j) for j in s["reject_shares"] if j),
                *(Sharing(group_settings={LOCK: ms}) for ms in s["lock_durations_ms"]),
                *(Sharing(group_settings={LOCKS: n}) for n in s["max_record_locks"])]
    return ([_shared(s, PRICING, c, sharing) for sharing in sharings]
            + [_shared(s, PRICING, c, Sharing(), {POLL: n}) for n in s["max_poll_records"]])


def _latency(s: Settings) -> list[Point]:
    """At ``priced_consumers`` (a consumer group: as many, up to the partitions), each group reading a producer paced
    at each of ``latency_rates`` as it sends: end-to-end latency, from each record's intended send time to its first
    delivery (the Python client: the Java tools time no record of a share group)."""
    c = s["priced_consumers"]
    points = []
    for rate in s["latency_rates"]:
        paced = {"records": paced_records(s, rate), "rate": rate, "concurrent": True}
        points += [
            point(f"{LATENCY}: share implicit, consumers={c}, rate={rate:g}",
                  workload(s, consumers=c, share=Sharing(), **paced), clients=("python",), part=LATENCY, priced=False,
                  group_type="share", answer=_answer(Sharing(), {}), duration_s=s["duration_s"], **Sharing().params()),
            point(f"{LATENCY}: consumer group, consumers={min(c, s['partitions'])}, rate={rate:g}",
                  workload(s, consumers=min(c, s["partitions"]), **paced), clients=("python",), part=LATENCY,
                  priced=False, group_type="consumer", duration_s=s["duration_s"]),
        ]
    return points


def rules(s: Settings) -> None:
    """Shares as a share consumer takes them; the consumer counts a consumer group compares at."""
    for r in s["release_shares"]:
        Sharing("explicit", release=r).check()
    for j in s["reject_shares"]:
        Sharing("explicit", reject=j).check()
    if not any(c <= s["partitions"] for c in s["consumer_counts"]):
        raise KperfError("parameter 'consumer_counts' of experiment 'share_groups': at least one count up to "
                         "'partitions', where a consumer group is measured beside the share group")


def analyze(results: pd.DataFrame) -> Finding:
    """How many share consumers deliver fastest on the topic's partitions (beside a consumer group), and what each
    way of answering costs, ranked, with deliveries per record."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf.analysis import findings, stats

    consumers = results[results["role"] == "consumer"]
    parts = []
    for client in findings.clients(consumers):
        mine = consumers[(consumers["param.client"] == client) & (consumers["param.part"] == SCALING)]
        for kind in ("share", "consumer"):
            rows = mine[mine["param.group_type"] == kind]
            if rows.empty:
                continue
            summary = stats.summarize(rows, ["param.consumers"])
            top = summary.loc[summary["median"].idxmax()]
            partitions = int(rows["param.partitions"].iloc[0])
            parts.append((f"A {kind} group ({client}) on {partitions} partitions: fastest measured at "
                          f"{int(top['param.consumers'])} consumers, {findings.interval(top)}.",
                          summary.assign(metric=f"{kind} group records/s", client=client)))
        paced = consumers[(consumers["param.client"] == client) & (consumers["param.part"] == LATENCY)]
        timed = paced.dropna(subset=["latency_e2e_p99_ms"]) if "latency_e2e_p99_ms" in paced else paced.iloc[0:0]
        for kind in ("share", "consumer"):
            rows = timed[timed["param.group_type"] == kind]
            if not rows.empty:
                steps, table = findings.latency_by_rate(rows)
                parts.append((f"End-to-end latency, a {kind} group ({client}) reading as the producer sends: {steps}.",
                              table.assign(metric=f"{kind} group end-to-end latency", client=client)))
        priced = consumers[(consumers["param.client"] == client) & consumers["param.priced"].eq(True)]
        for column, what, higher in (("records_per_s", "records/s", True),
                                     ("share_deliveries_per_record", "deliveries per record", False)):
            if len(priced) and column in priced and not priced[column].isna().all():
                parts.append(findings.ranking(priced, "param.answer", column, what, higher, client))
    return findings.tabled("share_groups", parts)


register(Experiment(
    name="share_groups",
    title="Share groups",
    question="How many share consumers deliver fastest on P partitions, what do a release and a longer lock cost, "
             "and what latency does sharing add?",
    order=95,
    params={
        **common("records", "record_size", "partitions", "replication_factor", "acks", "batch_size", "linger_ms"),
        "consumer_counts": Param(int, "share-consumer grid, past the partitions (a consumer group beside it up to them)",
                                 many=True, minimum=1),
        "priced_consumers": Param(int, "share consumers of the pricing points", minimum=1),
        "release_shares": Param(float, "shares of records released once, explicit acknowledgement (python)", many=True,
                                minimum=0, empty=True),
        "reject_shares": Param(float, "shares of records rejected (archived), explicit acknowledgement (python)",
                               many=True, minimum=0, empty=True),
        "lock_durations_ms": Param(int, f"{LOCK} grid (Kafka's default 30000; the brokers allow 15000-60000)",
                                   many=True, minimum=1000, empty=True),
        "max_record_locks": Param(int, f"{LOCKS} grid (Kafka's default 2000; the brokers allow 100-10000)", many=True,
                                  minimum=100, empty=True),
        "max_poll_records": Param(int, f"the share consumers' {POLL} grid", many=True, minimum=1, empty=True),
        "latency_rates": Param(float, "producer rates (records/s) a share group and a consumer group of "
                               "'priced_consumers' read as it sends: end-to-end latency (python)", many=True, minimum=1,
                               empty=True),
        "duration_s": Param(float, "seconds of load per latency point", minimum=0.1),
    },
    profiles={
        # Both clients once: more members than partitions, explicit acceptance, a release (tests/cluster: a reject).
        "smoke": {"clients": ["python", "java"], "partitions": 2, "records": 100_000, "consumer_counts": [1, 3],
                  "priced_consumers": 3, "release_shares": [0.1], "reject_shares": [], "lock_durations_ms": [], "max_record_locks": [],
                  "max_poll_records": [], "latency_rates": [2_000], "duration_s": 2.0},
        "quick": {"partitions": 2, "consumer_counts": [1, 2, 4], "priced_consumers": 4, "release_shares": [0.1],
                  "reject_shares": [0.05], "lock_durations_ms": [15_000], "max_record_locks": [],
                  "max_poll_records": [], "latency_rates": [10_000], "duration_s": 6.0},
        # No published counterpart: S1's sizing (15 partitions, rf 3) with members past the partitions.
        "seed": {"partitions": 15, "replication_factor": 3, "consumer_counts": [1, 3, 6, 9, 15, 20, 30],
                 "priced_consumers": 15, "release_shares": [0.01, 0.1], "reject_shares": [0.01],
                 "lock_durations_ms": [15_000, 60_000], "max_record_locks": [500, 4000],
                 "max_poll_records": [100, 1000], "latency_rates": [10_000, 50_000], "duration_s": 60.0},
    },
    grid=grid,
    analyze=analyze,
    panels=(
        Panel("consumer", "param.consumers", "records_per_s", series=("param.client", "param.group_type"),
              where=(("param.part", SCALING),)),
        Panel("consumer", "param.answer", "records_per_s", categorical=True, where=(("param.priced", True),)),
        Panel("consumer", "param.answer", "share_deliveries_per_record", categorical=True,
              where=(("param.priced", True),)),
        Panel("consumer", "param.rate", "latency_e2e_p99_ms", series=("param.client", "param.group_type"), log_x=True,
              where=(("param.part", LATENCY),)),
    ),
    rules=rules,
    answer_where=(("param.part", SCALING), ("param.group_type", "share")),
    # Its quick form took 4 min 36 s alone (docs/experiments.md), past the quick study's 20 minutes with the others:
    # the quick study leaves it out; `kperf study share_groups` runs it.
    whole_study=("smoke", "seed"),
))

"""Exactly-once's price (kperf's own; no published study swept it): a plain, an idempotent and a transactional
producer, transactions of each size in records (the Python client) or milliseconds (both clients: the Java tool's
--transaction-duration-ms); a share of aborted transactions read back read_committed and read_uncommitted, checked
by sequence number against the records that exist; and the end-to-end latency read_committed adds, a consumer
reading a paced transactional producer as it sends, read_committed against read_uncommitted (an idempotent producer's
first records wait for its producer id, which would weigh on its latency: the comparison is of one producer); and
read-process-write, the loop exactly-once exists for: a paced producer's topic processed in transactions that commit
the consumed offsets into a second topic, read read_committed as it is written, checked by sequence number.

Every producer sends with acks=all, so the three differ only in idempotence and transactions. The Java tool ends a
transaction by time only and aborts none, so the record-sized, abort and latency points are the Python client's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kperf.load import ISOLATION, ISOLATION_LEVELS, Transactions
from kperf.results import ABORTED_READ, MISSING
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

COST, ABORT, LATENCY, PROCESSED, VERSION = (  # param.part: the grid's parts
    "cost", "abort", "latency", "read-process-write", "version")
TRANSACTION_VERSION = "transaction.version"  # the cluster's feature the version part sets (KIP-890's 2: Kafka 4.0 on)
PLAIN, IDEMPOTENT = "plain", "idempotent"  # param.transaction of the producers that are not transactional
UNCOMMITTED, COMMITTED = ISOLATION_LEVELS


def label(rule: Transactions | None, idempotent: bool = True) -> str:
    """A producer's ``param.transaction``: plain, idempotent, or its transactions' size (and abort share)."""
    if rule is None:
        return IDEMPOTENT if idempotent else PLAIN
    size = f"{rule.records:,} records" if rule.records else f"{rule.ms:g} ms"
    return f"transactional, {size}" + (f", abort {rule.abort:g}" if rule.abort else "")


def _point(s: Settings, part: str, rule: Transactions | None, idempotent: bool = True,
           isolation: str | None = None, transaction_version: int | None = None, **varied: Any) -> Point:
    """A point of ``part``: a producer with acks=all, idempotent or not, ``rule``'s transactions; a consumer at
    ``isolation`` when given; at the cluster's ``transaction_version`` when given."""
    what = label(rule, idempotent)
    reader = {ISOLATION: isolation} if isolation else {}
    by_records = rule is not None and (rule.records > 0 or rule.abort > 0)
    version = {} if transaction_version is None else {"transaction_version": transaction_version}
    return point(
        f"{part}: {what}" + (f", {isolation}" if isolation else "") + (f", rate={varied['rate']:g}" if "rate" in varied else "")
        + (f", {TRANSACTION_VERSION}={transaction_version}" if transaction_version is not None else ""),
        workload(s, {"acks": "all", "enable.idempotence": idempotent}, transactions=rule, consumer_config=reader,
                 consumers=1 if isolation else 0, **varied),
        clients=("python",) if by_records or part not in (COST, VERSION) else (), part=part, transaction=what,
        **(rule or Transactions(ms=0)).params(), **version)


def _sized(s: Settings, per_transaction: int) -> int:
    """A record-sized point's records: ``records``, or ``max_transactions`` transactions' worth when fewer (a
    commit is a round trip to the coordinator and a marker in each partition: ten-record transactions of a 2,000,000
    record point would take hours)."""
    return min(s["records"], per_transaction * s["max_transactions"])


def grid(s: Settings) -> list[Point]:
    cost = [_point(s, COST, None, idempotent=False), _point(s, COST, None),
            *(_point(s, COST, Transactions(records=n), records=_sized(s, n)) for n in s["transaction_records"]),
            *(_point(s, COST, Transactions(ms=ms)) for ms in s["transaction_ms"])]
    aborting = Transactions(records=s["abort_records"], abort=s["abort_share"])
    # Its topic is read back at both isolation levels (kperf.drivers.aborted_reads).
    abort = [_point(s, ABORT, aborting, records=_sized(s, s["abort_records"]))]
    latency = []
    timed = Transactions(ms=s["latency_transaction_ms"])
    for rate in s["latency_rates"]:
        paced = {"records": paced_records(s, rate), "rate": rate, "concurrent": True}
        latency += [_point(s, LATENCY, timed, isolation=level, **paced) for level in ISOLATION_LEVELS]
    return cost + _versions(s, timed) + abort + latency + _processed(s, timed)


def _versions(s: Settings, timed: Transactions) -> list[Point]:
    """At each of ``transaction_versions``, the cluster's transaction.version set for the point (and back after), a
    producer in transactions of ``latency_transaction_ms``, both clients (a client speaks the newer protocol only
    where it knows it: KIP-890's EndTxn v5 and later)."""
    return [_point(s, VERSION, timed, features={TRANSACTION_VERSION: version}, transaction_version=version)
            for version in s["transaction_versions"]]


def _processed(s: Settings, timed: Transactions) -> list[Point]:
    """At each latency rate, an idempotent producer's topic processed (read-process-write, in transactions of
    ``latency_transaction_ms``) into a second topic that a read_committed consumer reads as it is written."""
    return [point(f"{PROCESSED}: {label(timed)}, rate={rate:g}",
                  workload(s, {"acks": "all", "enable.idempotence": True}, records=paced_records(s, rate), rate=rate,
                           concurrent=True, consumers=1, consumer_config={ISOLATION: COMMITTED}, processed=timed),
                  clients=("python",), part=PROCESSED, transaction=label(timed), **timed.params())
            for rate in s["latency_rates"]]


def rules(s: Settings) -> None:
    """The abort points' transactions as a producer takes them (records per transaction, a share below 1)."""
    Transactions(records=s["abort_records"], abort=s["abort_share"]).check()


def analyze(results: pd.DataFrame) -> Finding:
    """What each transaction size costs against an idempotent producer (and a plain one), with intervals; whether
    read_committed read no aborted record while read_uncommitted read them all; the end-to-end latency
    read_committed adds."""
    # pandas and scipy load here, when a run is analysed: planning a study never needs them.
    from kperf import steady
    from kperf.analysis import findings, stats

    parts = []
    producers = results[(results["role"] == "producer") & (results["param.part"] == COST)]
    for client in findings.clients(producers):
        mine = producers[producers["param.client"] == client]
        # Steady rates where every run has one: an idempotent producer's first records wait for its producer id
        # (440 ms here), a transactional one gets it before its clock starts (initialising its transactions).
        rated = "steady_records_per_s" if steady.steady_rates(mine) else "records_per_s"
        summary = stats.summarize(mine, ["param.transaction"], rated)
        if IDEMPOTENT not in set(summary["param.transaction"]):
            continue
        base = summary.set_index("param.transaction").loc[IDEMPOTENT]
        costs = "; ".join(
            f"{row['param.transaction']}: {findings.interval(row)} ({row['median'] / base['median']:.0%})"
            for _, row in summary.iterrows() if row["param.transaction"] != IDEMPOTENT)
        commit = mine.groupby("param.transaction")["txn_commit_ms_mean"].median().dropna() \
            if "txn_commit_ms_mean" in mine else None
        commits = (" A commit took " + ", ".join(f"{findings.number(v)} ms ({k})" for k, v in commit.items()) + "."
                   if commit is not None and len(commit) else "")
        parts.append((f"Exactly-once's price ({client}, {'steady' if rated != 'records_per_s' else 'whole-run'} "
                      f"rates): an idempotent producer sent {findings.interval(base)}; "
                      f"against it (median as a share of its) {costs}.{commits}",
                      summary.assign(metric="producer records/s", client=client)))
    parts += _versions_compared(results)
    parts += _aborts(results)
    consumers = results[(results["role"] == "consumer") & (results["param.part"] == LATENCY)]
    timed = consumers.dropna(subset=["latency_e2e_p99_ms"]) if "latency_e2e_p99_ms" in consumers else consumers.iloc[0:0]
    for (what, level), rows in timed.groupby(["param.transaction", f"param.{ISOLATION}"], sort=False):
        steps, table = findings.latency_by_rate(rows)
        parts.append((f"End-to-end latency, {what} producer, {level} consumer: {steps}.",
                      table.assign(metric=f"end-to-end latency, {what}, {level}", client="python")))
    parts += _processing(results)
    return findings.tabled("transactions", parts)


def _processing(results: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The read-process-write points: what the processor carried at each rate, and what the sink's read_committed
    consumer saw (end-to-end from the source's intended send, and the records missing or duplicated downstream)."""
    from kperf.analysis import findings

    rows = results[results["param.part"] == PROCESSED]
    processor, sink = rows[rows["role"] == "processor"], rows[rows["role"] == "consumer"]
    timed = sink.dropna(subset=["latency_e2e_p99_ms"]) if "latency_e2e_p99_ms" in sink else sink.iloc[0:0]
    if processor.empty or timed.empty:
        return []
    steps, table = findings.latency_by_rate(timed)
    kept = processor.groupby("param.rate")["records_per_s"].median()
    carried = "; ".join(f"{findings.spelled(rate)}/s: {findings.number(v)}" for rate, v in kept.items())
    lost, doubled = int(sink["missing"].sum()), int(sink["duplicated"].sum())
    verdict = ("every source record reached the sink once" if lost == doubled == 0 else
               f"{lost:,} source record(s) missing at the sink and {doubled:,} duplicated")
    return [(f"Read-process-write ({processor['param.transaction'].iloc[0]} transactions committing the source "
             f"offsets): the processor carried (median records/s) {carried}; the sink's read_committed consumer, "
             f"from each record's intended send at the source: {steps}; {verdict} (by sequence number, "
             f"{len(sink)} run(s)).", table.assign(metric="read-process-write end-to-end latency", client="python"))]


def _versions_compared(results: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The version points: each client's producer records/s and commit time at each transaction.version."""
    from kperf import steady
    from kperf.analysis import findings, stats

    rows = results[(results["role"] == "producer") & (results["param.part"] == VERSION)]
    parts = []
    for client in findings.clients(rows):
        mine = rows[rows["param.client"] == client]
        rated = "steady_records_per_s" if steady.steady_rates(mine) else "records_per_s"
        summary = stats.summarize(mine, ["param.transaction_version"], rated)
        commits = mine.groupby("param.transaction_version")["txn_commit_ms_mean"].median() \
            if "txn_commit_ms_mean" in mine else None
        said = "; ".join(
            f"{int(row['param.transaction_version'])}: {findings.interval(row)}"
            + (f", a commit {findings.number(commits[row['param.transaction_version']])} ms"
               if commits is not None and commits.notna().get(row["param.transaction_version"], False) else "")
            for _, row in summary.iterrows())
        parts.append((f"By the cluster's {TRANSACTION_VERSION} ({client}, {mine['param.transaction'].iloc[0]} "
                      f"transactions): {said}.", summary.assign(metric="producer records/s by transaction.version",
                                                                client=client)))
    return parts


def _aborts(results: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The abort points' check: the records of aborted transactions each isolation level read back, against those
    written, and the records each missed."""
    rows = results[(results["param.part"] == ABORT) & (results["role"] == "producer")]
    columns = ["aborted_records", *ABORTED_READ.values(), *MISSING.values()]
    if rows.empty or not set(columns) <= set(rows):
        return []
    total = rows[columns].sum(min_count=len(rows))  # a run without a figure leaves its total empty (NaN)
    said = "; ".join(f"{level} read {total[ABORTED_READ[level]]:,.0f} of them and missed {total[MISSING[level]]:,.0f} "
                     f"record(s) it was to read" for level in ISOLATION_LEVELS)
    # The aborted records exist (read_uncommitted read them all) and read_committed read none of them and every other.
    honest = (total[ABORTED_READ[UNCOMMITTED]] == total["aborted_records"] > 0 and total[MISSING[UNCOMMITTED]] == 0
              and total[ABORTED_READ[COMMITTED]] == 0 and total[MISSING[COMMITTED]] == 0)
    verdict = ("read_uncommitted read every aborted record; read_committed read every committed record and no "
               "aborted one" if honest else "NOT as isolation levels promise, or a run did not check: see the table")
    return [(f"Aborted transactions: {len(rows)} run(s) wrote {total['aborted_records']:,.0f} records in aborted "
             f"transactions; read back, {said} ({verdict}).",
             rows[["point", "repeat", *columns]].assign(metric="aborted records read back", client="python"))]


register(Experiment(
    name="transactions",
    title="Transactions (exactly-once)",
    question="What do idempotence and transactions cost in throughput, and what latency does read_committed add?",
    order=97,
    params={
        **common("records", "record_size", "partitions", "replication_factor", "batch_size", "linger_ms"),
        "transaction_records": Param(int, "records per transaction grid (python)", many=True, minimum=1, empty=True),
        "transaction_ms": Param(float, "milliseconds per transaction grid (both clients: ProducerPerformance's "
                                "--transaction-duration-ms)", many=True, minimum=0, above=True, empty=True),
        "max_transactions": Param(int, "transactions a record-sized point sends at most (its records are fewer then)",
                                  minimum=1),
        "abort_records": Param(int, "records per transaction at the abort point (python)", minimum=1),
        "abort_share": Param(float, "share of transactions aborted at the abort point, evenly spread; its topic is "
                             "read back read_committed and read_uncommitted", minimum=0),
        "latency_rates": Param(float, "producer rates (records/s) a consumer reads as it sends: end-to-end latency, "
                               "read_committed and not, and read-process-write (python)", many=True, minimum=1,
                               empty=True),
        "latency_transaction_ms": Param(float, "milliseconds per transaction at the latency points", minimum=0,
                                        above=True),
        "duration_s": Param(float, "seconds of load per latency point", minimum=0.1),
        "transaction_versions": Param(int, "the cluster's transaction.version grid (set for each point, back after; "
                                      "1: Kafka 3's protocol, 2: KIP-890's), transactions of latency_transaction_ms",
                                      many=True, minimum=0, empty=True),
    },
    profiles={
        # Both clients once, an abort share and one latency rate. 150,000 records: a second or more of each producer
        # here (32,587-128,965 records/s, 2026-11-28), where 20,000 had 10 of the 15 units measured again, larger.
        "smoke": {"clients": ["python", "java"], "records": 150_000, "partitions": 3, "replication_factor": 3,
                  "transaction_records": [1_000], "transaction_ms": [100], "max_transactions": 50, "abort_records": 1_000,
                  "abort_share": 0.2, "latency_rates": [1_000], "latency_transaction_ms": 100, "duration_s": 3.0,
                  "transaction_versions": [1, 2]},
        "quick": {"records": 200_000, "partitions": 3, "replication_factor": 3,
                  "transaction_records": [100, 1_000, 10_000], "transaction_ms": [10, 100], "max_transactions": 100,
                  "abort_records": 1_000,
                  "abort_share": 0.1, "latency_rates": [5_000], "latency_transaction_ms": 100, "duration_s": 6.0,
                  "transaction_versions": [1, 2]},
        # No published counterpart: S1's record size and replication, transactions from ten records to a second.
        "seed": {"records": 2_000_000, "record_size": 687, "partitions": 6, "replication_factor": 3,
                 "transaction_records": [10, 100, 1_000, 10_000, 100_000], "transaction_ms": [10, 100, 1_000],
                 "max_transactions": 500, "abort_records": 1_000, "abort_share": 0.1, "latency_rates": [10_000, 50_000],
                 "latency_transaction_ms": 100, "duration_s": 60.0, "transaction_versions": [1, 2]},
    },
    grid=grid,
    analyze=analyze,
    panels=(
        Panel("producer", "param.transaction", "records_per_s", categorical=True, where=(("param.part", COST),)),
        Panel("producer", "param.transaction", "latency_ack_p99_ms", categorical=True, where=(("param.part", COST),)),
        # (consumers read in the latency and read-process-write parts alone)
        Panel("consumer", "param.rate", "latency_e2e_p99_ms", series=("param.part", f"param.{ISOLATION}"), log_x=True),
        Panel("processor", "param.rate", "records_per_s", log_x=True),
    ),
    rules=rules,
    answer_where=(("param.part", COST),),
    # Named only under quick: the quick study's nine experiments already take about 20 minutes (docs/profiles.md).
    whole_study=("smoke", "seed"),
))

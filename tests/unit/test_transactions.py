"""A transactional producer's rule (kperf.load.Transactions) and what follows from it without a cluster: which
transactions are aborted, the sequence numbers a consumer must not read, the checks that refuse bad input, and
the experiment's grid."""

from __future__ import annotations

import numpy as np
import pytest

from kperf.drivers.ledger import SequenceLedger
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.drivers.stock_tools import StockTools
from kperf.drivers.transactions import readable, verified
from kperf.errors import KperfError
from kperf.kafka import features
from kperf.load import Transactions
from kperf.study import experiment, plan, profiles


@pytest.mark.parametrize(("rule", "named"), [
    (Transactions(), "one of them above 0 (got 0 records and 0 ms per transaction)"),
    (Transactions(records=10, ms=100), "one of them above 0 (got 10 records and 100 ms per transaction)"),
    (Transactions(records=-1), "one of them above 0"),
    (Transactions(records=10, abort=1.0), "aborted must be at least 0 and below 1, got 1"),
    (Transactions(records=10, abort=-0.1), "aborted must be at least 0 and below 1, got -0.1"),
    (Transactions(ms=100, abort=0.1), "aborted transactions need a number of records per transaction"),
])
def test_a_transaction_rule_a_producer_cannot_follow_is_refused_in_one_line(rule: Transactions, named: str) -> None:
    with pytest.raises(KperfError) as refused:
        ProducerSpec("127.0.0.1:1", "t", 100, records=1000, transactions=rule).check()
    assert named in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(("config", "named"), [
    ({"transactional.id": "mine"}, "leave transactional.id out"),
    ({"enable.idempotence": False}, "a transactional producer is idempotent"),
])
def test_settings_a_transactional_producer_makes_its_own_are_refused(config: dict[str, object], named: str) -> None:
    with pytest.raises(KperfError, match=named):
        ProducerSpec("127.0.0.1:1", "t", 100, records=1000, config=config, transactions=Transactions(ms=100)).check()


@pytest.mark.parametrize("share", [0.1, 0.2, 0.25, 0.5, 0.05])
def test_aborts_are_spread_evenly_one_in_every_so_many(share: float) -> None:
    rule = Transactions(records=10, abort=share)
    aborted = [k for k in range(1000) if rule.aborted(k)]
    assert len(aborted) == round(1000 * share)
    gaps = set(np.diff(aborted).tolist())
    assert gaps <= {int(1 / share), int(1 / share) + 1}  # evenly: every 1/share-th, give or take one


def test_no_transaction_is_aborted_without_a_share() -> None:
    rule = Transactions(records=10)
    assert not any(rule.aborted(k) for k in range(100)) and rule.aborted_ranges(0, 1000) == []


def test_the_aborted_ranges_are_whole_transactions_after_the_warm_up_the_last_one_short() -> None:
    rule = Transactions(records=4, abort=0.5)  # transactions 1, 3, 5: aborted
    assert rule.aborted_ranges(first=3, records=22) == [(7, 11), (15, 19), (23, 25)]


def test_read_committed_expects_only_the_committed_records_and_counts_aborted_ones_read() -> None:
    rule = Transactions(records=5, abort=0.5)  # sequences 5-9 and 15-19 of 20 aborted
    committed_only = SequenceLedger()
    kept = np.array([s for s in range(20) if not 5 <= s < 10 and not 15 <= s < 20])
    committed_only.add_many(np.zeros(len(kept), dtype=int), kept)
    spec = ConsumerSpec("b", "t", config={"isolation.level": "read_committed"}, written_by=rule, expected={0: 20})
    verification, read = verified(committed_only, spec)
    assert (verification.expected, verification.missing, read) == (10, 0, {"aborted_read": 0})
    everything = SequenceLedger()
    everything.add_many(np.zeros(20, dtype=int), np.arange(20))
    verification, read = verified(everything, spec)  # read_committed that read aborted records: said so
    assert (verification.missing, read["aborted_read"]) == (0, 10)
    uncommitted = ConsumerSpec("b", "t", written_by=rule, expected={0: 20})
    verification, read = verified(committed_only, uncommitted)  # read_uncommitted must read them all
    assert (verification.expected, verification.missing, read["aborted_read"]) == (20, 10, 0)


def test_a_read_committed_consumer_is_asked_for_the_committed_records_only() -> None:
    measured = {"aborted_records": 300}
    assert readable(1000, measured, {"isolation.level": "read_committed"}) == 700
    assert readable(1000, measured, {"isolation.level": "read_uncommitted"}) == readable(1000, measured, {}) == 1000


def test_the_java_tool_ends_transactions_by_time_and_aborts_none() -> None:
    java = StockTools()
    java.check_producer(ProducerSpec("b", "t", 100, records=1000, transactions=Transactions(ms=100)))
    for rule in (Transactions(records=100), Transactions(records=100, abort=0.1)):
        with pytest.raises(KperfError, match="with --client java a transaction ends by time only"):
            java.check_producer(ProducerSpec("b", "t", 100, records=1000, transactions=rule))


def test_a_transactional_producer_needs_the_clusters_transactions() -> None:
    keys = {need.key for need in features.for_producer({}, transactional=True)}
    assert {10, 22, 24, 26} <= keys  # FindCoordinator, InitProducerId, AddPartitionsToTxn, EndTxn
    assert 26 not in {need.key for need in features.for_producer({"enable.idempotence": "true"})}


SMOKE = profiles.parameters("transactions", "smoke")


def test_the_grid_compares_plain_idempotent_and_each_transaction_size_with_acks_all() -> None:
    points = experiment.get("transactions").points(SMOKE)
    cost = [p for p in points if p.params["part"] == "cost"]
    assert [p.params["transaction"] for p in cost] == ["plain", "idempotent", "transactional, 1,000 records",
                                                      "transactional, 100 ms"]
    assert all(p.workload.producer_config["acks"] == "all" for p in points)
    assert [p.workload.producer_config["enable.idempotence"] for p in cost] == [False, True, True, True]
    assert [p.workload.transactions for p in cost[2:]] == [Transactions(records=1000), Transactions(ms=100)]


def test_a_record_sized_point_sends_at_most_its_transactions_records() -> None:
    settings = profiles.parameters("transactions", "smoke", transaction_records=[10, 100_000], max_transactions=50)
    sized = {p.params["txn_records"]: p.workload.records for p in experiment.get("transactions").points(settings)
             if p.params["part"] == "cost" and p.params["txn_records"]}
    assert sized == {10: 500, 100_000: SMOKE["records"]}


def test_the_java_tool_measures_the_plain_idempotent_and_timed_points_only() -> None:
    units = plan.units("transactions", SMOKE)
    java = {(u.point.params["part"], u.point.params["transaction"]) for u in units if u.client == "java"}
    assert java == {("cost", "plain"), ("cost", "idempotent"), ("cost", "transactional, 100 ms"),
                    ("version", "transactional, 100 ms")}
    python = [u.point for u in units if u.client == "python"]
    assert {p.params["part"] for p in python} == {"cost", "version", "abort", "latency", "read-process-write"}


def test_the_version_points_set_the_clusters_transaction_version_each() -> None:
    versions = [p for p in experiment.get("transactions").points(SMOKE) if p.params["part"] == "version"]
    assert [p.workload.features for p in versions] == [{"transaction.version": 1}, {"transaction.version": 2}]
    assert [p.params["transaction_version"] for p in versions] == [1, 2]
    assert len({p.name for p in versions}) == 2 and all(p.workload.transactions is not None for p in versions)


def test_a_feature_level_the_cluster_cannot_take_is_refused_in_words() -> None:
    from kperf.kafka.features import Features

    answered = Features({}, {"transaction.version": 2}, {"transaction.version": (0, 2)})
    assert answered.unsettable("transaction.version", 1) is None and answered.unsettable("transaction.version", 0) is None
    assert answered.unsettable("transaction.version", 3) == "supports transaction.version at levels 0-2, not 3"
    assert Features({}).unsettable("transaction.version", 2) == "does not report transaction.version, so it cannot be set to 2"


def test_the_abort_point_is_read_back_not_measured_by_a_consumer() -> None:
    (abort,) = [p for p in experiment.get("transactions").points(SMOKE) if p.params["part"] == "abort"]
    assert abort.workload.aborts and abort.workload.consumers == 0 and abort.params["txn_abort"] == 0.2


def test_the_latency_points_read_as_the_producer_sends_at_both_isolation_levels() -> None:
    latency = [p for p in experiment.get("transactions").points(SMOKE) if p.params["part"] == "latency"]
    # One transactional producer read both ways: an idempotent one's first records wait for its producer id.
    assert sorted((p.params["transaction"], p.params["isolation.level"]) for p in latency) == [
        ("transactional, 100 ms", "read_committed"), ("transactional, 100 ms", "read_uncommitted")]
    assert all(p.workload.concurrent and p.workload.rate == 1000 for p in latency)


def test_an_abort_share_the_producer_cannot_follow_is_refused_before_load() -> None:
    with pytest.raises(KperfError, match="aborted must be at least 0 and below 1, got 1"):
        plan.resolve(["transactions"], "smoke", {"transactions": {"abort_share": 1.0}})


def test_read_process_write_points_process_a_paced_topic_into_one_read_committed() -> None:
    (processed,) = [p for p in experiment.get("transactions").points(SMOKE) if p.params["part"] == "read-process-write"]
    w = processed.workload
    assert w.processed == Transactions(ms=100) and w.transactions is None and w.concurrent and w.rate == 1000
    assert w.consumer_config == {"isolation.level": "read_committed"} and processed.clients == ("python",)
    from kperf import drivers
    from kperf.drivers.point import roles
    assert roles(w, drivers.get("python")) == ["producer", "processor", "consumer"]


@pytest.mark.parametrize(("rule", "config", "named"), [
    (Transactions(records=10, abort=0.1), {}, "a read-process-write processor aborts no transaction"),
    (Transactions(), {}, "one of them above 0"),
    (Transactions(ms=100), {"transactional.id": "mine"}, "leave transactional.id out"),
])
def test_a_processor_it_cannot_run_is_refused_before_load(rule: Transactions, config: dict[str, object],
                                                          named: str) -> None:
    from kperf.drivers.specs import ProcessorSpec
    with pytest.raises(KperfError, match=named):
        ProcessorSpec("b", "in", "out", 1000, rule, producer_config=config).check()


def test_a_timed_transaction_longer_than_the_transaction_timeout_is_refused() -> None:
    with pytest.raises(KperfError, match=r"60000 ms would outlast the producer's transaction.timeout.ms \(60000\)"):
        ProducerSpec("b", "t", 100, records=10, transactions=Transactions(ms=60_000)).check()
    ProducerSpec("b", "t", 100, records=10, config={"transaction.timeout.ms": 120_000},
                 transactions=Transactions(ms=60_000)).check()  # a longer time-out allows it

"""The capacity command's pure parts: the workload file's checks, the SLO margins, the rate search, the verdict."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from kperf.capacity import search, slo, verdict, workload
from kperf.drivers.payloads import DRAWS, Keys, Payloads
from kperf.errors import KperfError
from kperf.load import Fault, Transactions

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MINIMAL = """\
name: t
topic:
  partitions: 3
  replication_factor: 3
record:
  size: 100
rate:
  records_per_s: 1000
consumers:
  - group: g
duration_s: 10
slo:
  produce_latency: {percentile: 99, max_ms: 50}
"""


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_workload_is_valid(path: Path) -> None:
    found = workload.load(path, live_brokers=3)
    assert found.rate > 0 and found.duration_s > 0


def test_a_minimal_workload_and_its_defaults() -> None:
    w = workload.parse(MINIMAL)
    (s,) = w.streams
    assert (w.rate, s.partitions, s.replication_factor, s.record_size, s.producers, s.name) == (1000, 3, 3, 100, 1, "")
    assert w.slos.produce_latency == workload.LatencySlo(99.0, 50.0) and w.slos.produce_latency.stat == "p99"
    assert w.slos.no_acked_loss  # a workload with consumer groups checks for loss unless told not to
    assert s.groups == (workload.Group("g", 1, {}),) and w.catch_up is None and w.headroom.enabled


def test_rates_per_day_with_a_peak_and_in_mib_per_s() -> None:
    per_day = workload.parse(MINIMAL.replace("records_per_s: 1000", "per_day: 864000000\n  peak_factor: 3"))
    assert per_day.rate == pytest.approx(30_000)
    mib = workload.parse(MINIMAL.replace("records_per_s: 1000", "mib_per_s: 1").replace("size: 100", "size: 1024"))
    assert mib.rate == pytest.approx(1024)


def test_producer_settings_become_client_settings() -> None:
    w = workload.parse(MINIMAL + "producer:\n  acks: all\n  batch_size: 65536\n  linger_ms: 10\n  compression: lz4\n"
                       "  idempotence: true\n  settings: {queue.buffering.max.kbytes: 65536}\n")
    assert w.streams[0].producer_config == {"acks": "all", "batch.size": "65536", "linger.ms": "10", "compression.type": "lz4",
                                 "enable.idempotence": "true", "queue.buffering.max.kbytes": 65536}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("duration_s: 10", "duration_s: 10\nrat: 5"), r"<workload>:12: rat: unknown field"),
        (("partitions: 3", "partitions: 3\n  segments: 2"), r":4: topic.segments: unknown field"),
        (("partitions: 3", "partitions: three"), r":3: topic.partitions: 'three' must be of type integer"),
        (("records_per_s: 1000", "records_per_s: 0"), r":8: rate.records_per_s: 0 must be above 0"),
        (("records_per_s: 1000", "records_per_s: -5"), r":8: rate.records_per_s: -5 must be above 0"),
        (("percentile: 99", "percentile: 100"), r":13: slo.produce_latency.percentile: 100 must be below 100"),
        (("percentile: 99", "percentile: 0"), r":13: slo.produce_latency.percentile: 0 must be above 0"),
        (("percentile: 99", "percentile: 90"), r":13: slo.produce_latency.percentile: 90: kperf's latency histograms"),
        (("partitions: 3", "partitions: 0"), r":3: topic.partitions: 0 must be at least 1"),
        (("size: 100", "sizes: [{bytes: 100, weight: 0.5}, {bytes: 200, weight: 0.4}]"),
         r":6: record.sizes: the weights sum to 0.9, not 1"),
        (("size: 100", "size: 100\n  sizes: [{bytes: 100, weight: 1}]"),
         r"record: give exactly one of size, sizes, percentiles, sample_file"),
        (("size: 100", "percentiles: [{percentile: 50, bytes: 900}, {percentile: 99, bytes: 300}]"),
         r":6: record.percentiles: sizes must not fall as the percentile rises"),
        (("size: 100", "percentiles: [{percentile: 0, bytes: 100}]"), r"record.percentiles.0.percentile: 0 must be above 0"),
        (("size: 100", "sample_file: nowhere.txt"), r":6: record.sample_file: cannot read nowhere.txt"),
        (("records_per_s: 1000", "records_per_s: 1000\n  mib_per_s: 2"), r"rate: give exactly one of"),
        (("- group: g", "[]\nx:"), r"unknown field"),
        (("duration_s: 10", "duration_s: ten"), r":11: duration_s: 'ten' must be of type number"),
        (("duration_s: 10", "duration_s: 10\njoin_timeout_s: 0"), r":12: join_timeout_s: 0 must be above 0"),
        (("duration_s: 10", "duration_s: 10\njoin_timeout_s: -3"), r":12: join_timeout_s: -3 must be above 0"),
        (("duration_s: 10", "duration_s: 10\njoin_timeout_s: .inf"), r"join_timeout_s: must be a finite number"),
        (("duration_s: 10", "duration_s: 1.5"), r"duration_s: 1.5 s is shorter than the 2 s a rate needs"),
    ],
)
def test_bad_fields_are_one_line_errors_naming_field_and_line(change: tuple[str, str], message: str) -> None:
    text = MINIMAL.replace(*change)
    assert text != MINIMAL
    with pytest.raises(KperfError, match=message) as caught:
        workload.parse(text)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("duration_s: 10", "duration_s: 10\nrat: 5"), r"^<workload>:12: rat: unknown field \(did you mean 'rate'\?\); expected one of"),
        (("partitions: 3", "partitions: 3\n  partition: 2"),
         r"^<workload>:4: topic.partition: unknown field \(did you mean 'partitions'\?\)"),
        (("duration_s: 10", "duration_s: 10\nproducer: {acks: al}"),
         r"^<workload>:12: producer.acks: 'al' must be one of 0, 1, all, -1 \(did you mean 'all'\?\)$"),
        (("duration_s: 10", "duration_s: 10\nproducer: {settings: {linger.mss: 5}}"),
         r"^<workload>:12: producer: invalid producer setting: No such configuration property: \"linger.mss\""),
        (("- group: g", "- group: g\n    settings: {fetch.min.byte: 5}"),
         r"^<workload>:11: consumers.0.settings: invalid consumer setting: No such configuration property"),
    ],
)
def test_workload_file_typos_name_the_field_its_line_and_the_closest_valid_name(change: tuple[str, str], message: str) -> None:
    """Each raised as the text is parsed, with no cluster to connect to: before any connection."""
    text = MINIMAL.replace(*change)
    assert text != MINIMAL
    with pytest.raises(KperfError, match=message):
        workload.parse(text)


def test_workload_file_errors_name_the_file(tmp_path: Path) -> None:
    source = tmp_path / "load.yaml"
    source.write_text(MINIMAL.replace("acks", "ack").replace("duration_s: 10", "duration_s: 10\nproducer: {ack: all}"))
    with pytest.raises(KperfError, match=rf"^{source}:12: producer.ack: unknown field \(did you mean 'acks'\?\)"):
        workload.load(source)


def test_faults_need_a_replica_their_times_inside_their_run_and_commands_only_for_a_command_fault() -> None:
    faults = ("faults:\n  - {kind: pause, at_s: 5, for_s: 10, duration_s: 25}\n"
              "  - {kind: command, at_s: 2, for_s: 3, duration_s: 9, start: 'ssh b2 sudo systemctl stop kafka', stop: [ssh, b2, x]}\n")
    parsed = workload.parse(MINIMAL + faults).faults
    assert parsed == (workload.FaultPhase(Fault(5, 15, "pause"), 25), workload.FaultPhase(
        Fault(2, 5, "command", ("ssh", "b2", "sudo", "systemctl", "stop", "kafka"), ("ssh", "b2", "x")), 9))
    with pytest.raises(KperfError, match=r"<workload>:\d+: faults.0: a fault ending at 15 s does not end inside the 12 s of load"):
        workload.parse(MINIMAL + faults.replace("25", "12"))
    with pytest.raises(KperfError, match=r"faults.0: needs topic.replication_factor 2 or more: a killed or paused broker"):
        workload.parse(MINIMAL.replace("replication_factor: 3", "replication_factor: 1") + faults)
    with pytest.raises(KperfError, match=r"faults.0: a pause fault takes no commands"):
        workload.parse(MINIMAL + faults.replace("duration_s: 25}", "duration_s: 25, stop: x}"))
    with pytest.raises(KperfError, match=r"faults.1: a command fault needs both its start and its stop command"):
        workload.parse(MINIMAL + faults.replace(", stop: [ssh, b2, x]", ""))
    link = "faults: [{kind: latency, latency_ms: 200, at_s: 1, for_s: 2, duration_s: 5}]\n"
    assert workload.parse(MINIMAL.replace("replication_factor: 3", "replication_factor: 1") + link).faults == (
        workload.FaultPhase(Fault(1, 3, "latency", latency_ms=200), 5),)  # a slowed link needs no replica
    with pytest.raises(KperfError, match=r"faults.0: a latency fault needs a positive, finite latency_ms, got 0"):
        workload.parse(MINIMAL + link.replace("latency_ms: 200, ", ""))
    with pytest.raises(KperfError, match=r"broker_failure: is now a list of faults: faults: \[\{kind: kill"):
        workload.parse(MINIMAL + "broker_failure: {kill_at_s: 5, restart_at_s: 15, duration_s: 25}\n")


def test_replication_above_the_live_brokers_is_refused_with_its_line() -> None:
    workload.parse(MINIMAL, live_brokers=3)
    with pytest.raises(KperfError, match=r"<workload>:4: topic.replication_factor: 3 is above the cluster's 2 live broker"):
        workload.parse(MINIMAL, live_brokers=2)


def test_slos_that_need_a_consumer_group_and_bad_yaml() -> None:
    alone = MINIMAL.replace("consumers:\n  - group: g\n", "")
    assert not workload.parse(alone).slos.no_acked_loss
    with pytest.raises(KperfError, match="slo.consumer_lag: needs at least one consumer group"):
        workload.parse(alone + "  consumer_lag: {max_records: 10}\n")
    with pytest.raises(KperfError, match=r"<workload>:2: not valid YAML"):
        workload.parse("a: [1,\nb: }")
    with pytest.raises(KperfError, match=r"cannot read workload file /nonexistent.yaml"):
        workload.load(Path("/nonexistent.yaml"))


def test_record_sizes_from_percentiles_and_from_a_sample_file(tmp_path: Path) -> None:
    given = "percentiles: [{percentile: 50, bytes: 200}, {percentile: 90, bytes: 1000}, {percentile: 100, bytes: 4000}]"
    w = workload.parse(MINIMAL.replace("size: 100", given))
    (s,) = w.streams
    assert s.sizes == ((200, 0.5), (600, 0.4), (2500, 0.1)) and s.record_size == 2500  # each band at its middle
    assert sum(weight for _, weight in s.sizes) == pytest.approx(1)
    open_top = workload.parse(MINIMAL.replace("size: 100", "percentiles: [{percentile: 99, bytes: 300}]"))
    assert open_top.streams[0].sizes == ((300, 1.0),)  # the 1% above the last percentile at its size
    (tmp_path / "sizes.txt").write_text("100\n100\n300\n\n100\n")  # e.g. one line per record of a real topic
    source = tmp_path / "load.yaml"
    source.write_text(MINIMAL.replace("size: 100", "sample_file: sizes.txt"))  # found beside the workload file
    assert workload.load(source).streams[0].sizes == ((100, 0.75), (300, 0.25))
    (tmp_path / "sizes.txt").write_text("100\nabc\n")
    with pytest.raises(KperfError, match=r"load.yaml:6: record.sample_file: .*sizes.txt:2: 'abc' is not a record size"):
        workload.load(source)


TOPICS = """\
name: shop
producer: {acks: all, linger_ms: 5}
record: {size: 500}
consumers: [{group: audit}]
topics:
  - name: orders
    partitions: 6
    replication_factor: 3
    rate: {records_per_s: 300}
    consumers: [{group: billing, consumers: 2}, {group: analytics}]
  - name: clicks
    rate: {mib_per_s: 1}
    record: {size: 1024}
    keys: {count: 50}
    producer: {processes: 2, acks: "1", settings: {queue.buffering.max.kbytes: 4096}}
duration_s: 10
slo:
  produce_latency: {percentile: 99, max_ms: 50}
"""


def test_several_topics_each_with_its_own_layout_rate_and_groups_over_the_files_defaults() -> None:
    w = workload.parse(TOPICS)
    orders, clicks = w.streams
    assert (orders.name, orders.partitions, orders.replication_factor, orders.rate, orders.record_size) == (
        "orders", 6, 3, 300, 500)
    assert [g.name for g in orders.groups] == ["billing", "analytics"] and orders.processes == 4
    assert orders.producer_config == {"acks": "all", "linger.ms": "5"}
    # clicks: its own record, keys, rate (1 MiB/s of 1 KiB records) and producer fields over the file's
    assert (clicks.partitions, clicks.record_size, clicks.rate, clicks.keys, clicks.producers) == (1, 1024, 1024, 50, 2)
    assert clicks.producer_config == {"acks": "1", "linger.ms": "5", "queue.buffering.max.kbytes": 4096}
    assert [g.name for g in clicks.groups] == ["audit"]  # the file's groups, read as each topic's own
    assert w.rate == 1324 and w.processes == 4 + 3 and w.share(orders) == pytest.approx(300 / 1324)
    assert w.mean_record_size == pytest.approx((300 * 500 + 1024 * 1024) / 1324)
    assert w.describe().startswith("1,324 records/s (1.1 MiB/s) to 2 topics: orders: 300 records/s of 500 B")
    assert workload.parse(TOPICS).slos.no_acked_loss  # groups read the records back


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("name: shop\n", "name: shop\ntopic: {partitions: 2}\n"), r":2: topic: with topics, each topic gives its own layout"),
        (("name: shop\n", "name: shop\nrate: {records_per_s: 5}\n"), r":2: rate: with topics, each topic gives its own rate"),
        (("name: clicks", "name: orders"), r":5: topics: two topics have the same name"),
        (("name: clicks", "name: cl/icks"), r":11: topics.1.name: 'cl/icks' must be a topic name: letters, digits"),
        (("    rate: {records_per_s: 300}\n", ""), r":6: topics.0: 'rate' is a required property"),
        (("record: {size: 500}\n", ""), r":5: topics.0: 'record' is a required property"),
        (("partitions: 6", "partitions: 0"), r":7: topics.0.partitions: 0 must be at least 1"),
        (("{records_per_s: 300}", "{records_per_s: -1}"), r":9: topics.0.rate.records_per_s: -1 must be above 0"),
        (("{group: billing, consumers: 2}", "{group: analytics}"), r":10: topics.0.consumers: two groups have the same name"),
        (("keys: {count: 50}", "keys: {count: 0}"), r":14: topics.1.keys.count: 0 must be at least 1"),
    ],
)
def test_bad_topics_are_one_line_errors_naming_field_and_line(change: tuple[str, str], message: str) -> None:
    text = TOPICS.replace(*change, 1)
    assert text != TOPICS
    with pytest.raises(KperfError, match=message) as caught:
        workload.parse(text)
    assert "\n" not in str(caught.value)
    with pytest.raises(KperfError, match=r":8: topics.0.replication_factor: 3 is above the cluster's 2 live broker"):
        workload.parse(TOPICS, live_brokers=2)


def test_a_trials_slos_over_several_topics_are_each_at_its_worst_topic_and_losses_summed() -> None:
    orders = [slo.SloValue("produce latency p99", 50, 20, "ms", note="n"), slo.SloValue(slo.LOSS, 0, 0, "records")]
    clicks = [slo.SloValue("produce latency p99", 50, 70, "ms", note="n"), slo.SloValue(slo.LOSS, 0, 3, "records")]
    latency, lost = slo.combine(["orders", "clicks"], [orders, clicks])
    assert (latency.value, latency.met, latency.topic) == (70, False, "clicks")
    found = {"workload": {"name": "shop", "describe": "", "target_rate": 1.0}, "sustain": [latency.as_json()]}
    assert ("sustain: produce latency p99 (clicks)", "70 <= 50 ms", "MISSED") in verdict.table(found)
    assert lost.value == 3 and lost.note.endswith("(by topic: orders 0, clicks 3)")
    assert slo.combine([""], [orders]) == orders
    unverified = [slo.SloValue(slo.LOSS, 0, math.nan, "records")]
    assert math.isnan(slo.combine(["a", "b"], [unverified, [orders[1]]])[0].value)  # not verified anywhere: not met


def test_size_distribution_and_zipf_keys_in_the_producer() -> None:
    sizes = Payloads("random", 2000, sizes=[(200, 0.7), (2000, 0.3)])
    drawn = [len(sizes.next()) for _ in range(20_000)]
    assert set(drawn) == {200, 2000} and drawn.count(200) / len(drawn) == pytest.approx(0.7, abs=0.02)
    keys = Keys(100, zipf_s=1.1)
    seen = [keys.next() for _ in range(DRAWS)]
    hottest = seen.count(b"key-1") / len(seen)
    assert hottest == pytest.approx(1 / sum(k ** -1.1 for k in range(1, 101)), rel=0.05)  # Zipf: key 1's share
    assert Keys().next() is None


def test_keep_up_stands_in_for_a_missing_produce_latency_slo() -> None:
    from kperf.results import Measurement

    produced = Measurement("producer", "python", records=900, bytes=900, seconds=1.0)
    without = workload.parse(MINIMAL.replace("slo:\n  produce_latency: {percentile: 99, max_ms: 50}\n", ""))
    (kept,) = [v for v in slo.evaluate(without.slos, slo.StreamRun(without.streams[0], 1000, produced, [], 1000))
               if v.name == slo.KEEP_UP]
    assert kept.value == 900 and not kept.met
    with_latency = workload.parse(MINIMAL)
    assert slo.KEEP_UP not in {v.name for v in slo.evaluate(with_latency.slos, slo.StreamRun(with_latency.streams[0], 1000,
                                                                                             produced, [], 1000))}


def test_a_processor_that_stopped_early_leaves_its_groups_loss_unverified_not_lost() -> None:
    from kperf.results import Measurement, Verification

    produced = Measurement("producer", "python", records=600, bytes=600, seconds=2.0)
    # The processing group read all its processor wrote, 132 of the 600, partitions apart: gaps in the sequence
    gaps = Measurement("consumer", "python", records=132, bytes=132, seconds=2.0, verification=Verification(600, 468, 0))
    whole = Measurement("consumer", "python", records=600, bytes=600, seconds=2.0, verification=Verification(600, 0, 0))
    stopped = slo.loss(produced, [whole, gaps], processed=[None, 132])
    assert math.isnan(stopped.value) and not stopped.met
    assert stopped.note == "group 2's processor wrote 132 of 600 records before it stopped: loss not verified"
    assert slo.loss(produced, [whole, gaps], processed=[None, 600]).value == 468  # it wrote them all: lost after it
    assert slo.loss(produced, [whole, whole], processed=[None, 600]).value == 0


def test_margins() -> None:
    assert slo.SloValue("produce latency p99", 50, 25, "ms").margin == pytest.approx(math.log(0.5))
    assert slo.SloValue(slo.LOSS, 0, 1, "records").margin == math.inf
    assert slo.SloValue(slo.LOSS, 0, 0, "records").margin == -math.inf
    assert slo.SloValue(slo.LOSS, 0, math.nan, "records").margin == math.inf  # not verified: not met
    kept_up = slo.SloValue(slo.KEEP_UP, 950, 990, "records/s")  # 1% short of 1,000: 5x inside the 5% allowed
    assert kept_up.met and kept_up.margin == pytest.approx(math.log(0.2))
    assert slo.SloValue(slo.KEEP_UP, 950, 800, "records/s").margin == pytest.approx(math.log(4))
    assert slo.planned(1000, 2.5, 3) == 3 * 834
    assert slo.SloValue(slo.UNSENT, 0, 10, "records").margin == math.inf


def simulated(limit: float, noise: float, seed: int) -> search.Limit:
    """A system whose worst SLO is at its bound exactly at ``limit``, three times as sensitive as rate, plus noise."""
    rng = random.Random(seed)
    return search.search(lambda rate: 3 * math.log(rate / limit) + rng.gauss(0, noise), 10_000)


def test_the_search_converges_to_a_known_limit_within_its_interval() -> None:
    rng = random.Random(1)
    limits = [rng.uniform(700, 150_000) for _ in range(200)]
    found = [simulated(limit, 0.1, seed) for seed, limit in enumerate(limits)]
    inside = [f.low is not None and f.high is not None and f.low <= limit <= f.high for f, limit in zip(found, limits)]
    assert sum(inside) >= 0.95 * len(limits)
    assert all(f.trials <= 12 for f in found)
    assert sorted(f.high / f.low for f in found if f.low and f.high)[len(found) // 2] <= 1.5


def test_the_search_reports_only_what_it_confirmed() -> None:
    for seed in range(100):
        found = simulated(random.Random(seed).uniform(100, 1e6), 0.3, seed)
        outcomes = {(d.rate, d.outcome) for d in found.decisions}
        assert found.low is None or (found.low, search.HOLDS) in outcomes
        assert found.high is None or (found.high, search.FAILS) in outcomes
        assert found.low is None or found.high is None or found.low < found.high


def test_the_search_says_when_the_limit_is_out_of_range_or_unclear() -> None:
    far_above = search.search(lambda rate: -5.0, 1000, max_factor=4)
    assert (far_above.low, far_above.high) == (4000, None) and "no rate was confirmed to fail" in far_above.note
    far_below = search.search(lambda rate: 5.0, 1000, max_factor=4)
    assert (far_below.low, far_below.high) == (None, 250) and "no rate was confirmed to hold" in far_below.note
    coin = random.Random(3)  # pure noise at every rate: never a confirmed decision, and a bounded number of trials
    noise = search.search(lambda rate: coin.gauss(0, 0.3), 1000, max_trials=9)
    assert noise.trials <= 9 and all(d.outcome == search.UNCLEAR for d in noise.decisions)
    assert noise.low is None and noise.high is None
    lost = search.decide(lambda rate: math.inf, 1000, repeats=3, budget=3)
    assert lost.outcome == search.FAILS and len(lost.margins) == 1


def test_a_rate_met_again_after_an_unclear_decision_pools_its_trials() -> None:
    """An unclear target is bracketed by its half and its double, whose middle is the target again: its first three
    trials, unclear alone, and three more, unclear alone too, decide together (the SLO failed, narrowly)."""
    at_target = iter([0.10, -0.02, 0.12, 0.09, 0.03, 0.10])

    def measure(rate: float) -> float:
        return next(at_target) if rate == 1000 else math.log(rate / 1000) * 4

    found = search.search(measure, 1000, max_trials=12)
    at = [d for d in found.decisions if d.rate == 1000]
    assert [d.outcome for d in at] == [search.UNCLEAR, search.FAILS] and [len(d.margins) for d in at] == [3, 3]
    assert found.high == 1000 and 500 <= found.low < 1000  # the narrowing goes on below it
    alone = iter([0.09, 0.03, 0.10])
    assert search.decide(lambda rate: next(alone), 1000, repeats=3, budget=3).outcome == search.UNCLEAR


def test_the_verdict_reads_as_a_sentence() -> None:
    found = {
        "workload": {"name": "orders", "target_rate": 1000.0, "describe": "1,000 records/s"},
        "sustain": [{"name": "produce latency p99", "bound": 50.0, "value": 12.0, "unit": "ms", "low": math.nan,
                     "high": math.nan, "note": "", "met": True}],
        "headroom": {"low": 4000.0, "high": 5657.0, "target": 1000.0, "trials": 7, "note": "narrowed",
                     "failed": ["produce latency p99"], "limited_by": ["host CPU", "the host's 2 cores were 90% busy"]},
        "catch_up": {"caught_up": False, "seconds": math.nan, "timeout_s": 30.0, "backlog_records": 50_000,
                     "sentence": "did not catch up"},
    }
    text = verdict.sentence(found)
    assert text.startswith("Yes: this cluster carried orders at its target of 1,000 records/s with every SLO met")
    assert "every SLO still held at 4,000 records/s (headroom x4.00 to x5.66)" in text and "produce latency p99 failing first" in text
    assert "did not catch up with a backlog of 50,000 records within the 30 s time-out" in text
    rows = dict((what, (measured, why)) for what, measured, why in verdict.table(found))
    assert rows["sustain: produce latency p99"] == ("12 <= 50 ms", "met")
    assert rows["sustainable limit"][0] == "between 4,000 and 5,657 records/s"
    assert rows["what limited it"] == ("host CPU", "the host's 2 cores were 90% busy")
    assert verdict.headroom_text({"low": 4000.0, "high": None, "target": 1000.0}) == "at least x4.00"
    assert verdict.headroom_text({"low": None, "high": 500.0, "target": 1000.0}) == "below x0.50"
    found["faults"] = [{"kind": "pause", "for_s": 10.0, "lost": 0.0, "acked": 18_000, "no_ack_s": 8.4, "fault_at_s": 5.0,
                        "fault_end_s": 15.1, "isr_recovery_s": math.nan, "recovery_s": 2.0, "slos": []}]
    assert verdict.sentence(found).endswith("; with a broker paused for 10 s it lost none of the 18,000 acknowledged "
                                            "records, its producers waiting at most 8.4 s for an acknowledgement.")
    assert dict((w, m) for w, m, _ in verdict.table(found))["a broker paused for 10 s"].endswith(
        "every ISR full again never (within the wait); producers back at their calm latency 2.0 s after it")
    del found["faults"]
    found["sustain"][0]["met"] = False
    found["headroom"].update(low=250.0, high=500.0)
    text = verdict.sentence(found)
    assert text.startswith("No: at its target of 1,000 records/s this cluster missed produce latency p99; every SLO held "
                           "at 250 records/s but not at 500 (headroom x0.25 to x0.50)")
    found["headroom"].update(low=None)
    assert "; it missed an SLO at 500 records/s and no rate the search tried was confirmed to meet every SLO" in (
        verdict.sentence(found))


def test_the_verdict_says_which_trials_other_load_on_the_host_disturbed() -> None:
    found = {"workload": {"name": "orders", "target_rate": 1000.0}, "sustain": [], "trials": [
        {"phase": "headroom", "rate": 1000.0, "disturbed": None, "counted": True},
        {"phase": "headroom", "rate": 2000.0, "disturbed": "disturbed: ...", "counted": False},
        {"phase": "headroom", "rate": 2000.0, "disturbed": "disturbed: ...", "counted": False},
        {"phase": "headroom", "rate": 2000.0, "disturbed": "disturbed: ...", "counted": True},  # the last attempt
        {"phase": "catch-up", "rate": 1000.0}]}  # verdicts before 2026-11-28 have neither key
    text = verdict.sentence(found)
    assert text.endswith("; 2 attempt(s) that other load on this host disturbed were discarded and measured again; "
                         "1 trial(s) count though other load on this host disturbed them: read those numbers with care.")
    found["trials"] = found["trials"][:2]
    assert verdict.sentence(found).endswith("every SLO met; 1 attempt(s) that other load on this host disturbed were "
                                            "discarded and measured again.")
    found["trials"] = found["trials"][:1]
    assert verdict.sentence(found).endswith("every SLO met.")


def test_an_slo_reads_with_the_interval_of_its_windows() -> None:
    value = slo.SloValue("produce latency p99", 50, 6005.2, "ms", 1450.0, 5170.0)
    assert value.text() == "6,005 <= 50 ms (its windows: 1,450-5,170)"
    assert slo.SloValue(slo.LOSS, 0, math.nan, "records").text() == "not measured <= 0 records"
    mean, low, high = slo.window_interval([10, 11, 9, 10, 10, 12, 11, 12, 11, 12, 8, 9, 8, 9, 10, math.nan])
    assert mean == pytest.approx(10.13, abs=0.01) and low < mean < high
    assert math.isnan(slo.window_interval([10.0] * 5)[1])  # one batch: no interval


def test_a_transactional_producer_and_groups_naming_their_protocol_and_isolation() -> None:
    w = workload.parse(MINIMAL.replace("  - group: g", "  - {group: g, protocol: consumer, isolation: read_committed}\n"
                                       "  - {group: h, settings: {fetch.min.bytes: 5}}")
                       + "producer:\n  acks: all\n  transactions: {records: 500}\n")
    (s,) = w.streams
    assert s.transactions == Transactions(records=500)
    assert [g.settings for g in s.groups] == [{"group.protocol": "consumer", "isolation.level": "read_committed"},
                                               {"fetch.min.bytes": 5}]
    timed = workload.parse(MINIMAL + "producer: {transactions: {ms: 100}}\n")
    assert timed.streams[0].transactions == Transactions(ms=100)


def test_a_processing_group_is_a_processor_and_its_reader() -> None:
    w = workload.parse(MINIMAL.replace("  - group: g", "  - {group: g, process: {ms: 100}, protocol: consumer}"))
    (s,) = w.streams
    (g,) = s.groups
    assert g.processed == Transactions(ms=100) and g.settings == {"group.protocol": "consumer"}
    assert s.processes == 1 + 2 and w.processes == 3  # the producer, the processor and the reader of what it wrote


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("duration_s: 10", "duration_s: 10\nproducer: {transactions: {}}"),
         r"^<workload>:12: producer.transactions: a transaction ends after a number of records or of milliseconds"),
        (("duration_s: 10", "duration_s: 10\nproducer: {transactions: {records: 10, ms: 5}}"),
         r"producer.transactions: a transaction ends after .* \(got 10 records and 5 ms per transaction\)$"),
        (("duration_s: 10", "duration_s: 10\nproducer: {transactions: {records: 0}}"),
         r"^<workload>:12: producer.transactions.records: 0 must be at least 1$"),
        (("duration_s: 10", "duration_s: 10\nproducer: {idempotence: false, transactions: {ms: 100}}"),
         r"producer.transactions: a transactional producer is idempotent"),
        (("- group: g", "- {group: g, protocol: consumers}"),
         r"^<workload>:10: consumers.0.protocol: 'consumers' must be one of classic, consumer \(did you mean 'consumer'\?\)$"),
        (("- group: g", "- {group: g, isolation: committed}"),
         r"consumers.0.isolation: 'committed' must be one of read_uncommitted, read_committed"),
        (("- group: g", "- {group: g, isolation: read_committed, settings: {isolation.level: read_committed}}"),
         r"consumers.0.settings.isolation.level: given twice: also as isolation$"),
        (("- group: g", "- {group: g, share: true, protocol: consumer}"),
         r"consumers.0.protocol: is a consumer group's: a share group has no such setting$"),
        (("- group: g", "- {group: g, process: {}}"),
         r"^<workload>:10: consumers.0.process: a transaction ends after a number of records or of milliseconds"),
        (("- group: g", "- {group: g, consumers: 2, process: {records: 10}}"),
         r"consumers.0.consumers: a processing group is one processor: leave consumers out \(or 1\)$"),
        (("- group: g", "- {group: g, share: true, process: {records: 10}}"),
         r"consumers.0.process: is a consumer group's: a share group cannot commit offsets in a transaction$"),
    ],
)
def test_bad_transactions_protocols_and_isolation_levels_are_one_line_errors(change: tuple[str, str], message: str) -> None:
    text = MINIMAL.replace(*change)
    assert text != MINIMAL
    with pytest.raises(KperfError, match=message) as caught:
        workload.parse(text)
    assert "\n" not in str(caught.value)

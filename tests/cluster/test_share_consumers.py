"""Share consumers (KIP-932) against real Kafka: more members than partitions deliver every record, releases come
back as redeliveries, rejects are archived, and every record sent ends accepted or archived, verified by sequence;
Kafka's ShareConsumerPerformance runs as kperf's java client, and what it cannot do is refused before load."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import ShareConsumer

from kperf import drivers
from kperf.drivers.consumer import consume
from kperf.drivers.producer import produce
from kperf.drivers.specs import ConsumerSpec, ProducerSpec
from kperf.kafka import clients, groups, share_groups, topics
from kperf.kafka.release import ensure_kafka
from kperf.load import Sharing
from kperf.results import Verification
from tests.helpers import kperf

pytestmark = pytest.mark.cluster
RECORDS = 20_000


def test_more_share_consumers_than_partitions_deliver_every_record_and_end_each_once(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        assert produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS)).records == RECORDS
        got = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, consumers=3, idle_timeout_s=5, share=Sharing()))
    assert got.records == RECORDS and got.verification == Verification(expected=RECORDS, missing=0, duplicated=0)
    assert got.errors == {} and got.measures["share_deliveries"] >= RECORDS and got.measures["share_archived"] == 0


def test_released_records_come_back_and_rejected_ones_are_archived(bootstrap: str) -> None:
    sharing = Sharing("explicit", release=0.1, reject=0.05)
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS))
        got = consume(ConsumerSpec(bootstrap, topic, records=RECORDS, consumers=2, idle_timeout_s=5, share=sharing))
    m = got.measures
    assert got.errors == {} and got.verification == Verification(expected=RECORDS, missing=0, duplicated=0)
    # Each released record is delivered again (and accepted then); each rejected one is archived, never again.
    assert m["share_released"] > 0 and m["share_redeliveries"] >= m["share_released"]
    assert m["share_rejected"] > 0 and m["share_archived"] == m["share_rejected"]
    assert m["share_deliveries"] - m["share_redeliveries"] <= RECORDS


def test_kperf_consume_share_records_the_groups_settings_and_what_it_answered(tmp_path: Path, bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        # Enough records for a rate (a second) at what three explicit members answer here (some 80,000 a second).
        produce(ProducerSpec(bootstrap, topic, 100, records=10 * RECORDS))
        result = kperf(tmp_path, "consume", "--bootstrap", bootstrap, "--topic", topic, "--records", str(10 * RECORDS),
                       "--share", "--consumers", "3", "--ack", "explicit", "--reject", "0.1",
                       "--group-setting", "share.delivery.count.limit=3", "--window", "0.1", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads(result.stdout)
    assert (record["param.share_ack"], record["param.share_reject"], record["param.share.delivery.count.limit"]) == (
        "explicit", 0.1, "3")
    assert record["param.share.auto.offset.reset"] == "earliest" and record["verified"] is True
    assert record["share_archived"] == record["share_rejected"] > 0


def share_groups_held(bootstrap: str) -> set[str]:
    """The share groups the cluster holds, as Kafka's own tool lists them."""
    argv, env = ensure_kafka().command("share-groups", ["--bootstrap-server", bootstrap.split(",")[0], "--list"])
    listed = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    return set(listed.stdout.split())


def test_kafkas_tool_lists_a_share_group_while_it_exists(bootstrap: str) -> None:
    group = groups.fresh_name()
    # The group deleted before its topic, as every share consumer of kperf's does.
    with topics.temporary(bootstrap, "share", 1, 1) as topic, \
            share_groups.configured(bootstrap, group, {"share.auto.offset.reset": "earliest"}):
        produce(ProducerSpec(bootstrap, topic, 100, records=1000))
        reader = ShareConsumer(clients.client_config(bootstrap, {"group.id": group}))
        reader.subscribe([topic])
        deadline = time.monotonic() + 30
        while not list(reader.poll(0.2)):
            assert time.monotonic() < deadline, "no share delivery within 30 s"
        assert group in share_groups_held(bootstrap)
        reader.close()
    assert group not in share_groups_held(bootstrap)


def test_the_java_tool_reads_with_more_members_than_partitions_and_leaves_no_group(bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        produce(ProducerSpec(bootstrap, topic, 100, records=RECORDS))
        java = drivers.get("java")
        spec = ConsumerSpec(bootstrap, topic, records=RECORDS, consumers=3, share=Sharing())
        java.check_consumer(spec)
        before = share_groups_held(bootstrap)
        got = java.consume(spec)
        after = share_groups_held(bootstrap)
    # It counts deliveries (a record whose lock ran out counts again): at least every record, over its own clock.
    assert got.client == "java" and got.records >= RECORDS and got.measures["share_deliveries"] == got.records
    assert got.seconds > 0 and got.bytes >= RECORDS * 100 - 53 and got.failure is None  # MiB printed to 4 decimals
    # Its rate runs from the group's first delivery, as the Python share consumer's: the join is recorded apart.
    assert got.measures["rebalance_ms"] > 0 and got.measures["fetch_ms"] == pytest.approx(got.seconds * 1000)
    assert after == before  # the share group kperf made for it is gone


def test_the_java_tool_is_refused_explicit_acks_and_a_topic_short_of_records_before_load(tmp_path: Path,
                                                                                         bootstrap: str) -> None:
    with topics.temporary(bootstrap, "share", 2, 1) as topic:
        produce(ProducerSpec(bootstrap, topic, 100, records=1000))
        common = ("consume", "--bootstrap", bootstrap, "--topic", topic, "--client", "java", "--share")
        explicit = kperf(tmp_path / "explicit", *common, "--records", "1000", "--ack", "explicit")
        short = kperf(tmp_path / "short", *common, "--records", "2000")
    assert explicit.returncode == short.returncode == 1
    assert explicit.stderr.strip().splitlines() == [
        "kperf: error: --ack explicit is not supported with --client java (ShareConsumerPerformance accepts every "
        "record implicitly): use the python client"]
    assert short.stderr.strip().splitlines() == [
        f"kperf: error: topic {topic} holds 1,000 records, fewer than the 2,000 asked: ShareConsumerPerformance "
        "reads records already there (produce them first, or ask fewer)"]
    assert not (tmp_path / "short" / "adhoc").exists()  # nothing recorded
